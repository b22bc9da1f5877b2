# (model types are covered by test_workload and test_policy)
# The one parser of a job's dlsched metadata (comment words, spank/dlsched's environment)
check_PROGRAMS += testsuite/unit/test_metadata
TESTS += testsuite/unit/test_metadata
testsuite_unit_test_metadata_SOURCES = testsuite/unit/test_metadata.cpp testsuite/unit/check_main.h
testsuite_unit_test_metadata_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_metadata_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
