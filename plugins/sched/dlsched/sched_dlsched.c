/*****************************************************************************\
 *  sched_dlsched.c - the dlsched scheduler: a thread in slurmctld that every
 *  SchedInterval seconds copies the queue under a short read lock, lets the
 *  dlsched core decide with no lock held, and applies the decisions under
 *  the write locks: queue priorities, starts on the planned nodes, GPU counts
 *  of pending jobs, checkpoint-signal-and-requeue.
 *
 *  Slurm's own main scheduler keeps running and starts jobs in the priority
 *  order set here (PriorityType=priority/basic keeps them). If dlsched cannot
 *  decide (no or bad dlsched.conf, an error in the core) nothing is changed
 *  for that cycle, the reason is logged, and Slurm's ordering stands.
 *
 *  Built with libtorch, it also runs the learned policies (Policy=dl2,
 *  dual-agent; dlsched_models.h); their model is loaded at every (re)load of
 *  dlsched.conf, and with RecordExperience=yes each cycle's step is appended
 *  to the profile DB (inside dlsched_scheduler_decide, no lock held).
\*****************************************************************************/

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/power.h"
#include "src/common/read_config.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/fed_mgr.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/srun_comm.h"

#include "../../common/dlsched_slurm.h"
#include "dlsched_models.h"

const char plugin_name[] = "dlsched: learned DL scheduling for GPU clusters";
const char plugin_type[] = "sched/dlsched";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * Priorities we set (DLSCHED_PRIORITY_TOP down to DLSCHED_PRIORITY_FLOOR,
 * dlsched/api.h) live above priority/basic's TOP_PRIORITY (0xffff0000), which
 * new jobs count down from: a job submitted between two cycles ranks after
 * every job dlsched has ordered.
 */

static pthread_t sched_thread;
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static bool stop_thread = false;
static bool reconfig = false;

/* Runs the requeue of a resized job, then its new size once it is pending again. */
typedef struct {
	uint32_t job_id;
	int gpus_per_node;
	int nodes;
} dls_resize_t;
static dls_resize_t *resizes = NULL;
static int resize_cnt = 0;

typedef struct {
	uint64_t cycles;
	uint64_t fallbacks;
	double last_ms;
	double sum_ms;
	double max_ms;
	double last_decide_ms;
	int last_considered;
	int last_running;
	uint64_t starts;
	uint64_t start_failures;
	uint64_t requeues;
	uint64_t gpu_updates;
	uint64_t priorities;
	char last_error[600];
	char describe[512];
	char notes[1024];		/* the scheduler's notes, on one line */
	/* Experience rows (RecordExperience=yes), over every scheduler since init(). */
	uint64_t exp_rows;
	uint64_t exp_errors;
	uint64_t exp_dropped;
	char exp_error[512];
} dls_stats_t;
static dls_stats_t stats;
static char *stats_path = NULL;

static double _now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec * 1000.0 + tv.tv_usec / 1000.0;
}

/* The stats file an admin reads (documented in plugins/sched/dlsched/README.md). */
static void _write_stats(void)
{
	char *tmp = NULL;
	FILE *f;

	if (!stats_path)
		return;
	xstrfmtcat(tmp, "%s.tmp", stats_path);
	if (!(f = fopen(tmp, "w"))) {
		xfree(tmp);
		return;
	}
	fprintf(f,
		"plugin=sched/dlsched\npid=%d\nscheduler=%s\ncycles=%" PRIu64 "\nfallback_cycles=%" PRIu64
		"\nlast_cycle_ms=%.3f\nmean_cycle_ms=%.3f\nmax_cycle_ms=%.3f\nlast_decide_ms=%.3f\n"
		"last_jobs_considered=%d\nlast_jobs_running=%d\nstarts=%" PRIu64 "\nstart_failures=%" PRIu64
		"\nrequeues=%" PRIu64 "\ngpu_updates=%" PRIu64 "\npriorities_set=%" PRIu64 "\nlast_error=%s\n"
		"notes=%s\nexperience_rows=%" PRIu64 "\nexperience_errors=%" PRIu64 "\nexperience_dropped=%" PRIu64
		"\nlast_experience_error=%s\n",
		(int) getpid(), stats.describe, stats.cycles, stats.fallbacks, stats.last_ms,
		stats.cycles ? stats.sum_ms / stats.cycles : 0.0, stats.max_ms, stats.last_decide_ms,
		stats.last_considered, stats.last_running, stats.starts, stats.start_failures, stats.requeues,
		stats.gpu_updates, stats.priorities, stats.last_error, stats.notes, stats.exp_rows, stats.exp_errors,
		stats.exp_dropped, stats.exp_error);
	fclose(f);
	if (rename(tmp, stats_path) != 0)
		unlink(tmp);
	xfree(tmp);
}

/* Change a pending job's GPUs (gres:gpu per node) and node count as an admin's scontrol update would.
 * Locks: config read, job write, node write, partition read, federation read (held by the caller). */
static int _update_gpus(job_record_t *job_ptr, int gpus_per_node, int nodes)
{
	job_desc_msg_t desc;
	slurm_msg_t msg;
	int rc;

	slurm_init_job_desc_msg(&desc);
	desc.job_id = job_ptr->job_id;
	desc.tres_per_node = xstrdup_printf("gres:gpu:%d", gpus_per_node);
	desc.min_nodes = desc.max_nodes = nodes;
	slurm_msg_t_init(&msg);
	msg.data = &desc;
	msg.protocol_version = SLURM_PROTOCOL_VERSION;
	rc = update_job(&msg, slurm_conf.slurm_user_id, false);
	xfree(desc.tres_per_node);
	xfree(desc.job_id_str);
	return rc;
}

/* Split `shares` into a uniform shape Slurm can express: G GPUs on each of N nodes. */
static bool _uniform(const dlsched_share_t *shares, size_t n, int *per_node)
{
	if (!n)
		return false;
	*per_node = shares[0].gpus;
	for (size_t i = 1; i < n; i++)
		if (shares[i].gpus != *per_node)
			return false;
	return true;
}

/*
 * Whether advance reservations let the job start now on the planned nodes:
 * job_test_resv() as sched/backfill calls it before it tries a job (a job of
 * a reservation only on its nodes, other jobs not on reserved nodes).
 * Locks as _update_gpus.
 */
static bool _resv_allows(job_record_t *job_ptr, const dlsched_action_t *a, time_t now)
{
	bitstr_t *avail = NULL, *exc_core = NULL;
	bool overlap = false, ok;
	time_t when = now;

	ok = job_test_resv(job_ptr, &when, false, &avail, &exc_core, &overlap, false) ==
		SLURM_SUCCESS && when <= now && avail;
	for (size_t i = 0; ok && i < a->share_count; i++)
		if (a->shares[i].node_index >= (uint32_t) node_record_count ||
		    !bit_test(avail, a->shares[i].node_index))
			ok = false;
	FREE_NULL_BITMAP(avail);
	FREE_NULL_BITMAP(exc_core);
	return ok;
}

/* Start a pending job on exactly the planned nodes, as backfill starts jobs: the other nodes are
 * excluded for the duration of one select_nodes() call. The caller checked that Slurm would start
 * the job now (dls_job_not_runnable()). Locks as _update_gpus. */
static int _start_planned(job_record_t *job_ptr, const dlsched_action_t *a, time_t now)
{
	bitstr_t *orig_exc = NULL, *exc;
	int per_node, rc;
	int requested = dls_job_gpus_requested(job_ptr);

	if (!job_ptr->details || !_uniform(a->shares, a->share_count, &per_node))
		return ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
	if (!_resv_allows(job_ptr, a, now))
		return ESLURM_RESERVATION_BUSY;
	if (requested != a->gpus || (int) job_ptr->details->min_nodes != (int) a->share_count) {
		if ((rc = _update_gpus(job_ptr, per_node, (int) a->share_count)) != SLURM_SUCCESS)
			return rc;
		stats.gpu_updates++;
	}
	exc = bit_alloc(node_record_count);
	bit_set_all(exc);
	for (size_t i = 0; i < a->share_count; i++)
		bit_clear(exc, a->shares[i].node_index);
	orig_exc = job_ptr->details->exc_node_bitmap;
	if (orig_exc)
		bit_or(exc, orig_exc);
	job_ptr->details->exc_node_bitmap = exc;
	/* A federated job starts only where its origin cluster lets it (as both Slurm schedulers). */
	if (fed_mgr_job_lock(job_ptr)) {
		rc = ESLURM_FED_JOB_LOCK;
	} else {
		rc = select_nodes(job_ptr, false, NULL, NULL, false, SLURMDB_JOB_FLAG_SCHED);
		if (rc == SLURM_SUCCESS)
			fed_mgr_job_start(job_ptr, job_ptr->start_time);
		else
			fed_mgr_job_unlock(job_ptr);
	}
	if (job_ptr->details) {	/* select_nodes() may replace the bitmap */
		FREE_NULL_BITMAP(job_ptr->details->exc_node_bitmap);
		job_ptr->details->exc_node_bitmap = orig_exc;
	} else {
		FREE_NULL_BITMAP(orig_exc);
	}
	if (rc == SLURM_SUCCESS) {
		last_job_update = time(NULL);
		info("sched/dlsched: started %pJ on %s%s%s", job_ptr, job_ptr->nodes, a->reason[0] ? ": " : "",
		     a->reason);
		power_g_job_start(job_ptr);
		if (job_ptr->batch_flag == 0)
			srun_allocate(job_ptr);
		else if (!IS_JOB_CONFIGURING(job_ptr))
			launch_job(job_ptr);
	}
	return rc;
}

/* Running jobs already logged as not requeueable: each is logged once (a small ring). */
#define DLS_REFUSED_MAX 64
static uint32_t refused[DLS_REFUSED_MAX];
static int refused_next = 0;

static bool _refused_before(uint32_t job_id)
{
	for (int i = 0; i < DLS_REFUSED_MAX; i++)
		if (refused[i] == job_id)
			return true;
	refused[refused_next] = job_id;
	refused_next = (refused_next + 1) % DLS_REFUSED_MAX;
	return false;
}

/*
 * Checkpoint signal, then requeue: the job gets SIGUSR1 to save its state, then Slurm's normal
 * requeue (SIGTERM, KillWait, SIGKILL) ends the run and puts it back in the queue. A job Slurm
 * cannot requeue (dls_job_requeueable()) is never signalled: it would lose its work and keep
 * running, or end. Locks as _update_gpus.
 */
static int _signal_and_requeue(job_record_t *job_ptr, const char *why)
{
	int rc;

	if (!dls_job_requeueable(job_ptr)) {
		if (!_refused_before(job_ptr->job_id))
			info("sched/dlsched: %pJ cannot be requeued (%s); not preempted (%s)", job_ptr,
			     !job_ptr->batch_flag ? "not a batch job" : "its requeue is disabled", why);
		return ESLURM_DISABLED;
	}
	(void) job_signal(job_ptr, SIGUSR1, KILL_JOB_BATCH, slurm_conf.slurm_user_id, false);
	rc = job_requeue(slurm_conf.slurm_user_id, job_ptr->job_id, NULL, false, 0);
	if (rc == SLURM_SUCCESS) {
		info("sched/dlsched: requeued %pJ (%s)", job_ptr, why);
		stats.requeues++;
	} else {
		info("sched/dlsched: cannot requeue %pJ (%s): %s", job_ptr, why, slurm_strerror(rc));
	}
	return rc;
}

static void _remember_resize(uint32_t job_id, int per_node, int nodes)
{
	for (int i = 0; i < resize_cnt; i++) {
		if (resizes[i].job_id == job_id) {
			resizes[i].gpus_per_node = per_node;
			resizes[i].nodes = nodes;
			return;
		}
	}
	xrecalloc(resizes, resize_cnt + 1, sizeof(dls_resize_t));
	resizes[resize_cnt].job_id = job_id;
	resizes[resize_cnt].gpus_per_node = per_node;
	resizes[resize_cnt].nodes = nodes;
	resize_cnt++;
}

/* Resizes of requeued jobs take effect once they are pending again. */
static void _apply_deferred_resizes(void)
{
	int kept = 0;

	for (int i = 0; i < resize_cnt; i++) {
		job_record_t *job_ptr = find_job_record(resizes[i].job_id);

		if (!job_ptr || IS_JOB_FINISHED(job_ptr))
			continue;
		if (IS_JOB_PENDING(job_ptr) && !IS_JOB_COMPLETING(job_ptr)) {
			if (_update_gpus(job_ptr, resizes[i].gpus_per_node, resizes[i].nodes) == SLURM_SUCCESS)
				stats.gpu_updates++;
			continue;
		}
		resizes[kept++] = resizes[i];
	}
	resize_cnt = kept;
}

/*
 * Apply one cycle's decisions. Every job is re-checked: the queue moved while the core decided.
 * Locks: config read, job write, node write, partition read, federation read (held by the caller).
 */
static void _apply(dlsched_decisions_t *d, time_t now)
{
	size_t n = dlsched_decisions_count(d), order_cnt = 0;
	const uint32_t *order = dlsched_decisions_order(d, &order_cnt);
	dlsched_action_t a;
	dlsched_error_t err;
	ListIterator it;
	job_record_t *job_ptr;
	bool changed = false;
	/* Both Slurm schedulers start nothing until the federation's siblings are synced. */
	bool may_start = fed_mgr_sibs_synced();
	const char *why;

	/* Deadlines into the admin comment, for sacct. */
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it)))
		if (!IS_JOB_FINISHED(job_ptr) && dls_record_deadline(job_ptr))
			changed = true;
	list_iterator_destroy(it);

	_apply_deferred_resizes();

	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	for (size_t i = 0; i < n; i++) {
		if (dlsched_decisions_get(d, i, &a, &err) != DLSCHED_OK)
			continue;
		job_ptr = find_job_record(a.job_id);
		if (!job_ptr)
			continue;
		switch (a.kind) {
		case DLSCHED_START:
			if (!may_start)
				break;
			/* Only what Slurm's own schedulers would start now. */
			if ((why = dls_job_not_runnable(job_ptr, now))) {
				debug("sched/dlsched: %pJ not started: %s", job_ptr, why);
				break;
			}
			if (_start_planned(job_ptr, &a, now) == SLURM_SUCCESS) {
				stats.starts++;
				changed = true;
			} else {
				/* Left to Slurm's main scheduler at its dlsched priority (an
				 * administrator's priority stays). */
				stats.start_failures++;
				if (!job_ptr->direct_set_prio)
					job_ptr->priority = DLSCHED_PRIORITY_TOP;
				debug("sched/dlsched: %pJ not started on its planned nodes; priority %u",
				      job_ptr, job_ptr->priority);
			}
			break;
		case DLSCHED_RESIZE:
			if (IS_JOB_PENDING(job_ptr)) {
				int per_node;

				if (_uniform(a.shares, a.share_count, &per_node) &&
				    _update_gpus(job_ptr, per_node, (int) a.share_count) == SLURM_SUCCESS)
					stats.gpu_updates++;
			} else if (IS_JOB_RUNNING(job_ptr)) {
				int per_node;

				if (_uniform(a.shares, a.share_count, &per_node) &&
				    _signal_and_requeue(job_ptr, a.reason) == SLURM_SUCCESS)
					_remember_resize(job_ptr->job_id, per_node, (int) a.share_count);
			}
			changed = true;
			break;
		case DLSCHED_REQUEUE:
			if (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr))
				(void) _signal_and_requeue(job_ptr, a.reason);
			changed = true;
			break;
		default:
			break;	/* SET_PRIORITY: from the order below; LOAN/RECLAIM: later */
		}
	}

	/*
	 * Queue order: most urgent first, all above priority/basic's range. A
	 * priority an administrator set is never overwritten: the core placed the
	 * job by it (ahead of or behind every job ordered here), and Slurm's main
	 * scheduler sees the same. Held jobs (0) stay held.
	 */
	for (size_t r = 0; r < order_cnt; r++) {
		uint32_t prio;

		job_ptr = find_job_record(order[r]);
		if (!job_ptr || !IS_JOB_PENDING(job_ptr) || job_ptr->priority == 0 ||
		    job_ptr->direct_set_prio)
			continue;
		prio = r < DLSCHED_PRIORITY_TOP - DLSCHED_PRIORITY_FLOOR ?
			DLSCHED_PRIORITY_TOP - (uint32_t) r : DLSCHED_PRIORITY_FLOOR;
		if (job_ptr->priority != prio) {
			job_ptr->priority = prio;
			stats.priorities++;
			changed = true;
		}
	}
	if (changed)
		last_job_update = now;
}

/*
 * While dlsched cannot decide, Slurm's own order stands: pending jobs that still carry a dlsched
 * priority get the one Slurm's priority plugin gives (set_job_prio), in job_list order, which is
 * submission order. Held jobs and priorities an administrator set are not touched. Takes the
 * locks itself (config read, job write, node write, partition read, federation read); returns how
 * many jobs it changed.
 */
static int _restore_slurm_priorities(void)
{
	slurmctld_lock_t write_lock = { READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK };
	ListIterator it;
	job_record_t *job_ptr;
	int n = 0;

	lock_slurmctld(write_lock);
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!IS_JOB_PENDING(job_ptr) || job_ptr->priority == 0 ||
		    job_ptr->priority < DLSCHED_PRIORITY_FLOOR || job_ptr->direct_set_prio)
			continue;
		set_job_prio(job_ptr);	/* only the priority field changes */
		n++;
	}
	list_iterator_destroy(it);
	if (n)
		last_job_update = time(NULL);
	unlock_slurmctld(write_lock);
	return n;
}

/* The current scheduler's experience counters when last looked at (they start at 0 with it). */
static dlsched_experience_stats_t exp_seen;

/*
 * After a cycle: add what the scheduler wrote to (or failed to write to) the experience table to
 * the stats. A failed write never failed the cycle; it is logged as an error when it first happens
 * and when its reason changes, else at debug, so that a busy or unwritable DB does not flood the log.
 */
static void _experience_after_cycle(dlsched_scheduler_t *sched, uint64_t cycle)
{
	dlsched_experience_stats_t x;

	memset(&x, 0, sizeof(x));
	x.struct_size = sizeof(x);
	if (dlsched_scheduler_experience_stats(sched, &x) != DLSCHED_OK || !x.enabled)
		return;
	stats.exp_rows += x.rows - exp_seen.rows;
	stats.exp_dropped += x.dropped - exp_seen.dropped;
	if (x.errors > exp_seen.errors) {
		stats.exp_errors += x.errors - exp_seen.errors;
		if (xstrcmp(x.last_error, stats.exp_error))
			error("sched/dlsched: cycle %" PRIu64 ": experience not recorded (%s); the cycle goes on",
			      cycle, x.last_error);
		else
			debug("sched/dlsched: cycle %" PRIu64 ": experience not recorded (%s)", cycle, x.last_error);
		strlcpy(stats.exp_error, x.last_error, sizeof(stats.exp_error));
	}
	exp_seen = x;
}

/*
 * After every (re)load: log the scheduler's notes with info(), one line each ("sched/dlsched: note:
 * dl2: model PATH (...)", or why the learned ordering fell back to ModelFallback=, and where
 * experience is recorded), and keep them on one line for the stats file.
 */
static void _log_notes(dlsched_scheduler_t *sched)
{
	char notes[sizeof(stats.notes)] = "";
	char *line, *save = NULL;

	stats.notes[0] = '\0';
	if (!sched)
		return;
	/* DLSCHED_EINVAL: cut short; what fits is still worth logging. */
	(void) dlsched_scheduler_notes(sched, notes, sizeof(notes));
	strlcpy(stats.notes, notes, sizeof(stats.notes));
	for (char *p = stats.notes; *p; p++)
		if (*p == '\n')
			*p = '|';
	for (line = strtok_r(notes, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		info("sched/dlsched: note: %s", line);
}

/*
 * Jobs the snapshot left out because Slurm would not start them now, which
 * still hold a dlsched priority from an earlier cycle: back to the priority
 * Slurm's priority plugin gives them (set_job_prio), below every job dlsched
 * orders, until they can start. Locks: job write (held by the caller).
 */
static void _unorder_left_out(dls_snapshot_t *snap)
{
	for (size_t i = 0; i < snap->left_out_cnt; i++) {
		job_record_t *job_ptr = find_job_record(snap->left_out[i]);

		if (!job_ptr || !IS_JOB_PENDING(job_ptr) || job_ptr->priority == 0 ||
		    job_ptr->direct_set_prio || job_ptr->priority < DLSCHED_PRIORITY_FLOOR)
			continue;
		set_job_prio(job_ptr);
		stats.priorities++;
		last_job_update = time(NULL);
	}
}

static void _cycle(dlsched_scheduler_t *sched, uint64_t cycle)
{
	/* The lock set is Slurm's own (sched/backfill's, and what job updates take): config read, job
	 * write, node write, partition read, federation read. The snapshot needs write locks too:
	 * Slurm's checks of whether a job can start update its state reason and begin time. */
	slurmctld_lock_t write_lock = { READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK };
	double t0 = _now_ms(), t1, t2;
	time_t now = time(NULL);
	dls_snapshot_t *snap;
	dlsched_decisions_t *d = NULL;
	dlsched_error_t err;
	int rc, n_restored;

	lock_slurmctld(write_lock);
	snap = dls_snapshot_take(now, cycle, true);
	_unorder_left_out(snap);
	unlock_slurmctld(write_lock);

	t1 = _now_ms();
	rc = dlsched_scheduler_decide(sched, &snap->view, &d, &err);
	t2 = _now_ms();
	_experience_after_cycle(sched, cycle);
	stats.last_considered = snap->pending;
	stats.last_running = snap->running;
	stats.last_decide_ms = t2 - t1;
	if (rc != DLSCHED_OK) {
		stats.fallbacks++;
		snprintf(stats.last_error, sizeof(stats.last_error), "cycle %" PRIu64 ": %s", cycle, err.message);
		error("sched/dlsched: cycle %" PRIu64 " cannot decide (%s); Slurm's own order stands this cycle",
		      cycle, err.message);
		n_restored = _restore_slurm_priorities();
		if (n_restored)
			info("sched/dlsched: %d pending job(s) back at Slurm's own priority", n_restored);
	} else {
		lock_slurmctld(write_lock);
		_apply(d, time(NULL));
		unlock_slurmctld(write_lock);
		dlsched_decisions_free(d);
	}
	dls_snapshot_free(snap);

	stats.cycles++;
	stats.last_ms = _now_ms() - t0;
	stats.sum_ms += stats.last_ms;
	if (stats.last_ms > stats.max_ms)
		stats.max_ms = stats.last_ms;
	debug("sched/dlsched: cycle %" PRIu64 ": %d pending, %d running, %.2f ms (decide %.2f ms)", cycle,
	      stats.last_considered, stats.last_running, stats.last_ms, stats.last_decide_ms);
	_write_stats();
}

static void *_sched_agent(void *arg)
{
	dlsched_scheduler_t *sched = NULL;
	double interval = 60;
	uint64_t cycle = 0;

	(void) arg;
	for (;;) {
		struct timespec ts;
		struct timeval now;
		bool reload;

		slurm_mutex_lock(&term_lock);
		reload = !sched || reconfig;
		reconfig = false;
		slurm_mutex_unlock(&term_lock);
		if (reload) {
			bool had = sched != NULL;

			if (sched)
				dlsched_scheduler_destroy(sched);
			/* Every (re)load builds the policies afresh: a learned ordering loads its
			 * ModelFile= again. libtorch itself stays loaded with this plugin. */
			sched = dls_scheduler_load(plugin_type, NULL);
			interval = dls_config_double(sched, "SchedInterval", 60);
			memset(&exp_seen, 0, sizeof(exp_seen));
			_log_notes(sched);
			stats.describe[0] = '\0';
			if (sched)
				(void) dlsched_scheduler_describe(sched, stats.describe, sizeof(stats.describe));
			else {
				int n;

				snprintf(stats.describe, sizeof(stats.describe),
					 "none (dlsched.conf missing or invalid: Slurm decides)");
				/* Once, when dlsched stops deciding: Slurm's order, not dlsched's last. */
				if (had && (n = _restore_slurm_priorities()))
					info("sched/dlsched: %d pending job(s) back at Slurm's own priority", n);
			}
		}
		if (sched)
			_cycle(sched, ++cycle);
		else {
			stats.fallbacks++;
			_write_stats();
		}

		gettimeofday(&now, NULL);
		ts.tv_sec = now.tv_sec + (time_t) interval;
		ts.tv_nsec = now.tv_usec * 1000 + (long) ((interval - (time_t) interval) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		slurm_mutex_lock(&term_lock);
		if (!stop_thread && !reconfig)
			pthread_cond_timedwait(&term_cond, &term_lock, &ts);
		if (stop_thread) {
			slurm_mutex_unlock(&term_lock);
			break;
		}
		slurm_mutex_unlock(&term_lock);
	}
	if (sched)
		dlsched_scheduler_destroy(sched);
	return NULL;
}

/* Called by slurmctld when the plugin loads; no locks held. */
extern int init(void)
{
	verbose("sched/dlsched: init (dlsched %s)", dlsched_version());
	/* Before the scheduler thread creates the first scheduler. */
	if (dls_models_install())
		verbose("sched/dlsched: learned policies (dl2, dual-agent) available");
	else
		verbose("sched/dlsched: built without libtorch: no learned policies (Policy=dl2 is unknown)");
	memset(&stats, 0, sizeof(stats));
	xfree(stats_path);
	stats_path = xstrdup_printf("%s/dlsched-sched.stats", slurm_conf.state_save_location);
	stop_thread = false;
	slurm_thread_create(&sched_thread, _sched_agent, NULL);
	return SLURM_SUCCESS;
}

/* Called at shutdown; no locks held. */
extern void fini(void)
{
	slurm_mutex_lock(&term_lock);
	stop_thread = true;
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
	if (sched_thread) {
		pthread_join(sched_thread, NULL);
		sched_thread = 0;
	}
	xfree(resizes);
	resize_cnt = 0;
	xfree(stats_path);
}

/* scontrol reconfigure: dlsched.conf is read again before the next cycle. */
extern int sched_p_reconfig(void)
{
	slurm_mutex_lock(&term_lock);
	reconfig = true;
	slurm_cond_signal(&term_cond);	/* do not wait out a long SchedInterval */
	slurm_mutex_unlock(&term_lock);
	return SLURM_SUCCESS;
}
