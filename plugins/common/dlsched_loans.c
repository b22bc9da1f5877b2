/*****************************************************************************\
 *  dlsched_loans.c - capacity loaning in Slurm (dlsched_slurm.h): which nodes
 *  are inference nodes, which of them are lent to training, and the inference
 *  demand an autoscaler or an administrator declared.
 *
 *  The interface (doc/admin-guide.md, "Capacity loaning"):
 *  - dlsched.conf InferencePartition=NAME: the nodes of that partition serve
 *    inference and may be lent to training. They must also be in the training
 *    partition(s) in slurm.conf, so that Slurm can run training jobs on them;
 *    select/dlsched_cons_tres keeps training jobs off the ones not lent and
 *    inference jobs off the ones lent, for every scheduler in slurmctld.
 *  - Demand: one number in [0, 1] (the fraction of the inference partition's
 *    GPUs inference needs) in InferenceDemandFile= (default
 *    StateSaveLocation/dlsched-inference-demand). Honoured only when it is a
 *    regular file owned by root or SlurmUser and writable by nobody else:
 *    only they can declare demand. Read every cycle (no restart, no
 *    reconfigure); it survives restarts. Missing or refused: 1 (nothing lent).
 *    Read with no slurmctld lock held (dls_inference_demand()); the snapshot,
 *    taken under the locks, uses the value last read (a FIFO or a hung
 *    file system there must not stall every RPC).
 *  - Which nodes are lent: LoanStateFile= (default
 *    StateSaveLocation/dlsched-loans), node names one per line, written by
 *    sched/dlsched (atomically, with fsync, by a writer thread: never under
 *    slurmctld's locks) and read back after a restart; honoured only when
 *    owned by root or SlurmUser and writable by nobody else. A write that
 *    fails is retried until it succeeds, logged at each try. The same file
 *    keeps the reclaims under way, a line `reclaim NODE SINCE` each (SINCE:
 *    Unix seconds when the node was taken back), so that a restarted
 *    slurmctld still holds the node's training jobs to ReclaimTimeout=
 *    counted from the reclaim itself.
 *  Only libslurmfull symbols and node/partition records: the select plugin
 *  that reads the state runs in slurmctld, slurmd and clients alike.
\*****************************************************************************/

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched_slurm.h"

static char *inference_part = NULL; /* NULL: loaning off */
static char *demand_path = NULL;
static char *state_path = NULL;

/* The lent nodes and the reclaims under way as last read or written, and what the state file was
 * then. */
static char **lent = NULL;
static int lent_cnt = 0;
static dls_reclaim_t *reclaims = NULL;
static int reclaim_cnt = 0;
static struct stat lent_stat;
static bool lent_read = false;
static time_t lent_checked = 0;

/*
 * The loan state file is written by a thread of its own (started by the first dls_loans_set()):
 * dls_loans_set() runs under slurmctld's write locks, and fsync() (or a hung file system) must not
 * stall every RPC. lent_version counts the changes made in memory, written_version the last one on
 * disk; while they differ the file is not read back (memory is newer). loans_lock guards lent[]
 * against the writer's copy, both versions, lent_stat and the writer's state.
 */
static pthread_mutex_t loans_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t loans_cond = PTHREAD_COND_INITIALIZER;
static uint64_t lent_version = 0, written_version = 0;
static bool writer_running = false, writer_stop = false;
static pthread_t writer_tid;
#define DLS_LOAN_RETRY_S 5
static void *_writer(void *arg);

/* The demand as last read with no lock held (dls_inference_demand()), for the snapshot; unknown
 * (never read from this file) until demand_known. */
static double demand_cached = 1;
static bool demand_known = false;
/* A demand file larger than this is refused (it holds one number and comments). */
#define DLS_DEMAND_MAX_BYTES 4096

static char *_config_string(dlsched_scheduler_t *sched, const char *key)
{
	char buf[4096];

	if (!sched || dlsched_scheduler_config(sched, key, buf, sizeof(buf)) != DLSCHED_OK || !buf[0])
		return NULL;
	return xstrdup(buf);
}

static char *_in_state_dir(const char *name)
{
	char *p = NULL;

	xstrfmtcat(p, "%s/%s", slurm_conf.state_save_location ? slurm_conf.state_save_location : "/var/spool/slurmctld",
		   name);
	return p;
}

extern void dls_loans_configure(dlsched_scheduler_t *sched)
{
	char *old_demand_path;

	/* The loans made under the old configuration go to its file first. */
	dls_loans_flush(10);
	slurm_mutex_lock(&loans_lock);
	xfree(inference_part);
	old_demand_path = demand_path;
	xfree(state_path);
	inference_part = _config_string(sched, "InferencePartition");
	demand_path = _config_string(sched, "InferenceDemandFile");
	state_path = _config_string(sched, "LoanStateFile");
	if (!demand_path)
		demand_path = _in_state_dir("dlsched-inference-demand");
	if (!state_path)
		state_path = _in_state_dir("dlsched-loans");
	/* The demand read last stays while its file does (a reconfigure). */
	if (xstrcmp(old_demand_path, demand_path))
		demand_known = false;
	xfree(old_demand_path);
	lent_read = false;
	lent_checked = 0;
	slurm_mutex_unlock(&loans_lock);
}

extern const char *dls_inference_partition(void)
{
	return inference_part;
}

extern const char *dls_inference_demand_path(void)
{
	return demand_path;
}

extern bool dls_node_in_inference(node_record_t *node_ptr)
{
	if (!inference_part || !node_ptr)
		return false;
	for (int i = 0; i < node_ptr->part_cnt; i++)
		if (node_ptr->part_pptr[i] &&
		    !xstrcmp(((part_record_t *) node_ptr->part_pptr[i])->name, inference_part))
			return true;
	return false;
}

static void _free_reclaims(dls_reclaim_t *r, int cnt)
{
	for (int i = 0; i < cnt; i++)
		xfree(r[i].node);
	xfree(r);
}

static void _free_lent(void)
{
	for (int i = 0; i < lent_cnt; i++)
		xfree(lent[i]);
	xfree(lent);
	lent_cnt = 0;
	_free_reclaims(reclaims, reclaim_cnt);
	reclaims = NULL;
	reclaim_cnt = 0;
}

static int _reclaim_index(const char *node_name)
{
	for (int i = 0; i < reclaim_cnt; i++)
		if (!xstrcmp(reclaims[i].node, node_name))
			return i;
	return -1;
}

/* A `reclaim NODE SINCE` line of the state file (`rest` follows the word). Locks: loans_lock. */
static void _read_reclaim(char *rest, time_t now)
{
	char node[256], extra[2];
	long long since;

	if (sscanf(rest, "%255s %lld %1s", node, &since, extra) != 2 || since <= 0) {
		error("dlsched: loan state %s: '%s' is not 'reclaim NODE SINCE': line ignored (the reclaim, if "
		      "any, is forgotten)",
		      state_path, rest);
		return;
	}
	if (_reclaim_index(node) >= 0)
		return;
	xrecalloc(reclaims, reclaim_cnt + 1, sizeof(dls_reclaim_t));
	reclaims[reclaim_cnt].node = xstrdup(node);
	/* Never in the future: a wrong clock must not give the node's training jobs more time. */
	reclaims[reclaim_cnt].since = since > (long long) now ? now : (time_t) since;
	reclaim_cnt++;
}

/*
 * Whether a file that declares dlsched state may be trusted: a regular file owned by root or
 * SlurmUser and writable by nobody else. `why` says why not.
 */
static bool _trusted(const struct stat *st, char *why, size_t len)
{
	if (!S_ISREG(st->st_mode))
		snprintf(why, len, "not a regular file");
	else if (st->st_uid != 0 && st->st_uid != slurm_conf.slurm_user_id)
		snprintf(why, len, "owned by uid %u, neither root nor SlurmUser", (unsigned) st->st_uid);
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, len, "writable by others than its owner");
	else
		return true;
	return false;
}

extern bool dls_file_trusted(const struct stat *st, char *why, size_t len)
{
	return _trusted(st, why, len);
}

/* Reads the state file when it changed (checked at most once a second), unless this process has
 * changes not written yet. Locks: loans_lock held. */
static void _refresh_lent(void)
{
	struct stat st;
	time_t now = time(NULL);
	FILE *f;
	char line[512], why[128];
	int fd;

	if (lent_read && (now == lent_checked || lent_version != written_version))
		return;
	lent_checked = now;
	if (stat(state_path, &st) != 0) {
		if (lent_read && lent_cnt == 0)
			return;
		_free_lent();
		memset(&lent_stat, 0, sizeof(lent_stat));
		lent_read = true;
		return;
	}
	if (lent_read && st.st_ino == lent_stat.st_ino && st.st_mtim.tv_sec == lent_stat.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == lent_stat.st_mtim.tv_nsec && st.st_size == lent_stat.st_size)
		return;
	_free_lent();
	lent_stat = st;
	lent_read = true;
	fd = open(state_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		error("dlsched: cannot read the loan state %s: %m; no node counts as lent", state_path);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!_trusted(&st, why, sizeof(why))) {
		error("dlsched: loan state %s is %s: refused, no node counts as lent", state_path, why);
		close(fd);
		return;
	}
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *e;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!strncmp(s, "reclaim ", 8)) {
			s[strcspn(s, "\r\n#")] = '\0';
			_read_reclaim(s + 8, now);
			continue;
		}
		e = s + strcspn(s, " \t\r\n#");
		*e = '\0';
		if (!*s || line[0] == '#')
			continue;
		xrecalloc(lent, lent_cnt + 1, sizeof(char *));
		lent[lent_cnt++] = xstrdup(s);
	}
	fclose(f);
}

extern bool dls_node_loaned(const char *node_name)
{
	bool found = false;

	if (!inference_part || !node_name)
		return false;
	slurm_mutex_lock(&loans_lock);
	_refresh_lent();
	for (int i = 0; i < lent_cnt && !found; i++)
		found = !xstrcmp(lent[i], node_name);
	slurm_mutex_unlock(&loans_lock);
	return found;
}

extern int dls_loans_count(void)
{
	int n;

	if (!inference_part)
		return 0;
	slurm_mutex_lock(&loans_lock);
	_refresh_lent();
	n = lent_cnt;
	slurm_mutex_unlock(&loans_lock);
	return n;
}

extern int dls_loans_reclaims(dls_reclaim_t **out)
{
	int n;

	*out = NULL;
	if (!inference_part)
		return 0;
	slurm_mutex_lock(&loans_lock);
	_refresh_lent();
	n = reclaim_cnt;
	if (n) {
		*out = xcalloc(n, sizeof(dls_reclaim_t));
		for (int i = 0; i < n; i++) {
			(*out)[i] = reclaims[i];
			(*out)[i].node = xstrdup(reclaims[i].node);
		}
	}
	slurm_mutex_unlock(&loans_lock);
	return n;
}

extern void dls_loans_reclaims_free(dls_reclaim_t *r, int cnt)
{
	_free_reclaims(r, cnt);
}

/* Wakes the writer (started at the first change). Locks: loans_lock. */
static void _changed(void)
{
	lent_version++;
	if (!writer_running) {
		writer_running = true;
		writer_stop = false;
		dls_thread_create("dlsched_loans", &writer_tid, _writer, NULL);
	}
	slurm_cond_broadcast(&loans_cond);
}

extern void dls_loans_reclaim_done(const char *node_name)
{
	int i;

	if (!inference_part || !node_name)
		return;
	slurm_mutex_lock(&loans_lock);
	_refresh_lent();
	if ((i = _reclaim_index(node_name)) >= 0) {
		xfree(reclaims[i].node);
		reclaims[i] = reclaims[--reclaim_cnt];
		_changed();
	}
	slurm_mutex_unlock(&loans_lock);
}

extern void dls_loans_reclaim_late(const char *node_name)
{
	int i;

	slurm_mutex_lock(&loans_lock);
	if ((i = _reclaim_index(node_name)) >= 0)
		reclaims[i].late = true;
	slurm_mutex_unlock(&loans_lock);
}

/* Writes `names` to the state file atomically and durably. No lock held: it may block. */
static int _write_state(const char *path, const char *part, char **names, int cnt, const dls_reclaim_t *r, int r_cnt)
{
	char *tmp = NULL, *dir_copy;
	int fd, rc = SLURM_SUCCESS;
	FILE *f;

	xstrfmtcat(tmp, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		xfree(tmp);
		return SLURM_ERROR;
	}
	fprintf(f, "# Nodes of partition %s lent to training by sched/dlsched (one per line).\n", part);
	for (int i = 0; i < cnt; i++)
		fprintf(f, "%s\n", names[i]);
	if (r_cnt)
		fprintf(f, "# Taken back, training jobs leaving (node, since: Unix seconds).\n");
	for (int i = 0; i < r_cnt; i++)
		fprintf(f, "reclaim %s %lld\n", r[i].node, (long long) r[i].since);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = SLURM_ERROR;
	if (fclose(f) != 0)
		rc = SLURM_ERROR;
	/* Atomically, so that a restart reads the old or the new state, never half of one. */
	if (rc == SLURM_SUCCESS && rename(tmp, path) != 0)
		rc = SLURM_ERROR;
	if (rc != SLURM_SUCCESS) {
		int e = errno;

		unlink(tmp);
		errno = e;
	} else {
		/* The rename itself survives a crash once the directory is synced. */
		dir_copy = xstrdup(path);
		if ((fd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			(void) fsync(fd);
			close(fd);
		}
		xfree(dir_copy);
	}
	xfree(tmp);
	return rc;
}

/* The writer thread: writes the lent nodes whenever they changed; retries a failed write every
 * DLS_LOAN_RETRY_S seconds, logging each failure, until it succeeds. Takes no slurmctld lock. */
static void *_writer(void *arg)
{
	int failures = 0;

	(void) arg;
	slurm_mutex_lock(&loans_lock);
	for (;;) {
		char **names, *path, *part;
		dls_reclaim_t *r;
		int cnt, r_cnt, rc;
		uint64_t version;

		if (written_version == lent_version) {
			if (writer_stop)
				break;
			slurm_cond_wait(&loans_cond, &loans_lock);
			continue;
		}
		/* A copy: sched/dlsched goes on lending under its locks meanwhile. */
		version = lent_version;
		cnt = lent_cnt;
		names = xcalloc(cnt ? cnt : 1, sizeof(char *));
		for (int i = 0; i < cnt; i++)
			names[i] = xstrdup(lent[i]);
		r_cnt = reclaim_cnt;
		r = xcalloc(r_cnt ? r_cnt : 1, sizeof(dls_reclaim_t));
		for (int i = 0; i < r_cnt; i++) {
			r[i] = reclaims[i];
			r[i].node = xstrdup(reclaims[i].node);
		}
		path = xstrdup(state_path);
		part = xstrdup(inference_part);
		slurm_mutex_unlock(&loans_lock);

		rc = _write_state(path, part, names, cnt, r, r_cnt);
		if (rc != SLURM_SUCCESS)
			error("dlsched: cannot write the loan state %s: %m; slurmctld's lent nodes (%d) and the file "
			      "disagree (select/dlsched_cons_tres and a restart read the file): retrying every %d s",
			      path, cnt, DLS_LOAN_RETRY_S);
		else if (failures)
			info("dlsched: loan state %s written after %d failed tries", path, failures);

		slurm_mutex_lock(&loans_lock);
		if (rc == SLURM_SUCCESS) {
			failures = 0;
			written_version = version;
			if (stat(path, &lent_stat) != 0)
				memset(&lent_stat, 0, sizeof(lent_stat));
		} else if (!writer_stop) {
			struct timespec ts = dls_time_in(DLS_LOAN_RETRY_S);

			failures++;
			pthread_cond_timedwait(&loans_cond, &loans_lock, &ts);
		} else {
			failures++;
			written_version = lent_version; /* stopping: given up, said so above */
		}
		for (int i = 0; i < cnt; i++)
			xfree(names[i]);
		xfree(names);
		_free_reclaims(r, r_cnt);
		xfree(path);
		xfree(part);
	}
	writer_running = false;
	slurm_cond_broadcast(&loans_cond);
	slurm_mutex_unlock(&loans_lock);
	return NULL;
}

extern int dls_loans_set(const char *node_name, bool loaned, time_t since)
{
	int i, r;

	if (!inference_part || !node_name)
		return SLURM_ERROR;
	slurm_mutex_lock(&loans_lock);
	_refresh_lent();
	for (i = 0; i < lent_cnt && xstrcmp(lent[i], node_name); i++)
		;
	if (loaned == (i < lent_cnt)) {
		slurm_mutex_unlock(&loans_lock);
		return SLURM_SUCCESS;
	}
	r = _reclaim_index(node_name);
	if (loaned) {
		xrecalloc(lent, lent_cnt + 1, sizeof(char *));
		lent[lent_cnt++] = xstrdup(node_name);
		if (r >= 0) { /* lent again before it was free */
			xfree(reclaims[r].node);
			reclaims[r] = reclaims[--reclaim_cnt];
		}
	} else {
		xfree(lent[i]);
		lent[i] = lent[--lent_cnt];
		if (since && r < 0) {
			xrecalloc(reclaims, reclaim_cnt + 1, sizeof(dls_reclaim_t));
			reclaims[reclaim_cnt].node = xstrdup(node_name);
			reclaims[reclaim_cnt].since = since;
			reclaim_cnt++;
		}
	}
	_changed();
	slurm_mutex_unlock(&loans_lock);
	return SLURM_SUCCESS;
}

extern bool dls_loans_flush(double timeout_s)
{
	struct timespec ts = dls_time_in(timeout_s);
	bool done;

	slurm_mutex_lock(&loans_lock);
	while (writer_running && written_version != lent_version) {
		slurm_cond_broadcast(&loans_cond); /* a failed write: try again now */
		if (pthread_cond_timedwait(&loans_cond, &loans_lock, &ts) == ETIMEDOUT)
			break;
	}
	done = written_version == lent_version;
	slurm_mutex_unlock(&loans_lock);
	return done;
}

extern void dls_loans_fini(void)
{
	bool join;

	if (!dls_loans_flush(10))
		error("dlsched: loan state %s not written before the plugin stopped", state_path ? state_path : "");
	slurm_mutex_lock(&loans_lock);
	writer_stop = true;
	slurm_cond_broadcast(&loans_cond);
	join = writer_running;
	slurm_mutex_unlock(&loans_lock);
	if (join) {
		/* It ends after its current try (no slurmctld lock involved). */
		pthread_join(writer_tid, NULL);
	}
	slurm_mutex_lock(&loans_lock);
	writer_stop = false;
	_free_lent(); /* read again from the file if the plugin goes on */
	lent_read = false;
	slurm_mutex_unlock(&loans_lock);
}

/* The plugin that wrote loans is unloaded: its writer must not outlive its code. */
static void __attribute__((destructor)) _loans_unload(void)
{
	if (writer_running)
		dls_loans_fini();
}

/* `s` for a log line or the stats file: at most `max` bytes, every byte that is not printable
 * ASCII shown as '?'. */
static void _printable(char *out, size_t len, const char *s, size_t max)
{
	size_t n = 0;

	for (; *s && *s != '\n' && n < max && n + 1 < len; s++)
		out[n++] = isprint((unsigned char) *s) ? *s : '?';
	out[n] = '\0';
}

/* Reads the demand file; see dls_inference_demand(). May block: no slurmctld lock may be held. */
static double _read_demand(char *why, size_t len)
{
	struct stat lst, st;
	char buf[128], bad[48], refused[128];
	ssize_t n;
	char *end, *s;
	double v;
	int fd;

	/* What the path is, before opening it: a FIFO would block an open(), a device would be
	 * read. Then the open file must be the one looked at (no swap in between). */
	if (lstat(demand_path, &lst) != 0) {
		snprintf(why, len, "no demand declared in %s (%s): inference keeps every node", demand_path,
			 strerror(errno));
		return 1;
	}
	if (!_trusted(&lst, refused, sizeof(refused))) {
		snprintf(why, len,
			 "%s is %s; it must be a regular file owned by root or SlurmUser and writable by nobody else: "
			 "ignored, inference keeps every node",
			 demand_path, refused);
		return 1;
	}
	if (lst.st_size > DLS_DEMAND_MAX_BYTES) {
		snprintf(why, len, "%s is larger than %d bytes: ignored, inference keeps every node", demand_path,
			 DLS_DEMAND_MAX_BYTES);
		return 1;
	}
	fd = open(demand_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "no demand declared in %s (%s): inference keeps every node", demand_path,
			 strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) != 0 || st.st_dev != lst.st_dev || st.st_ino != lst.st_ino ||
	    !_trusted(&st, refused, sizeof(refused))) {
		close(fd);
		snprintf(why, len, "%s changed while it was read: ignored, inference keeps every node", demand_path);
		return 1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	s = buf;
	while (*s == '#') { /* comment lines first */
		s = strchr(s, '\n');
		if (!s) {
			s = buf + strlen(buf);
			break;
		}
		s++;
	}
	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
		end++;
	if (end == s || *end || errno || !(v >= 0 && v <= 1)) {
		/* What the file says goes to the log and the stats file: printable and short. */
		_printable(bad, sizeof(bad), s, 40);
		snprintf(why, len, "%s: '%s' is not a fraction in [0, 1]: inference keeps every node", demand_path,
			 bad);
		return 1;
	}
	return v;
}

extern double dls_inference_demand(char *why, size_t len)
{
	char buf[600];
	double v;

	if (why && len)
		why[0] = '\0';
	if (!inference_part)
		return 0;
	buf[0] = '\0';
	v = _read_demand(buf, sizeof(buf));
	if (why && len)
		snprintf(why, len, "%s", buf);
	slurm_mutex_lock(&loans_lock);
	demand_cached = v;
	demand_known = true;
	slurm_mutex_unlock(&loans_lock);
	return v;
}

extern double dls_inference_demand_cached(void)
{
	double v;

	if (!inference_part)
		return 0;
	slurm_mutex_lock(&loans_lock);
	if (!demand_known) {
		char why[600];

		/*
		 * Never read from this file (slurmctld just started, or InferenceDemandFile= changed):
		 * assuming 1 would take back every lent node for one cycle. Read it once here, under
		 * the caller's locks: _read_demand() refuses a FIFO or a device unopened and reads
		 * at most 127 bytes of a regular file; only a hung file system could still block.
		 */
		demand_cached = _read_demand(why, sizeof(why));
		demand_known = true;
	}
	v = demand_cached;
	slurm_mutex_unlock(&loans_lock);
	return v;
}

extern bool dls_loans_allow(job_record_t *job_ptr, node_record_t *node_ptr)
{
	bool inference_job, loaned;

	if (!inference_part || !dls_node_in_inference(node_ptr))
		return true;
	inference_job = job_ptr->part_ptr && !xstrcmp(job_ptr->part_ptr->name, inference_part);
	loaned = dls_node_loaned(node_ptr->name);
	if (inference_job)
		return !loaned;
	/* A lent node may be taken back: only jobs Slurm can requeue go there. */
	return loaned && dls_job_requeueable(job_ptr);
}
