/*****************************************************************************\
 *  log.h - dlsched-collect's log: <spool>/<uid>/collect.log, time-stamped
 *  lines, rotated to collect.log.1 at 1 MiB. Several collectors of one user
 *  share the file: each line is one write(2) on an O_APPEND descriptor.
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_LOG_H
#define DLSCHED_COLLECT_LOG_H

#include <stddef.h>

/* Where lines go from now on: a file (created 0600), or standard error when
 * path is NULL or "-". Lines are prefixed with `who` (e.g. "job 42.batch"). */
extern void collect_log_open(const char *path, const char *who);

/* One line; a newline is added. Never fails: a line that cannot be written is
 * dropped. */
extern void collect_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Rotation threshold in bytes (tests lower it). */
extern void collect_log_set_limit(size_t bytes);

#endif
