/*****************************************************************************\
 *  progress_report.h - the training job's side of protocol 1 (doc/protocol.md,
 *  section 1), once: whether and where this task reports, the report lines,
 *  and the single O_APPEND write that keeps concurrent reporters apart.
 *  Used by dlsched-progress and dlsched-emu-train; the Python module
 *  dlsched_progress is the same protocol in Python. C, no dependencies.
\*****************************************************************************/

#ifndef DLSCHED_PROGRESS_REPORT_H
#define DLSCHED_PROGRESS_REPORT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLS_PROGRESS_PROTOCOL "1"

enum dls_progress_where {
	DLS_PROGRESS_OFF,           /* not under dlsched, or not rank 0: report nothing */
	DLS_PROGRESS_OTHER_VERSION, /* DLSCHED_PROTOCOL names another version */
	DLS_PROGRESS_NO_FILE,       /* DLSCHED_PROTOCOL set, DLSCHED_PROGRESS_FILE not */
	DLS_PROGRESS_ON,            /* report to *path */
};

/*
 * Whether this task reports, from DLSCHED_PROTOCOL, SLURM_PROCID then RANK
 * (only rank 0 reports) and DLSCHED_PROGRESS_FILE (*path when ON).
 */
enum dls_progress_where dls_progress_where(const char** path);

/* One report line, newline-terminated; start < 0 leaves "start" out. */
void dls_progress_epoch_line(char* line, size_t len, double epoch, double start, double end);
void dls_progress_checkpoint_line(char* line, size_t len, const char* kind, double epoch, double bytes,
				  double seconds, double at);

/*
 * Appends `line` to `path` with one write(2) on an O_APPEND descriptor.
 * 0 on success; -1 with *step set to "open", "write" or "close" and errno
 * set (0 for a short write).
 */
int dls_progress_append(const char* path, const char* line, const char** step);

#ifdef __cplusplus
}
#endif

#endif
