# The job-profile database (SQLite)
check_PROGRAMS += testsuite/unit/test_profiledb
TESTS += testsuite/unit/test_profiledb
testsuite_unit_test_profiledb_SOURCES = testsuite/unit/test_profiledb.cpp testsuite/unit/temp_path.h
testsuite_unit_test_profiledb_CPPFLAGS = $(UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
testsuite_unit_test_profiledb_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# Experience rows for online fine-tuning: round trip, malformed rows, the C ABI recording them.
check_PROGRAMS += testsuite/unit/test_experience
TESTS += testsuite/unit/test_experience
testsuite_unit_test_experience_SOURCES = testsuite/unit/test_experience.cpp testsuite/unit/temp_path.h
testsuite_unit_test_experience_CPPFLAGS = $(UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
testsuite_unit_test_experience_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
