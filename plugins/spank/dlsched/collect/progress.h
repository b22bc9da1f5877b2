/*****************************************************************************\
 *  progress.h - the training job's progress file (doc/protocol.md, section
 *  1): followed from an offset, one JSON object per line, each line checked
 *  before it becomes a record.
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_PROGRESS_H
#define DLSCHED_COLLECT_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROGRESS_MAX_LINE 4096 /* the protocol's bound, newline included */

typedef enum { PROGRESS_EPOCH, PROGRESS_CHECKPOINT } progress_kind_t;

/* One checked report. */
typedef struct {
	progress_kind_t kind;
	/* epoch */
	long epoch;
	bool has_start;
	double start, end;
	/* checkpoint */
	bool save; /* "save", else "load" */
	double ckpt_epoch;
	int64_t bytes;
	double seconds, at;
} progress_event_t;

/*
 * Checks one line (without its newline) against section 1 of the protocol:
 * a JSON object, "v": 1, a known event, no unknown keys, numbers in range,
 * times plausible (after 2000-01-01, at most a day after now_s). On failure
 * returns -1 with the reason in err (e.g. "\"end\": 1700000000.5 is before
 * \"start\" 1700000010.0").
 */
extern int progress_parse(const char *line, size_t len, double now_s, progress_event_t *ev, char *err, size_t errlen);

/* Follows the file: reads what was appended since the last call. */
typedef struct {
	char *path;
	int fd;
	off_t offset; /* bytes consumed */
	dev_t dev;
	ino_t ino;
	char buf[PROGRESS_MAX_LINE];
	size_t len;	       /* bytes of an unfinished line in buf */
	bool skipping;	       /* inside an over-long line */
	unsigned long line_no; /* lines seen (for messages) */
	bool missing_logged;
} progress_file_t;

extern void progress_init(progress_file_t *pf, const char *path, off_t offset);
extern void progress_fini(progress_file_t *pf);

/*
 * Calls on_line for each complete new line (without its newline; line_no is
 * 1-based from the first line read). With at_end, an unfinished last line is
 * passed too (the writer is gone). Reopens the file when it was replaced and
 * starts over when it was truncated. Returns the number of lines passed.
 */
extern int progress_read(progress_file_t *pf, bool at_end,
			 void (*on_line)(void *arg, unsigned long line_no, const char *line, size_t len), void *arg);

#endif
