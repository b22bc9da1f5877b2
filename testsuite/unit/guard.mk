# dlsched-guard's view of the jobs it replays (contribs/guard/known.cpp; sacct.cpp needs libtorch)
if HAVE_TORCH
check_PROGRAMS += testsuite/unit/test_guard_known
TESTS += testsuite/unit/test_guard_known
testsuite_unit_test_guard_known_SOURCES = testsuite/unit/test_guard_known.cpp testsuite/unit/temp_path.h \
	contribs/guard/known.h contribs/guard/known.cpp contribs/train/sacct.h contribs/train/sacct.cpp \
	testsuite/unit/check_main.h
testsuite_unit_test_guard_known_CPPFLAGS = $(UNIT_CPPFLAGS) -I$(top_srcdir)
testsuite_unit_test_guard_known_LDADD = models/libdlsched_models.la $(UNIT_TEST_LIBS) $(TORCH_LIBS) \
	$(JANSSON_LIBS) $(SQLITE_LIBS)
endif
