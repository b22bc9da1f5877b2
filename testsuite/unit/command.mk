# The time-bounded command runner (common/util/command)
check_PROGRAMS += testsuite/unit/test_command
TESTS += testsuite/unit/test_command
testsuite_unit_test_command_SOURCES = testsuite/unit/test_command.cpp
testsuite_unit_test_command_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_command_LDADD = $(UNIT_TEST_LIBS)

# Command-line flags from one declarative table (common/util/flag_table)
check_PROGRAMS += testsuite/unit/test_flag_table
TESTS += testsuite/unit/test_flag_table
testsuite_unit_test_flag_table_SOURCES = testsuite/unit/test_flag_table.cpp
testsuite_unit_test_flag_table_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_flag_table_LDADD = $(UNIT_TEST_LIBS)

# sched/dlsched's stopping journal as dlsched-replay reads it (common/util/stopping_journal)
check_PROGRAMS += testsuite/unit/test_stopping_journal
TESTS += testsuite/unit/test_stopping_journal
testsuite_unit_test_stopping_journal_SOURCES = testsuite/unit/test_stopping_journal.cpp
testsuite_unit_test_stopping_journal_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_stopping_journal_LDADD = $(UNIT_TEST_LIBS)
