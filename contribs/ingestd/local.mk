# dlsched-ingestd: the profile DB's single writer (HTTP + munge). Built only with libmicrohttpd and
# munge; with libslurm it can also ask slurmctld for a job's owner (--owner-lookup slurm).
if HAVE_INGESTD
sbin_PROGRAMS = contribs/ingestd/dlsched-ingestd
contribs_ingestd_dlsched_ingestd_SOURCES = contribs/ingestd/ingestd_main.cpp \
	contribs/ingestd/log.h contribs/ingestd/log.cpp \
	contribs/ingestd/munge_auth.h contribs/ingestd/munge_auth.cpp \
	contribs/ingestd/owner_lookup.h contribs/ingestd/owner_lookup.cpp \
	contribs/ingestd/ingest_service.h contribs/ingestd/ingest_service.cpp \
	contribs/ingestd/http_server.h contribs/ingestd/http_server.cpp
contribs_ingestd_dlsched_ingestd_CPPFLAGS = $(AM_CPPFLAGS) $(MHD_CFLAGS)
contribs_ingestd_dlsched_ingestd_LDADD = common/libdlsched.la $(JANSSON_LIBS) $(SQLITE_LIBS) $(MHD_LIBS) $(MUNGE_LIBS)
if HAVE_SLURM
contribs_ingestd_dlsched_ingestd_SOURCES += contribs/ingestd/owner_slurm.cpp
contribs_ingestd_dlsched_ingestd_CPPFLAGS += $(SLURM_CPPFLAGS) -DDLSCHED_WITH_LIBSLURM

endif
endif
EXTRA_DIST += contribs/ingestd/owner_slurm.cpp contribs/ingestd/README.md
# Skips (77) where dlsched-ingestd or munged is missing.
TESTS += testsuite/ingest/test-ingestd.sh
EXTRA_DIST += testsuite/ingest/test-ingestd.sh
