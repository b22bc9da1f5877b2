# plugins/: the Slurm plugins, thin C glue over the C ABI. Controller plugins need a configured Slurm
# source tree (configure --with-slurm-source=DIR, scripts/get-slurm-source); without one they are
# not built and configure says so. Never built with sanitizers: slurmctld loads them.
EXTRA_DIST += plugins/README.md plugins/sched/dlsched/README.md plugins/select/dlsched_cons_tres/README.md \
	plugins/site_factor/dlsched/README.md plugins/preempt/dlsched/README.md plugins/spank/dlsched/README.md \
	plugins/job_submit/dlsched/README.md

slurmplugindir = $(slurm_plugindir)
slurmplugin_LTLIBRARIES =

# spank/dlsched: Slurm's public SPANK API only (libslurm-dev), no source tree needed; loaded by
# sbatch/srun/salloc and slurmstepd, so it links nothing of dlsched's core.
if HAVE_SLURM
slurmplugin_LTLIBRARIES += plugins/spank/dlsched/spank_dlsched.la
plugins_spank_dlsched_spank_dlsched_la_SOURCES = plugins/spank/dlsched/spank_dlsched.c \
	plugins/spank/dlsched/launch.c plugins/spank/dlsched/launch.h plugins/spank/dlsched/collect/control.h \
	plugins/spank/dlsched/collect/pidfd.h plugins/spank/dlsched/collect/spooldir.c \
	plugins/spank/dlsched/collect/spooldir.h
# collector= defaults to where dlsched-collect is installed.
plugins_spank_dlsched_spank_dlsched_la_CPPFLAGS = $(AM_CPPFLAGS) $(SLURM_SPANK_CPPFLAGS) \
	-DDLSCHED_COLLECTOR='"$(pkglibexecdir)/dlsched-collect"'
plugins_spank_dlsched_spank_dlsched_la_CFLAGS = $(WARN_CFLAGS) -Wno-unused-parameter
plugins_spank_dlsched_spank_dlsched_la_LDFLAGS = -module -avoid-version -shared
endif

# dlsched-collect: the collector that spank/dlsched starts for each step, as the job's user (C with
# jansson, libcurl and munge; no Slurm, no SQLite, no C++). Installed to $(pkglibexecdir).
PLUGINS_LOCAL_EXTRA =
if HAVE_COLLECTOR
pkglibexec_PROGRAMS = plugins/spank/dlsched/collect/dlsched-collect
plugins_spank_dlsched_collect_dlsched_collect_SOURCES = plugins/spank/dlsched/collect/main.c \
	plugins/spank/dlsched/collect/counters.c plugins/spank/dlsched/collect/counters.h \
	plugins/spank/dlsched/collect/log.c plugins/spank/dlsched/collect/log.h \
	plugins/spank/dlsched/collect/progress.c plugins/spank/dlsched/collect/progress.h \
	plugins/spank/dlsched/collect/send.c plugins/spank/dlsched/collect/send.h \
	plugins/spank/dlsched/collect/spool.c plugins/spank/dlsched/collect/spool.h \
	plugins/spank/dlsched/collect/spooldir.c plugins/spank/dlsched/collect/spooldir.h \
	plugins/spank/dlsched/collect/control.h plugins/spank/dlsched/collect/pidfd.h
plugins_spank_dlsched_collect_dlsched_collect_CPPFLAGS = -I$(top_srcdir)/common/include $(JANSSON_CFLAGS) $(CURL_CFLAGS)
plugins_spank_dlsched_collect_dlsched_collect_LDADD = $(JANSSON_LIBS) $(CURL_LIBS) $(MUNGE_LIBS) -lm
PLUGINS_LOCAL_EXTRA += plugins/spank/dlsched/collect/dlsched-collect
endif

if HAVE_SLURM_SRC
slurmplugin_LTLIBRARIES += plugins/sched/dlsched/sched_dlsched.la \
	plugins/select/dlsched_cons_tres/select_dlsched_cons_tres.la \
	plugins/select/dlsched_cons_tres/dlsched_cons_tres_ctld.la \
	plugins/site_factor/dlsched/site_factor_dlsched.la \
	plugins/preempt/dlsched/preempt_dlsched.la \
	plugins/job_submit/dlsched/job_submit_dlsched.la

# Slurm's own flags for code built against its tree (as Slurm's Makefiles build its plugins).
# Slurm's config.h defines PACKAGE_* itself: drop ours (they come from DEFS on the command line).
DLS_PLUGIN_CPPFLAGS = -UPACKAGE -UPACKAGE_NAME -UPACKAGE_STRING -UPACKAGE_TARNAME -UPACKAGE_URL \
	-UPACKAGE_VERSION -UPACKAGE_BUGREPORT -UVERSION $(SLURM_SRC_CPPFLAGS) -I$(top_srcdir)/common/include
DLS_PLUGIN_CFLAGS = $(WARN_CFLAGS) -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers
# A module resolved against slurmctld at load time: no -Wl,--no-undefined, no libslurmfull.
DLS_PLUGIN_LDFLAGS = -module -avoid-version -shared
DLS_CORE_LIBADD = common/libdlsched.la $(JANSSON_LIBS) $(SQLITE_LIBS)
DLS_PLUGIN_LIBADD = plugins/common/libdlsched_ctld.la plugins/common/libdlsched_slurm.la $(DLS_CORE_LIBADD)

# What any daemon may load (select plugins are loaded by slurmd and clients too) ...
noinst_LTLIBRARIES += plugins/common/libdlsched_slurm.la plugins/common/libdlsched_ctld.la
plugins_common_libdlsched_slurm_la_SOURCES = plugins/common/dlsched_slurm.c plugins/common/dlsched_slurm.h \
	plugins/common/dlsched_loans.c plugins/common/dlsched_speeds.c plugins/common/dlsched_compat.c \
	plugins/common/dlsched_compat.h plugins/common/dlsched_agent.c plugins/common/dlsched_agent.h
plugins_common_libdlsched_slurm_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_common_libdlsched_slurm_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
# ... and what needs slurmctld's globals (job_list, avail_node_bitmap).
plugins_common_libdlsched_ctld_la_SOURCES = plugins/common/dlsched_snapshot.c \
	plugins/common/dlsched_compat_ctld.c
plugins_common_libdlsched_ctld_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_common_libdlsched_ctld_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)

plugins_sched_dlsched_sched_dlsched_la_SOURCES = plugins/sched/dlsched/sched_dlsched.c \
	plugins/sched/dlsched/sched_dlsched.h plugins/sched/dlsched/cycle.c plugins/sched/dlsched/actuate.c \
	plugins/sched/dlsched/preempt.c plugins/sched/dlsched/loans.c plugins/sched/dlsched/stats.c \
	plugins/sched/dlsched/guard.c \
	plugins/sched/dlsched/stopping.c plugins/sched/dlsched/stopping.h \
	plugins/sched/dlsched/fairness.c plugins/sched/dlsched/dlsched_models.h
plugins_sched_dlsched_sched_dlsched_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_sched_dlsched_sched_dlsched_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
plugins_sched_dlsched_sched_dlsched_la_LDFLAGS = $(DLS_PLUGIN_LDFLAGS)
if HAVE_TORCH
# The learned policies (dl2, dual-agent): sched/dlsched is the only plugin that links libtorch
# (slurmctld only; never unloaded on reconfigure). The models library already contains
# libdlsched's objects (a convenience library built on it), so libdlsched is not linked again.
plugins_sched_dlsched_sched_dlsched_la_CPPFLAGS += -DDLSCHED_WITH_MODELS
plugins_sched_dlsched_sched_dlsched_la_LIBADD = plugins/common/libdlsched_ctld.la \
	plugins/common/libdlsched_slurm.la models/libdlsched_models.la $(JANSSON_LIBS) $(SQLITE_LIBS) $(TORCH_LIBS)
else
plugins_sched_dlsched_sched_dlsched_la_LIBADD = $(DLS_PLUGIN_LIBADD)
endif
# The core is C++: link with the C++ driver (libstdc++).
nodist_EXTRA_plugins_sched_dlsched_sched_dlsched_la_SOURCES = force-cxx-link.cpp

# select/dlsched_cons_tres: every daemon and client loads the select plugins of PluginDir, so the
# plugin Slurm loads is a small C loader (no C++, no dlsched core); only the slurmctld whose
# SelectType it is opens the placement plugin beside it, dlsched_cons_tres_ctld.so (not named
# select_*: Slurm would load it as a select plugin of its own).
plugins_select_dlsched_cons_tres_select_dlsched_cons_tres_la_SOURCES = \
	plugins/select/dlsched_cons_tres/loader.c plugins/common/dlsched_compat_select.c \
	plugins/common/dlsched_compat.h
plugins_select_dlsched_cons_tres_select_dlsched_cons_tres_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_select_dlsched_cons_tres_select_dlsched_cons_tres_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
plugins_select_dlsched_cons_tres_select_dlsched_cons_tres_la_LDFLAGS = $(DLS_PLUGIN_LDFLAGS)
plugins_select_dlsched_cons_tres_select_dlsched_cons_tres_la_LIBADD = -ldl

plugins_select_dlsched_cons_tres_dlsched_cons_tres_ctld_la_SOURCES = \
	plugins/select/dlsched_cons_tres/select_dlsched_cons_tres.c
plugins_select_dlsched_cons_tres_dlsched_cons_tres_ctld_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_select_dlsched_cons_tres_dlsched_cons_tres_ctld_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
plugins_select_dlsched_cons_tres_dlsched_cons_tres_ctld_la_LDFLAGS = $(DLS_PLUGIN_LDFLAGS)
plugins_select_dlsched_cons_tres_dlsched_cons_tres_ctld_la_LIBADD = plugins/common/libdlsched_slurm.la \
	$(DLS_CORE_LIBADD) -ldl
nodist_EXTRA_plugins_select_dlsched_cons_tres_dlsched_cons_tres_ctld_la_SOURCES = force-cxx-link.cpp

# The advisor (site_factor/dlsched and preempt/dlsched) as one shared library that both plugins link,
# so that slurmctld loads it once and the two share one decision thread and one table. Installed in
# $(pkglibdir); the plugins find it there (libtool's run path) or beside themselves ($ORIGIN: a
# build tree's plugins/lib). Its undefined symbols (job_list, ...) resolve from slurmctld.
pkglib_LTLIBRARIES += plugins/common/libdlsched_advisor.la
plugins_common_libdlsched_advisor_la_SOURCES = plugins/common/dlsched_advisor.c plugins/common/dlsched_advisor.h
plugins_common_libdlsched_advisor_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_common_libdlsched_advisor_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
plugins_common_libdlsched_advisor_la_LDFLAGS = -avoid-version -shared
plugins_common_libdlsched_advisor_la_LIBADD = $(DLS_PLUGIN_LIBADD)
nodist_EXTRA_plugins_common_libdlsched_advisor_la_SOURCES = force-cxx-link.cpp
DLS_ADVISOR_LDFLAGS = $(DLS_PLUGIN_LDFLAGS) -Wl,-rpath,'$$ORIGIN'

plugins_site_factor_dlsched_site_factor_dlsched_la_SOURCES = plugins/site_factor/dlsched/site_factor_dlsched.c
plugins_site_factor_dlsched_site_factor_dlsched_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_site_factor_dlsched_site_factor_dlsched_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
plugins_site_factor_dlsched_site_factor_dlsched_la_LDFLAGS = $(DLS_ADVISOR_LDFLAGS)
plugins_site_factor_dlsched_site_factor_dlsched_la_LIBADD = plugins/common/libdlsched_advisor.la
nodist_EXTRA_plugins_site_factor_dlsched_site_factor_dlsched_la_SOURCES = force-cxx-link.cpp

plugins_preempt_dlsched_preempt_dlsched_la_SOURCES = plugins/preempt/dlsched/preempt_dlsched.c \
	plugins/common/dlsched_compat_preempt.c plugins/common/dlsched_compat.h
plugins_preempt_dlsched_preempt_dlsched_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_preempt_dlsched_preempt_dlsched_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
plugins_preempt_dlsched_preempt_dlsched_la_LDFLAGS = $(DLS_ADVISOR_LDFLAGS)
plugins_preempt_dlsched_preempt_dlsched_la_LIBADD = plugins/common/libdlsched_advisor.la
nodist_EXTRA_plugins_preempt_dlsched_preempt_dlsched_la_SOURCES = force-cxx-link.cpp

# job_submit/dlsched: checks at submission and update (elastic ranges, the deadline word); the
# comment words' parser comes from the core.
plugins_job_submit_dlsched_job_submit_dlsched_la_SOURCES = plugins/job_submit/dlsched/job_submit_dlsched.c
plugins_job_submit_dlsched_job_submit_dlsched_la_CPPFLAGS = $(DLS_PLUGIN_CPPFLAGS)
plugins_job_submit_dlsched_job_submit_dlsched_la_CFLAGS = $(DLS_PLUGIN_CFLAGS)
plugins_job_submit_dlsched_job_submit_dlsched_la_LDFLAGS = $(DLS_PLUGIN_LDFLAGS)
plugins_job_submit_dlsched_job_submit_dlsched_la_LIBADD = plugins/common/libdlsched_slurm.la $(DLS_CORE_LIBADD)
nodist_EXTRA_plugins_job_submit_dlsched_job_submit_dlsched_la_SOURCES = force-cxx-link.cpp
endif

if HAVE_SLURM
# A plugin directory inside the build tree (make plugins-local), so that a test cluster loads the
# plugins just built without installing anything: PluginDir=$(abs_builddir)/plugins/lib:<Slurm's>.
# Programs a test cluster needs beside them (PLUGINS_LOCAL_EXTRA: dlsched-collect) are copied too.
plugins-local: $(slurmplugin_LTLIBRARIES) $(PLUGINS_LOCAL_EXTRA) $(pkglib_LTLIBRARIES)
	@mkdir -p plugins/lib
	@for p in $(slurmplugin_LTLIBRARIES); do \
		so=$$(dirname $$p)/.libs/$$(basename $$p .la).so; \
		cp --remove-destination $$so plugins/lib/; \
	done
	@for p in $(PLUGINS_LOCAL_EXTRA); do cp --remove-destination $$p plugins/lib/; done
if HAVE_SLURM_SRC
	@cp --remove-destination plugins/common/.libs/libdlsched_advisor.so plugins/lib/
endif
all-local: plugins-local
# Slurm loads the .so files; libtool's .la files have no use in its plugin directory.
install-data-hook:
	@for p in $(slurmplugin_LTLIBRARIES); do rm -f "$(DESTDIR)$(slurmplugindir)/$$(basename $$p)"; done
# ... so make uninstall removes the .so files itself (libtool's uninstall finds them only through
# the .la files).
uninstall-hook:
	@for p in $(slurmplugin_LTLIBRARIES); do rm -f "$(DESTDIR)$(slurmplugindir)/$$(basename $$p .la).so"; done
CLEANFILES += plugins/lib/*.so plugins/lib/dlsched-collect
endif
