# The ingest protocol's batches (common/profiledb/records)
check_PROGRAMS += testsuite/unit/test_records
TESTS += testsuite/unit/test_records
testsuite_unit_test_records_SOURCES = testsuite/unit/test_records.cpp
testsuite_unit_test_records_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_records_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
