# dlsched-replay (submits a workload to a running cluster) and dlsched-emu-train (the emulated job).
bin_PROGRAMS += contribs/replay/dlsched-replay contribs/replay/dlsched-emu-train
contribs_replay_dlsched_replay_SOURCES = contribs/replay/replay.cpp
contribs_replay_dlsched_replay_LDADD = common/libdlsched.la $(JANSSON_LIBS) $(SQLITE_LIBS)
contribs_replay_dlsched_emu_train_SOURCES = contribs/replay/emu_train.cpp \
	contribs/progress/progress_report.c contribs/progress/progress_report.h
contribs_replay_dlsched_emu_train_LDADD = common/libdlsched.la $(JANSSON_LIBS) $(SQLITE_LIBS)
