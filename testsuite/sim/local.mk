# dlsched-sim golden tests: tiny traces with hand-computed results, determinism, exit codes.
TESTS += testsuite/sim/golden.sh
EXTRA_DIST += testsuite/sim/golden.sh testsuite/sim/check_json.py testsuite/sim/data
# Every tool's and script's options: given twice, exclusive, a value missing (about 10 s, no cluster).
TESTS += testsuite/sim/test-options.sh
EXTRA_DIST += testsuite/sim/test-options.sh
TESTS_ENVIRONMENT = abs_top_srcdir='$(abs_top_srcdir)' abs_top_builddir='$(abs_top_builddir)' \
	dlsched_sanitize_flags='$(SANITIZE_FLAGS)'
