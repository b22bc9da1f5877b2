#!/bin/sh
# Stands in for the Check unit tests when configure did not find Check: `make check` must not pass
# quietly without them.
echo "FAIL: the unit tests were not built: Check is missing (apt-get install check, or scripts/install-deps), then re-run configure"
exit 1
