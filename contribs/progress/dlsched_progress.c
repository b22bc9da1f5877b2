/*****************************************************************************\
 *  dlsched_progress.c - dlsched-progress: a training job reports an epoch or
 *  a checkpoint (doc/protocol.md, section 1; dlsched-progress(1)).
 *
 *    dlsched-progress epoch N [--start T] [--end T]
 *    dlsched-progress checkpoint save|load --epoch E (--bytes B | --file PATH)
 *                     --seconds S
 *
 *  The arguments are checked first (a mistake exits 2 with a message, under
 *  dlsched or not). Then: DLSCHED_PROTOCOL unset, or a task other than rank 0
 *  (SLURM_PROCID, then RANK, where set) => exit 0, nothing written. Otherwise
 *  one line goes to $DLSCHED_PROGRESS_FILE with a single write(2) on an
 *  O_APPEND descriptor, so that concurrent reporters never interleave; a
 *  failure to write exits 1. No dependencies: it runs in any job.
\*****************************************************************************/

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "progress_report.h"

#define PROTOCOL DLS_PROGRESS_PROTOCOL
#define EARLIEST_S 946684800.0 /* 2000-01-01 */
#define AHEAD_S 86400.0
#define MAX_EPOCH 1e7
#define MAX_SECONDS 1e7
#define MAX_BYTES 9007199254740992.0 /* 2^53 */

static void usage(FILE* out)
{
	fprintf(out,
		"usage: dlsched-progress epoch N [--start T] [--end T]\n"
		"       dlsched-progress checkpoint save|load --epoch E (--bytes B | --file PATH) --seconds "
		"S\n"
		"Reports a training job's progress to dlsched (doc/protocol.md, dlsched-progress(1)).\n"
		"  epoch N          epoch N (1, 2, ... over the whole job) just ended\n"
		"  --start T        when it started (Unix seconds; default: the previous report's end)\n"
		"  --end T          when it ended (default: now)\n"
		"  checkpoint save  a checkpoint was written; load: one was read and restored\n"
		"  --epoch E        the training progress it holds, in epochs (fractions allowed)\n"
		"  --bytes B        its size; or --file PATH: the size of that file (or directory)\n"
		"  --seconds S      how long the save (or the load and restore) took\n"
		"Does nothing and succeeds outside dlsched (DLSCHED_PROTOCOL unset) and in ranks\n"
		"other than 0. Exit status: 0 reported or nothing to do, 1 not written, 2 bad arguments.\n");
}

static int _bad(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

static int _bad(const char* fmt, ...)
{
	va_list ap;

	fputs("dlsched-progress: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (dlsched-progress --help)\n", stderr);
	return 2;
}

static double _now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A plain decimal number (no hex, inf or nan). */
static bool _number(const char* s, double* out)
{
	char* end = NULL;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || strpbrk(s, "xXpP"))
		return false;
	*out = v;
	return true;
}

static int _time(const char* opt, const char* val, double now, double* out)
{
	if (!_number(val, out))
		return _bad("%s '%s': not a number (Unix seconds, e.g. %.0f)", opt, val, now);
	if (*out < EARLIEST_S || *out > now + AHEAD_S)
		return _bad("%s %s: not a plausible time (Unix seconds between 2000 and tomorrow, e.g. %.0f)",
			    opt, val, now);
	return 0;
}

static long long dir_bytes;

static int _add_size(const char* path, const struct stat* st, int flag, struct FTW* ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_F && S_ISREG(st->st_mode))
		dir_bytes += st->st_size;
	return 0;
}

/* The size of a checkpoint file, or of the files under a directory. */
static int _file_bytes(const char* path, double* out)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return _bad("--file %s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		dir_bytes = 0;
		if (nftw(path, _add_size, 16, FTW_PHYS) < 0)
			return _bad("--file %s: %s", path, strerror(errno));
		*out = (double)dir_bytes;
	} else if (S_ISREG(st.st_mode)) {
		*out = (double)st.st_size;
	} else {
		return _bad("--file %s: not a file or directory", path);
	}
	return 0;
}

/* "--name value" or "--name=value": the value, advancing *i; NULL otherwise. */
static const char* _opt(int argc, char** argv, int* i, const char* name, int* err)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n])
		return NULL;
	if (*i + 1 >= argc) {
		*err = _bad("%s needs a value", name);
		return NULL;
	}
	return argv[++*i];
}

static int _epoch(int argc, char** argv, double now, char* line, size_t len)
{
	double n, start = 0, end = now;
	bool has_start = false, has_end = false;
	int err = 0;

	if (argc < 3)
		return _bad("epoch: which epoch ended? (dlsched-progress epoch N)");
	if (!_number(argv[2], &n) || floor(n) != n || n < 1 || n > MAX_EPOCH)
		return _bad(
			"epoch '%s': need a whole number from 1 to 10000000 (epochs count from 1 over the "
			"whole job)",
			argv[2]);
	for (int i = 3; i < argc; i++) {
		const char* v;

		if ((v = _opt(argc, argv, &i, "--start", &err))) {
			if (has_start)
				return _bad("--start is given twice: give it once");
			if ((err = _time("--start", v, now, &start)))
				return err;
			has_start = true;
		} else if ((v = _opt(argc, argv, &i, "--end", &err))) {
			if (has_end)
				return _bad("--end is given twice: give it once");
			if ((err = _time("--end", v, now, &end)))
				return err;
			has_end = true;
		} else {
			return err ? err : _bad("epoch: unknown argument '%s' (--start T, --end T)", argv[i]);
		}
	}
	if (has_start && start > end)
		return _bad("epoch %s: --start %.6f is after --end %.6f", argv[2], start, end);
	dls_progress_epoch_line(line, len, n, has_start ? start : -1, end);
	return 0;
}

static int _checkpoint(int argc, char** argv, double now, char* line, size_t len)
{
	double epoch = -1, bytes = -1, seconds = -1;
	const char* kind;
	int err = 0;

	if (argc < 3 || (strcmp(argv[2], "save") && strcmp(argv[2], "load")))
		return _bad(
			"checkpoint: say save or load (dlsched-progress checkpoint save --epoch E --bytes B "
			"--seconds S)");
	kind = argv[2];
	for (int i = 3; i < argc; i++) {
		const char* v;

		if ((v = _opt(argc, argv, &i, "--epoch", &err))) {
			if (epoch >= 0)
				return _bad("--epoch is given twice: give it once");
			if (!_number(v, &epoch) || epoch < 0 || epoch > MAX_EPOCH)
				return _bad(
					"--epoch '%s': need the epochs of training it holds, from 0 to "
					"10000000 (e.g. 3 or 3.5)",
					v);
		} else if ((v = _opt(argc, argv, &i, "--bytes", &err))) {
			if (bytes >= 0)
				return _bad("checkpoint: give --bytes or --file, once");
			if (!_number(v, &bytes) || floor(bytes) != bytes || bytes < 0 || bytes > MAX_BYTES)
				return _bad(
					"--bytes '%s': need the checkpoint's size in bytes (a whole number)",
					v);
		} else if ((v = _opt(argc, argv, &i, "--file", &err))) {
			if (bytes >= 0)
				return _bad("checkpoint: give --bytes or --file, once");
			if ((err = _file_bytes(v, &bytes)))
				return err;
		} else if ((v = _opt(argc, argv, &i, "--seconds", &err))) {
			if (seconds >= 0)
				return _bad("--seconds is given twice: give it once");
			if (!_number(v, &seconds) || seconds < 0 || seconds > MAX_SECONDS)
				return _bad("--seconds '%s': need the time it took, in seconds (e.g. 1.8)",
					    v);
		} else {
			return err ? err
				   : _bad("checkpoint: unknown argument '%s' (--epoch E, --bytes B or --file "
					  "PATH, --seconds S)",
					  argv[i]);
		}
	}
	if (epoch < 0)
		return _bad("checkpoint %s: --epoch E is missing", kind);
	if (bytes < 0)
		return _bad("checkpoint %s: --bytes B or --file PATH is missing", kind);
	if (seconds < 0)
		return _bad("checkpoint %s: --seconds S is missing", kind);
	dls_progress_checkpoint_line(line, len, kind, epoch, bytes, seconds, now);
	return 0;
}

int main(int argc, char** argv)
{
	char line[512];
	const char *path, *step = NULL;
	double now = _now();
	int rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("dlsched-progress (protocol %s)\n", PROTOCOL);
		return 0;
	}
	if (argc < 2)
		return _bad("say what to report: epoch or checkpoint");
	if (!strcmp(argv[1], "epoch"))
		rc = _epoch(argc, argv, now, line, sizeof(line));
	else if (!strcmp(argv[1], "checkpoint"))
		rc = _checkpoint(argc, argv, now, line, sizeof(line));
	else
		rc = _bad("'%s': report an epoch or a checkpoint", argv[1]);
	if (rc)
		return rc;

	switch (dls_progress_where(&path)) {
		case DLS_PROGRESS_OFF:
			return 0;
		case DLS_PROGRESS_OTHER_VERSION:
			fprintf(stderr,
				"dlsched-progress: DLSCHED_PROTOCOL=%s, this helper speaks version %s; "
				"nothing reported (use the dlsched-progress installed with this cluster's "
				"dlsched)\n",
				getenv("DLSCHED_PROTOCOL"), PROTOCOL);
			return 0;
		case DLS_PROGRESS_NO_FILE:
			fprintf(stderr,
				"dlsched-progress: DLSCHED_PROTOCOL is set but DLSCHED_PROGRESS_FILE is not; "
				"nothing reported\n");
			return 1;
		case DLS_PROGRESS_ON:
			break;
	}
	if (dls_progress_append(path, line, &step) < 0) {
		if (!strcmp(step, "open"))
			fprintf(stderr, "dlsched-progress: cannot open %s: %s; nothing reported\n", path,
				strerror(errno));
		else if (!strcmp(step, "write"))
			fprintf(stderr, "dlsched-progress: cannot write to %s: %s\n", path,
				errno ? strerror(errno) : "short write");
		else
			fprintf(stderr, "dlsched-progress: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}
