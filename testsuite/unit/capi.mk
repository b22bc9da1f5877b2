# The C ABI, from a test written in C (proves dlsched/api.h is plain C).
check_PROGRAMS += testsuite/unit/test_capi
TESTS += testsuite/unit/test_capi
testsuite_unit_test_capi_SOURCES = testsuite/unit/test_capi.c
nodist_EXTRA_testsuite_unit_test_capi_SOURCES = force-cxx-link.cpp
testsuite_unit_test_capi_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_capi_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# The C ABI's exception firewall: throwing policies, out of memory on the error path.
check_PROGRAMS += testsuite/unit/test_guarded
TESTS += testsuite/unit/test_guarded
testsuite_unit_test_guarded_SOURCES = testsuite/unit/test_guarded.cpp testsuite/unit/temp_path.h
testsuite_unit_test_guarded_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_guarded_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# DumpViews=: recorded cycles, bounded, and replayed to the same decisions.
check_PROGRAMS += testsuite/unit/test_dump_views
TESTS += testsuite/unit/test_dump_views
testsuite_unit_test_dump_views_SOURCES = testsuite/unit/test_dump_views.cpp testsuite/unit/temp_path.h
testsuite_unit_test_dump_views_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_dump_views_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
