/* Runs a Check suite and turns the result into an exit status; shared by the unit test programs
 * (usable from C and C++). */
#ifndef DLSCHED_TEST_CHECK_MAIN_H
#define DLSCHED_TEST_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite* suite)
{
	SRunner* sr = srunner_create(suite);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
