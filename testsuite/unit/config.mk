# dlsched.conf parser and JSON wrapper
check_PROGRAMS += testsuite/unit/test_config
TESTS += testsuite/unit/test_config
testsuite_unit_test_config_SOURCES = testsuite/unit/test_config.cpp
testsuite_unit_test_config_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_config_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
