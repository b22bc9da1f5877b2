# models/: features, decoded rounds, model files, fallback, training losses (needs libtorch)
if HAVE_TORCH
check_PROGRAMS += testsuite/unit/test_models
TESTS += testsuite/unit/test_models
testsuite_unit_test_models_SOURCES = testsuite/unit/test_models.cpp
testsuite_unit_test_models_CPPFLAGS = $(UNIT_CPPFLAGS) -I$(top_srcdir)
testsuite_unit_test_models_LDADD = models/libdlsched_models.la $(UNIT_TEST_LIBS) $(TORCH_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
endif
