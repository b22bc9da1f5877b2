# dlsched-sim: the simulator's pieces as a small internal library, so tests and the bench link them.
noinst_LTLIBRARIES += contribs/sim/libsim.la
contribs_sim_libsim_la_SOURCES = \
	contribs/sim/cluster_spec.h \
	contribs/sim/cluster_spec.cpp \
	contribs/sim/engine.h \
	contribs/sim/engine.cpp \
	contribs/sim/estimates.h \
	contribs/sim/estimates.cpp \
	contribs/sim/fairness.h \
	contribs/sim/fairness.cpp \
	contribs/sim/metrics.h \
	contribs/sim/metrics.cpp \
	contribs/sim/generator.h \
	contribs/sim/generator.cpp \
	contribs/sim/bench.h \
	contribs/sim/bench.cpp
contribs_sim_libsim_la_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
contribs_sim_libsim_la_LIBADD = common/libdlsched.la

bin_PROGRAMS += contribs/sim/dlsched-sim
contribs_sim_dlsched_sim_SOURCES = contribs/sim/main.cpp
contribs_sim_dlsched_sim_CPPFLAGS = $(AM_CPPFLAGS) -DPACKAGE_VERSION='"$(PACKAGE_VERSION)"'
contribs_sim_dlsched_sim_LDADD = contribs/sim/libsim.la common/libdlsched.la $(JANSSON_LIBS) $(SQLITE_LIBS)
if HAVE_TORCH
# The learned policies (dl2, dual-agent) when libtorch is there.
contribs_sim_dlsched_sim_CPPFLAGS += -DDLSCHED_WITH_MODELS -I$(top_srcdir)
contribs_sim_dlsched_sim_LDADD += models/libdlsched_models.la $(TORCH_LIBS)
endif
