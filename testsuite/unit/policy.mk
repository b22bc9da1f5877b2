# Baseline policies on hand-computed cases
check_PROGRAMS += testsuite/unit/test_policy
TESTS += testsuite/unit/test_policy
testsuite_unit_test_policy_SOURCES = testsuite/unit/test_policy.cpp testsuite/unit/view_builder.h testsuite/unit/check_main.h
testsuite_unit_test_policy_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_policy_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# Preemption by priority class (overhead, preempt-qos) and the overhead estimator
check_PROGRAMS += testsuite/unit/test_preemption
TESTS += testsuite/unit/test_preemption
testsuite_unit_test_preemption_SOURCES = testsuite/unit/test_preemption.cpp testsuite/unit/view_builder.h testsuite/unit/check_main.h
testsuite_unit_test_preemption_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_preemption_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# Deadline admission, least-slack ordering, deadline-autoscale allocation
check_PROGRAMS += testsuite/unit/test_deadline
TESTS += testsuite/unit/test_deadline
testsuite_unit_test_deadline_SOURCES = testsuite/unit/test_deadline.cpp testsuite/unit/view_builder.h testsuite/unit/check_main.h
testsuite_unit_test_deadline_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_deadline_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# Capacity loaning (aryl) and the knapsack allocation (mckp)
check_PROGRAMS += testsuite/unit/test_loaning
TESTS += testsuite/unit/test_loaning
testsuite_unit_test_loaning_SOURCES = testsuite/unit/test_loaning.cpp testsuite/unit/view_builder.h testsuite/unit/check_main.h
testsuite_unit_test_loaning_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_loaning_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# FairnessPolicy=: quota lending and reclaim, fair-share
check_PROGRAMS += testsuite/unit/test_fairness
TESTS += testsuite/unit/test_fairness
testsuite_unit_test_fairness_SOURCES = testsuite/unit/test_fairness.cpp testsuite/unit/view_builder.h testsuite/unit/check_main.h
testsuite_unit_test_fairness_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_fairness_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
