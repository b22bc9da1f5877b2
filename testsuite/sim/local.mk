# dlsched-sim golden tests: tiny traces with hand-computed results, determinism, exit codes. TAP:
# each check is its own result (automake's tap-driver.sh, copied into build-aux by ./bootstrap).
TEST_EXTENSIONS = .tap
TAP_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TESTS += testsuite/sim/golden.tap
EXTRA_DIST += testsuite/sim/golden.tap testsuite/sim/check_json.py testsuite/sim/data
# Every tool's and script's options: given twice, exclusive, a value missing (about 10 s, no cluster).
TESTS += testsuite/sim/test-options.sh
EXTRA_DIST += testsuite/sim/test-options.sh
TESTS_ENVIRONMENT = abs_top_srcdir='$(abs_top_srcdir)' abs_top_builddir='$(abs_top_builddir)' \
	dlsched_sanitize_flags='$(SANITIZE_FLAGS)'
