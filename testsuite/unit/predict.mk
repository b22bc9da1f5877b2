# Runtime and overhead predictors
check_PROGRAMS += testsuite/unit/test_predict
TESTS += testsuite/unit/test_predict
testsuite_unit_test_predict_SOURCES = testsuite/unit/test_predict.cpp
testsuite_unit_test_predict_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_predict_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
