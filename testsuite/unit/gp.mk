# gp-placement and its Gaussian-process speed model on hand-computed cases
check_PROGRAMS += testsuite/unit/test_gp_placement
TESTS += testsuite/unit/test_gp_placement
testsuite_unit_test_gp_placement_SOURCES = testsuite/unit/test_gp_placement.cpp testsuite/unit/view_builder.h \
	testsuite/unit/check_main.h
testsuite_unit_test_gp_placement_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_gp_placement_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
# Measured epochs as the speed observations gp-placement learns from (model/speed_samples.h)
check_PROGRAMS += testsuite/unit/test_speed_samples
TESTS += testsuite/unit/test_speed_samples
testsuite_unit_test_speed_samples_SOURCES = testsuite/unit/test_speed_samples.cpp testsuite/unit/view_builder.h \
	testsuite/unit/check_main.h
testsuite_unit_test_speed_samples_CPPFLAGS = $(UNIT_CPPFLAGS)
testsuite_unit_test_speed_samples_LDADD = $(UNIT_TEST_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
