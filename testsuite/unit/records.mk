# The ingest protocol's batches (common/profiledb/records)
check_PROGRAMS += testsuite/unit/test_records
TESTS += testsuite/unit/test_records
testsuite_unit_test_records_SOURCES = testsuite/unit/test_records.cpp
testsuite_unit_test_records_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_records_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# A batch's claims against what Slurm knows of the job (common/profiledb/claims)
check_PROGRAMS += testsuite/unit/test_claims
TESTS += testsuite/unit/test_claims
testsuite_unit_test_claims_SOURCES = testsuite/unit/test_claims.cpp
testsuite_unit_test_claims_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_claims_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
