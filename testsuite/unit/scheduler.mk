# Scheduler::decide() with test-only policies
check_PROGRAMS += testsuite/unit/test_scheduler
TESTS += testsuite/unit/test_scheduler
testsuite_unit_test_scheduler_SOURCES = testsuite/unit/test_scheduler.cpp
testsuite_unit_test_scheduler_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_scheduler_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
