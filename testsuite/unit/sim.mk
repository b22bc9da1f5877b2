# dlsched-sim's engine pieces: what policies see of jobs' lengths under --estimates predicted
check_PROGRAMS += testsuite/unit/test_estimates
TESTS += testsuite/unit/test_estimates
testsuite_unit_test_estimates_SOURCES = testsuite/unit/test_estimates.cpp testsuite/unit/check_main.h
testsuite_unit_test_estimates_CPPFLAGS = $(UNIT_CPPFLAGS) -I$(top_srcdir) $(JANSSON_CFLAGS)
testsuite_unit_test_estimates_LDADD = contribs/sim/libsim.la $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# dlsched-sim's fairness figures (--quotas) on hand-computed timelines
check_PROGRAMS += testsuite/unit/test_sim_fairness
TESTS += testsuite/unit/test_sim_fairness
testsuite_unit_test_sim_fairness_SOURCES = testsuite/unit/test_sim_fairness.cpp testsuite/unit/check_main.h testsuite/unit/temp_path.h
testsuite_unit_test_sim_fairness_CPPFLAGS = $(UNIT_CPPFLAGS) -I$(top_srcdir)
testsuite_unit_test_sim_fairness_LDADD = contribs/sim/libsim.la $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)

# The learned policy's guard: switching rule, snapshots, the engine following the better replay
check_PROGRAMS += testsuite/unit/test_guard
TESTS += testsuite/unit/test_guard
testsuite_unit_test_guard_SOURCES = testsuite/unit/test_guard.cpp testsuite/unit/check_main.h
testsuite_unit_test_guard_CPPFLAGS = $(UNIT_CPPFLAGS) -I$(top_srcdir)
testsuite_unit_test_guard_LDADD = contribs/sim/libsim.la $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
