# Model catalog, workload readers and builder
check_PROGRAMS += testsuite/unit/test_workload
TESTS += testsuite/unit/test_workload
testsuite_unit_test_workload_SOURCES = testsuite/unit/test_workload.cpp
testsuite_unit_test_workload_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_workload_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
EXTRA_DIST += testsuite/data
