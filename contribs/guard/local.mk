# dlsched-guard(1): the learned policy's guard for Slurm; writes the verdict file sched/dlsched
# follows. Needs libtorch (it replays the learned policy).
if HAVE_TORCH
bin_PROGRAMS += contribs/guard/dlsched-guard
contribs_guard_dlsched_guard_SOURCES = contribs/guard/main.cpp contribs/guard/known.h contribs/guard/known.cpp \
	contribs/train/sacct.h contribs/train/sacct.cpp
contribs_guard_dlsched_guard_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
contribs_guard_dlsched_guard_LDADD = models/libdlsched_models.la contribs/sim/libsim.la common/libdlsched.la \
	$(TORCH_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
endif
EXTRA_DIST += contribs/guard/README.md
