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
# Its systemd unit (etc/dlsched-ingestd.service), with ExecStart= naming the installed programs, to
# $(systemdunitdir) (make install systemdunitdir=DIR to change it; systemd reads both
# /usr/lib/systemd/system and /usr/local/lib/systemd/system).
systemdunitdir = $(prefix)/lib/systemd/system
EXTRA_DIST += etc/dlsched-ingestd.service
install-data-local: install-ingestd-unit
uninstall-local: uninstall-ingestd-unit
install-ingestd-unit:
if HAVE_INGESTD
	$(MKDIR_P) "$(DESTDIR)$(systemdunitdir)"
	sed -e 's|^ExecStart=/usr/local/sbin/dlsched-ingestd |ExecStart=$(sbindir)/dlsched-ingestd |' \
		-e 's|^ExecStartPre=/usr/local/bin/dlsched-db |ExecStartPre=$(bindir)/dlsched-db |' \
		$(srcdir)/etc/dlsched-ingestd.service >"$(DESTDIR)$(systemdunitdir)/dlsched-ingestd.service"
	chmod 644 "$(DESTDIR)$(systemdunitdir)/dlsched-ingestd.service"
endif
uninstall-ingestd-unit:
	rm -f "$(DESTDIR)$(systemdunitdir)/dlsched-ingestd.service"
.PHONY: install-ingestd-unit uninstall-ingestd-unit
# Skips (77) where dlsched-ingestd or munged is missing.
TESTS += testsuite/ingest/test-ingestd.sh
EXTRA_DIST += testsuite/ingest/test-ingestd.sh
# Load on loopback, valid and invalid clients at once (~20 s; skips (77) unless root).
TESTS += testsuite/ingest/test-ingestd-load.sh
EXTRA_DIST += testsuite/ingest/test-ingestd-load.sh testsuite/ingest/load.py testsuite/ingest/lib.sh
