# dlsched-train's reinforcement-learning maths (contribs/train/returns.cpp, plain C++: no libtorch)
check_PROGRAMS += testsuite/unit/test_train_returns
TESTS += testsuite/unit/test_train_returns
testsuite_unit_test_train_returns_SOURCES = testsuite/unit/test_train_returns.cpp contribs/train/returns.h \
	contribs/train/returns.cpp testsuite/unit/check_main.h
testsuite_unit_test_train_returns_CPPFLAGS = $(UNIT_CPPFLAGS) -I$(top_srcdir)
testsuite_unit_test_train_returns_LDADD = $(UNIT_TEST_LIBS)
