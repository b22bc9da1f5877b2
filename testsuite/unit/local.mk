# Check unit tests: one program per area, each fragment adds its own.
UNIT_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) -DDLSCHED_TEST_DATA='"$(abs_top_srcdir)/testsuite/data"' \
	-DDLSCHED_PROFILES='"$(abs_top_srcdir)/contribs/profiles"'
UNIT_TEST_LIBS = common/libdlsched.la $(CHECK_LIBS)

include testsuite/unit/model.mk
include testsuite/unit/policy.mk
include testsuite/unit/gp.mk
include testsuite/unit/config.mk
include testsuite/unit/workload.mk
include testsuite/unit/capi.mk
include testsuite/unit/scheduler.mk
include testsuite/unit/profiledb.mk
include testsuite/unit/records.mk
include testsuite/unit/command.mk
include testsuite/unit/predict.mk
include testsuite/unit/models.mk
include testsuite/unit/sim.mk
include testsuite/unit/train.mk
include testsuite/unit/guard.mk
