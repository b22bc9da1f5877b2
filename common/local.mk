# libdlsched: the pure C++ decision core (no Slurm, no libtorch). A libtool convenience library, so
# that the same objects go into the tools and (PIC) into the plugins that slurmctld loads.
noinst_LTLIBRARIES += common/libdlsched.la
common_libdlsched_la_SOURCES =
common_libdlsched_la_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
common_libdlsched_la_LIBADD = $(JANSSON_LIBS) $(SQLITE_LIBS)

include common/model/local.mk
include common/policy/local.mk
include common/config/local.mk
include common/json/local.mk
include common/workload/local.mk
include common/capi/local.mk
include common/profiledb/local.mk
include common/predict/local.mk
include common/util/local.mk
