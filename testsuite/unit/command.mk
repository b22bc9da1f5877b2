# The time-bounded command runner (common/util/command)
check_PROGRAMS += testsuite/unit/test_command
TESTS += testsuite/unit/test_command
testsuite_unit_test_command_SOURCES = testsuite/unit/test_command.cpp
testsuite_unit_test_command_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_command_LDADD = $(UNIT_TEST_LIBS)
