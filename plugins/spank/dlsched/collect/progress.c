/*****************************************************************************\
 *  progress.c - checking and following the progress file (progress.h).
\*****************************************************************************/

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "dlsched/limits.h"
#include "log.h"
#include "progress.h"

#define EARLIEST_S 946684800.0	     /* 2000-01-01T00:00:00Z */
#define AHEAD_S 86400.0		     /* a day ahead of this node's clock at most */
#define MAX_EPOCH DLSCHED_MAX_EPOCHS /* the epochs a job may have (--dl-epochs) */
#define MAX_SECONDS 1e7
#define MAX_COUNT 9007199254740992.0 /* 2^53 */

static int _fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int _fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A number in [lo, hi] (whole when asked). */
static int _number(json_t *obj, const char *key, bool required, double lo, double hi, bool whole, double *out,
		   bool *present, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	double d;

	if (present)
		*present = v != NULL;
	if (!v) {
		if (required)
			return _fail(err, errlen, "\"%s\" is missing", key);
		return 0;
	}
	if (!json_is_number(v))
		return _fail(err, errlen, "\"%s\" is not a number", key);
	d = json_number_value(v);
	if (whole && floor(d) != d)
		return _fail(err, errlen, "\"%s\": %g is not a whole number", key, d);
	if (!(d >= lo && d <= hi))
		return _fail(err, errlen, "\"%s\": %.17g is out of range (%.17g to %.17g)", key, d, lo, hi);
	*out = d;
	return 0;
}

static int _time(json_t *obj, const char *key, bool required, double now_s, double *out, bool *present, char *err,
		 size_t errlen)
{
	double t = 0;
	bool here = false;

	if (_number(obj, key, required, -HUGE_VAL, HUGE_VAL, false, &t, &here, err, errlen))
		return -1;
	if (present)
		*present = here;
	if (!here)
		return 0;
	if (t < EARLIEST_S)
		return _fail(err, errlen, "\"%s\": %.6f is not a Unix time in seconds (before 2000)", key, t);
	if (t > now_s + AHEAD_S)
		return _fail(err, errlen, "\"%s\": %.6f is more than a day ahead of this node's clock", key, t);
	*out = t;
	return 0;
}

/* Every key of obj must be in `allowed` (NULL-terminated). */
static int _only(json_t *obj, const char *const *allowed, const char *what, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		bool known = false;

		for (const char *const *a = allowed; *a; a++)
			known = known || !strcmp(key, *a);
		if (!known) {
			char list[256] = "";

			for (const char *const *a = allowed; *a; a++) {
				strncat(list, list[0] ? ", " : "", sizeof(list) - strlen(list) - 1);
				strncat(list, *a, sizeof(list) - strlen(list) - 1);
			}
			return _fail(err, errlen, "unknown key \"%.40s\" (%s has: %s)", key, what, list);
		}
	}
	return 0;
}

static int _parse_epoch(json_t *o, double now_s, progress_event_t *ev, char *err, size_t errlen)
{
	static const char *const keys[] = {"v", "event", "epoch", "start", "end", NULL};
	double epoch = 0;

	if (_only(o, keys, "an epoch report", err, errlen) ||
	    _number(o, "epoch", true, 1, MAX_EPOCH, true, &epoch, NULL, err, errlen) ||
	    _time(o, "start", false, now_s, &ev->start, &ev->has_start, err, errlen) ||
	    _time(o, "end", true, now_s, &ev->end, NULL, err, errlen))
		return -1;
	if (ev->has_start && ev->end < ev->start)
		return _fail(err, errlen, "\"end\": %.6f is before \"start\" %.6f", ev->end, ev->start);
	ev->kind = PROGRESS_EPOCH;
	ev->epoch = (long) epoch;
	return 0;
}

static int _parse_checkpoint(json_t *o, double now_s, progress_event_t *ev, char *err, size_t errlen)
{
	static const char *const keys[] = {"v", "event", "kind", "epoch", "bytes", "seconds", "at", NULL};
	json_t *kind = json_object_get(o, "kind");
	double bytes = 0;

	if (_only(o, keys, "a checkpoint report", err, errlen))
		return -1;
	if (!kind)
		return _fail(err, errlen, "\"kind\" is missing (save or load)");
	if (!json_is_string(kind) ||
	    (strcmp(json_string_value(kind), "save") && strcmp(json_string_value(kind), "load")))
		return _fail(err, errlen, "\"kind\" is not \"save\" or \"load\"");
	if (_number(o, "epoch", true, 0, MAX_EPOCH, false, &ev->ckpt_epoch, NULL, err, errlen) ||
	    _number(o, "bytes", true, 0, MAX_COUNT, true, &bytes, NULL, err, errlen) ||
	    _number(o, "seconds", true, 0, MAX_SECONDS, false, &ev->seconds, NULL, err, errlen) ||
	    _time(o, "at", true, now_s, &ev->at, NULL, err, errlen))
		return -1;
	ev->kind = PROGRESS_CHECKPOINT;
	ev->save = !strcmp(json_string_value(kind), "save");
	ev->bytes = (int64_t) bytes;
	return 0;
}

extern int progress_parse(const char *line, size_t len, double now_s, progress_event_t *ev, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *o, *event;
	double v = 0;
	int rc;

	memset(ev, 0, sizeof(*ev));
	if (len >= PROGRESS_MAX_LINE)
		return _fail(err, errlen, "longer than %d bytes", PROGRESS_MAX_LINE - 1);
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return _fail(err, errlen, "not JSON: %s (column %d)", jerr.text, jerr.column);
	if (!json_is_object(o)) {
		json_decref(o);
		return _fail(err, errlen, "not a JSON object");
	}
	if (_number(o, "v", true, -HUGE_VAL, HUGE_VAL, false, &v, NULL, err, errlen)) {
		rc = -1;
	} else if (v != 1) {
		rc = _fail(err, errlen, "\"v\": %g is not a protocol version this collector reads (1)", v);
	} else if (!(event = json_object_get(o, "event"))) {
		rc = _fail(err, errlen, "\"event\" is missing (epoch or checkpoint)");
	} else if (json_is_string(event) && !strcmp(json_string_value(event), "epoch")) {
		rc = _parse_epoch(o, now_s, ev, err, errlen);
	} else if (json_is_string(event) && !strcmp(json_string_value(event), "checkpoint")) {
		rc = _parse_checkpoint(o, now_s, ev, err, errlen);
	} else {
		rc = _fail(err, errlen, "\"event\" is not \"epoch\" or \"checkpoint\"");
	}
	json_decref(o);
	return rc;
}

extern void progress_init(progress_file_t *pf, const char *path, off_t offset)
{
	memset(pf, 0, sizeof(*pf));
	pf->path = strdup(path);
	pf->fd = -1;
	pf->offset = offset;
}

extern void progress_fini(progress_file_t *pf)
{
	if (pf->fd >= 0)
		close(pf->fd);
	free(pf->path);
	memset(pf, 0, sizeof(*pf));
	pf->fd = -1;
}

/* Splits newly read bytes into lines. */
static int _feed(progress_file_t *pf, const char *data, size_t n,
		 void (*on_line)(void *, unsigned long, const char *, size_t), void *arg)
{
	int lines = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = data[i];

		if (ch == '\n') {
			pf->line_no++;
			if (pf->skipping) {
				collect_log("progress file %s: line %lu is longer than %d bytes; skipped", pf->path,
					    pf->line_no, PROGRESS_MAX_LINE - 1);
				pf->skipping = false;
			} else {
				on_line(arg, pf->line_no, pf->buf, pf->len);
				lines++;
			}
			pf->len = 0;
			continue;
		}
		if (pf->skipping)
			continue;
		if (pf->len == sizeof(pf->buf) - 1) {
			pf->skipping = true;
			pf->len = 0;
			continue;
		}
		pf->buf[pf->len++] = ch;
	}
	return lines;
}

/* Reads from pf->fd to its end. */
static int _drain(progress_file_t *pf, void (*on_line)(void *, unsigned long, const char *, size_t), void *arg)
{
	char chunk[65536];
	int lines = 0;

	for (;;) {
		ssize_t n = pread(pf->fd, chunk, sizeof(chunk), pf->offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			collect_log("progress file %s: %s", pf->path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		pf->offset += n;
		lines += _feed(pf, chunk, (size_t) n, on_line, arg);
	}
	return lines;
}

extern int progress_read(progress_file_t *pf, bool at_end,
			 void (*on_line)(void *arg, unsigned long line_no, const char *line, size_t len), void *arg)
{
	struct stat by_name, by_fd;
	int lines = 0;

	if (stat(pf->path, &by_name) == 0 && pf->fd >= 0 && (by_name.st_ino != pf->ino || by_name.st_dev != pf->dev)) {
		/* Replaced: finish the old file, then read the new one. */
		lines += _drain(pf, on_line, arg);
		close(pf->fd);
		pf->fd = -1;
		pf->offset = 0;
		pf->len = 0;
		pf->skipping = false;
		collect_log("progress file %s was replaced; reading the new one from its start", pf->path);
	}
	if (pf->fd < 0) {
		pf->fd = open(pf->path, O_RDONLY | O_CLOEXEC);
		if (pf->fd < 0) {
			if (!pf->missing_logged)
				collect_log("progress file %s: %s (waiting for it)", pf->path, strerror(errno));
			pf->missing_logged = true;
			return lines;
		}
		if (fstat(pf->fd, &by_fd) == 0) {
			pf->dev = by_fd.st_dev;
			pf->ino = by_fd.st_ino;
		}
	}
	if (fstat(pf->fd, &by_fd) == 0 && by_fd.st_size < pf->offset) {
		collect_log("progress file %s shrank from %lld to %lld bytes; reading it from its start", pf->path,
			    (long long) pf->offset, (long long) by_fd.st_size);
		pf->offset = 0;
		pf->len = 0;
		pf->skipping = false;
	}
	lines += _drain(pf, on_line, arg);
	if (at_end && pf->len && !pf->skipping) {
		pf->line_no++;
		on_line(arg, pf->line_no, pf->buf, pf->len);
		pf->len = 0;
		lines++;
	}
	return lines;
}
