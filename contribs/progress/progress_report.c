#define _GNU_SOURCE

#include "progress_report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This task reports unless SLURM_PROCID or RANK says it is not rank 0. */
static bool _rank0(void)
{
	static const char* const vars[] = {"SLURM_PROCID", "RANK"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char* v = getenv(vars[i]);
		char* end = NULL;
		long r;

		if (!v || !*v)
			continue;
		errno = 0;
		r = strtol(v, &end, 10);
		if (!*end && !errno && r != 0)
			return false;
	}
	return true;
}

enum dls_progress_where dls_progress_where(const char** path)
{
	const char* proto = getenv("DLSCHED_PROTOCOL");
	const char* file = getenv("DLSCHED_PROGRESS_FILE");

	*path = NULL;
	if (!proto || !*proto || !_rank0())
		return DLS_PROGRESS_OFF;
	if (strcmp(proto, DLS_PROGRESS_PROTOCOL))
		return DLS_PROGRESS_OTHER_VERSION;
	if (!file || !*file)
		return DLS_PROGRESS_NO_FILE;
	*path = file;
	return DLS_PROGRESS_ON;
}

void dls_progress_epoch_line(char* line, size_t len, double epoch, double start, double end)
{
	if (start >= 0)
		snprintf(line, len,
			 "{\"v\":1,\"event\":\"epoch\",\"epoch\":%.0f,\"start\":%.6f,\"end\":%.6f}\n", epoch,
			 start, end);
	else
		snprintf(line, len, "{\"v\":1,\"event\":\"epoch\",\"epoch\":%.0f,\"end\":%.6f}\n", epoch,
			 end);
}

void dls_progress_checkpoint_line(char* line, size_t len, const char* kind, double epoch, double bytes,
				  double seconds, double at)
{
	snprintf(line, len,
		 "{\"v\":1,\"event\":\"checkpoint\",\"kind\":\"%s\",\"epoch\":%.15g,\"bytes\":%.0f,"
		 "\"seconds\":%.6f,\"at\":%.6f}\n",
		 kind, epoch, bytes, seconds, at);
}

int dls_progress_append(const char* path, const char* line, const char** step)
{
	size_t len = strlen(line);
	ssize_t n;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0) {
		*step = "open";
		return -1;
	}
	n = write(fd, line, len);
	if (n != (ssize_t)len) {
		int e = n < 0 ? errno : 0;

		close(fd);
		*step = "write";
		errno = e;
		return -1;
	}
	if (close(fd) < 0) {
		*step = "close";
		return -1;
	}
	return 0;
}
