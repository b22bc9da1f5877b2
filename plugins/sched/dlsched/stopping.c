/*****************************************************************************\
 *  stopping.c - the table of jobs sched/dlsched asked to checkpoint (see
 *  stopping.h), and its journal.
 *
 *  The journal, StateSaveLocation/dlsched-stopping.state, one record a line:
 *    v2 <job_id> <requested> <deadline> <gpus> <per_node> <nodes> <pred_suspend>
 *       <pred_resume> <recorded> <start_time> <restart_cnt> <reason>
 *                      a preemption begun (or its whole row, after compaction)
 *    rec <job_id>      its profile DB row was written
 *    del <job_id>      it ended (requeued, or gone)
 *  (times in Unix seconds with a fraction; the reason last, it may hold
 *  spaces; "v1" lines of earlier releases, without start time and restart
 *  count, are read too). A preemption is appended and flushed with
 *  fdatasync() before its job is signalled: a few hundred bytes, never the
 *  whole table, under slurmctld's locks. Removals are flushed once per check,
 *  off the locks; the journal is rewritten (temporary file, fsync, rename,
 *  fsync of the directory) when it has grown well past the table, and at load.
\*****************************************************************************/

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "sched_dlsched.h"
#include "stopping.h"

static dls_stop_t *stops = NULL;
static int stop_cnt = 0;
static char *state_file = NULL;
static int journal_fd = -1;
static int journal_lines = 0; /* records in the journal since it was last rewritten */
static bool unsynced = false; /* records appended since the last fdatasync() */
static uint64_t write_errors = 0;
static char last_error[512] = "";

extern int dls_stops_count(void)
{
	return stop_cnt;
}

extern dls_stop_t *dls_stops_at(int i)
{
	return (i >= 0 && i < stop_cnt) ? &stops[i] : NULL;
}

extern dls_stop_t *dls_stops_find(uint32_t job_id)
{
	for (int i = 0; i < stop_cnt; i++)
		if (stops[i].job_id == job_id)
			return &stops[i];
	return NULL;
}

extern uint64_t dls_stops_write_errors(void)
{
	return write_errors;
}

extern const char *dls_stops_last_error(void)
{
	return last_error;
}

/* A failed write: logged (each time: a preemption may be lost at a restart), counted. */
static int _failed(const char *what, const char *path, int err)
{
	write_errors++;
	snprintf(last_error, sizeof(last_error), "%s %s: %s", what, path, strerror(err));
	error(DLS_LOG_PREFIX "cannot %s %s: %s; jobs being preempted might not be requeued after a slurmctld restart",
	      what, path, strerror(err));
	if (journal_fd >= 0) {
		(void) close(journal_fd);
		journal_fd = -1; /* reopened at the next write */
	}
	return -1;
}

/* fsync() of the directory that holds `path`: a created or renamed file's entry is durable. */
static int _sync_dir(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fsync(fd) != 0)
		rc = errno ? errno : EIO;
	if (fd >= 0)
		(void) close(fd);
	xfree(copy);
	return rc;
}

static int _write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		buf += n;
		len -= (size_t) n;
	}
	return 0;
}

static char *_row(const dls_stop_t *s)
{
	return xstrdup_printf("v2 %u %.3f %.3f %d %d %d %.6g %.6g %d %ld %u %s\n", s->job_id, s->requested, s->deadline,
			      s->gpus, s->per_node, s->nodes, s->predicted_suspend, s->predicted_resume,
			      s->recorded ? 1 : 0, (long) s->start_time, s->restart_cnt, s->reason);
}

/* Appends one record; with `sync`, flushed to stable storage before returning. */
static int _append(const char *line, bool sync)
{
	int rc;

	if (!state_file)
		return 0; /* no state directory: nothing survives a restart anyway */
	if (journal_fd < 0) {
		bool existed = access(state_file, F_OK) == 0;

		journal_fd = open(state_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (journal_fd < 0)
			return _failed("open", state_file, errno);
		if (!existed && (rc = _sync_dir(state_file)))
			return _failed("sync the directory of", state_file, rc);
	}
	if ((rc = _write_all(journal_fd, line, strlen(line))))
		return _failed("write", state_file, rc);
	journal_lines++;
	unsynced = true;
	if (sync) {
		if (fdatasync(journal_fd) != 0)
			return _failed("flush", state_file, errno);
		unsynced = false;
	}
	return 0;
}

/* Rewrites the journal as the table alone. */
static int _compact(void)
{
	char *tmp = NULL;
	int fd, rc = 0;

	if (!state_file)
		return 0;
	xstrfmtcat(tmp, "%s.new", state_file);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = _failed("write", tmp, errno);
		xfree(tmp);
		return rc;
	}
	for (int i = 0; i < stop_cnt && !rc; i++) {
		char *row = _row(&stops[i]);

		rc = _write_all(fd, row, strlen(row));
		xfree(row);
	}
	if (!rc && fsync(fd) != 0)
		rc = errno;
	if (close(fd) != 0 && !rc)
		rc = errno;
	if (!rc && rename(tmp, state_file) != 0)
		rc = errno;
	if (!rc)
		rc = _sync_dir(state_file);
	if (rc) {
		(void) unlink(tmp);
		rc = _failed("rewrite", state_file, rc);
		xfree(tmp);
		return rc;
	}
	xfree(tmp);
	if (journal_fd >= 0)
		(void) close(journal_fd); /* the old file's */
	journal_fd = -1;
	journal_lines = stop_cnt;
	unsynced = false;
	return 0;
}

static dls_stop_t *_put(const dls_stop_t *stop)
{
	dls_stop_t *s = dls_stops_find(stop->job_id);

	if (!s) {
		xrecalloc(stops, stop_cnt + 1, sizeof(dls_stop_t));
		s = &stops[stop_cnt++];
	}
	*s = *stop;
	return s;
}

static void _drop(uint32_t job_id)
{
	for (int i = 0; i < stop_cnt; i++) {
		if (stops[i].job_id != job_id)
			continue;
		memmove(&stops[i], &stops[i + 1], (stop_cnt - i - 1) * sizeof(dls_stop_t));
		stop_cnt--;
		return;
	}
}

extern dls_stop_t *dls_stops_add(const dls_stop_t *stop)
{
	char *row = _row(stop);
	int rc = _append(row, true);

	xfree(row);
	return rc ? NULL : _put(stop);
}

extern void dls_stops_set_recorded(dls_stop_t *stop)
{
	char line[32];

	stop->recorded = true;
	snprintf(line, sizeof(line), "rec %u\n", stop->job_id);
	(void) _append(line, false);
}

extern void dls_stops_remove(uint32_t job_id)
{
	char line[32];

	if (!dls_stops_find(job_id))
		return;
	_drop(job_id);
	snprintf(line, sizeof(line), "del %u\n", job_id);
	(void) _append(line, false);
}

extern int dls_stops_sync(void)
{
	if (journal_lines > 2 * stop_cnt + 64)
		return _compact();
	if (!unsynced || journal_fd < 0)
		return 0;
	if (fdatasync(journal_fd) != 0)
		return _failed("flush", state_file, errno);
	unsynced = false;
	return 0;
}

/* One journal line into the table; false when it does not read as one. */
static bool _replay(const char *line)
{
	dls_stop_t s;
	int rec = 0, used = 0;
	long start = 0;
	unsigned id = 0;

	memset(&s, 0, sizeof(s));
	if (sscanf(line, "del %u", &id) == 1 && id) {
		_drop(id);
		return true;
	}
	if (sscanf(line, "rec %u", &id) == 1 && id) {
		dls_stop_t *p = dls_stops_find(id);

		if (p)
			p->recorded = true;
		return true;
	}
	if (sscanf(line, "v2 %u %lg %lg %d %d %d %lg %lg %d %ld %u %n", &s.job_id, &s.requested, &s.deadline, &s.gpus,
		   &s.per_node, &s.nodes, &s.predicted_suspend, &s.predicted_resume, &rec, &start, &s.restart_cnt,
		   &used) >= 11 &&
	    s.job_id && used > 0) {
		s.start_time = (time_t) start;
	} else if (sscanf(line, "v1 %u %lg %lg %d %d %d %lg %lg %d %n", &s.job_id, &s.requested, &s.deadline, &s.gpus,
			  &s.per_node, &s.nodes, &s.predicted_suspend, &s.predicted_resume, &rec, &used) >= 9 &&
		   s.job_id && used > 0) {
		s.restart_cnt = UINT32_MAX; /* unknown: not compared */
	} else {
		return false;
	}
	s.recorded = rec != 0;
	strlcpy(s.reason, line + used, sizeof(s.reason));
	_put(&s);
	return true;
}

extern void dls_stops_load(const char *state_dir)
{
	char line[512];
	FILE *f;
	int n = 0;

	dls_stops_free();
	state_file = xstrdup_printf("%s/dlsched-stopping.state", state_dir);
	if (!(f = fopen(state_file, "r"))) {
		if (errno != ENOENT)
			error(DLS_LOG_PREFIX
			      "cannot read %s: %s; preemptions begun before slurmctld restarted are not finished",
			      state_file, strerror(errno));
		return; /* none yet */
	}
	while (fgets(line, sizeof(line), f)) {
		n++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (!_replay(line))
			error(DLS_LOG_PREFIX "%s:%d: malformed line skipped: '%s'", state_file, n, line);
	}
	fclose(f);
	journal_lines = n;
	(void) _compact();
	if (stop_cnt)
		info(DLS_LOG_PREFIX "%d job(s) being preempted before slurmctld restarted (%s): their requeue goes on",
		     stop_cnt, state_file);
}

extern void dls_stops_free(void)
{
	if (journal_fd >= 0) {
		if (unsynced)
			(void) fdatasync(journal_fd);
		(void) close(journal_fd);
	}
	journal_fd = -1;
	journal_lines = 0;
	unsynced = false;
	xfree(stops);
	stop_cnt = 0;
	xfree(state_file);
}

extern const char *dls_stop_outcome_name(dls_stop_outcome_t outcome)
{
	switch (outcome) {
	case DLS_STOP_CHECKPOINTED:
		return "checkpointed";
	case DLS_STOP_GRACE:
		return "grace";
	case DLS_STOP_EXITED:
		return "exited";
	case DLS_STOP_GONE:
		return "gone";
	case DLS_STOP_UNDER_WAY:
		break;
	}
	return "under-way";
}
