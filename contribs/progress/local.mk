# The training job's side of the protocol (doc/protocol.md, section 1): dlsched-progress (C, no
# dependencies) and the Python module dlsched_progress (standard library only). Built and installed
# on every node whether or not it runs the collector: outside dlsched they do nothing and succeed.
bin_PROGRAMS += contribs/progress/dlsched-progress
contribs_progress_dlsched_progress_SOURCES = contribs/progress/dlsched_progress.c \
	contribs/progress/progress_report.c contribs/progress/progress_report.h
contribs_progress_dlsched_progress_LDADD = -lm
dlschedpythondir = $(pkgdatadir)/python
dist_dlschedpython_DATA = contribs/progress/dlsched_progress.py
EXTRA_DIST += contribs/progress/README.md
