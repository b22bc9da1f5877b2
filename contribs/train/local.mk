# dlsched-train(1): supervised warm-up, PPO in the simulator, online fine-tuning. Needs libtorch
# (through models/; this program includes no torch header itself).
if HAVE_TORCH
bin_PROGRAMS += contribs/train/dlsched-train
contribs_train_dlsched_train_SOURCES = contribs/train/main.cpp contribs/train/cli.h contribs/train/cli.cpp contribs/train/cmd_sl.cpp contribs/train/cmd_rl.cpp contribs/train/cmd_tools.cpp contribs/train/curve.h contribs/train/curve.cpp contribs/train/returns.h contribs/train/returns.cpp contribs/train/episodes.h contribs/train/episodes.cpp \
	contribs/train/sacct.h contribs/train/sacct.cpp contribs/train/cmd_site.cpp
contribs_train_dlsched_train_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
contribs_train_dlsched_train_LDADD = models/libdlsched_models.la contribs/sim/libsim.la common/libdlsched.la \
	$(TORCH_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS)
endif
