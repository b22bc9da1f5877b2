# dlsched-db: inspect and maintain the job-profile database.
bin_PROGRAMS += contribs/db/dlsched-db
contribs_db_dlsched_db_SOURCES = contribs/db/db_main.cpp contribs/db/accuracy.cpp contribs/db/accuracy.h
contribs_db_dlsched_db_LDADD = common/libdlsched.la $(JANSSON_LIBS) $(SQLITE_LIBS)
TESTS += testsuite/db/test-db.sh
EXTRA_DIST += testsuite/db/test-db.sh
