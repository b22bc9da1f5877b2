# make check: unit tests (Check), simulator golden tests, the layering check.
TESTS += testsuite/check-layering.sh
EXTRA_DIST += testsuite/check-layering.sh

if HAVE_CHECK
include testsuite/unit/local.mk
endif
include testsuite/sim/local.mk
