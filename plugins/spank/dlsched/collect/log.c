/*****************************************************************************\
 *  log.c - dlsched-collect's log file, bounded in size.
\*****************************************************************************/

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static char *log_path; /* NULL: standard error */
static int log_fd = -1;
static char log_who[96];
static size_t log_limit = 1024 * 1024;

extern void collect_log_set_limit(size_t bytes)
{
	log_limit = bytes;
}

static void _reopen(void)
{
	if (log_fd >= 0)
		close(log_fd);
	log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

extern void collect_log_open(const char *path, const char *who)
{
	free(log_path);
	log_path = NULL;
	if (log_fd >= 0 && log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = STDERR_FILENO;
	snprintf(log_who, sizeof(log_who), "%s", who ? who : "");
	if (path && strcmp(path, "-")) {
		log_path = strdup(path);
		log_fd = -1;
		if (log_path)
			_reopen();
	}
}

/*
 * Rotate when the file under our name has grown past the limit; follow the
 * name when another collector rotated it (our descriptor then points at
 * collect.log.1).
 */
static void _check_rotation(void)
{
	struct stat by_name, by_fd;
	char old[4096];

	if (!log_path)
		return;
	if (stat(log_path, &by_name) < 0) {
		_reopen();
		return;
	}
	if (log_fd < 0 || fstat(log_fd, &by_fd) < 0 || by_fd.st_ino != by_name.st_ino || by_fd.st_dev != by_name.st_dev)
		_reopen();
	if ((size_t) by_name.st_size < log_limit)
		return;
	snprintf(old, sizeof(old), "%s.1", log_path);
	(void) rename(log_path, old);
	_reopen();
}

extern void collect_log(const char *fmt, ...)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	size_t n;
	int k;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	k = snprintf(line + n, sizeof(line) - n, ".%03ldZ dlsched-collect[%d] %s%s", ts.tv_nsec / 1000000,
		     (int) getpid(), log_who, log_who[0] ? ": " : "");
	if (k > 0)
		n += (size_t) k;
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (k > 0)
		n += ((size_t) k < sizeof(line) - n - 1) ? (size_t) k : sizeof(line) - n - 2;
	line[n++] = '\n';

	_check_rotation();
	if (log_fd >= 0)
		(void) !write(log_fd, line, n);
}
