#!/usr/bin/env bash
# dlsched.conf(5) is written by hand; the key table (common/config/keys.cpp) is the truth. Every key
# `dlsched-sim --print-config` prints from that table has an entry in doc/man/dlsched.conf.5 (an
# item tag: a .B, .BR or .BI line naming it; keys that share an entry share the tag).
set -u
top="${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${abs_top_builddir:-$top/_build}"
sim="$build/contribs/sim/dlsched-sim"
man="$top/doc/man/dlsched.conf.5"
[ -x "$sim" ] || { echo "Bail out! $sim not built"; exit 99; }
keys=$("$sim" --print-config | sed -n 's/^\([A-Za-z][A-Za-z0-9]*\)=.*/\1/p')
[ -n "$keys" ] || { echo "Bail out! dlsched-sim --print-config printed no keys"; exit 99; }
n=0 fails=0
for k in $keys; do
	n=$((n + 1))
	# An item's tag: a .B/.BR/.BI line that names the key (several keys may share one tag).
	if grep -Eq "^\.B[IR]? .*(^|[ ,])$k(=|\\\\f| |$)" "$man" || grep -Eq "^\.B[IR]? +$k\b" "$man"; then
		echo "ok $n - $k"
	else
		echo "not ok $n - $k has no entry in doc/man/dlsched.conf.5"
		fails=$((fails + 1))
	fi
done
echo "1..$n"
exit $((fails > 0))
