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
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
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
#include "stopping.h"

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
	double last_locked_ms;		/* the cycle's write locks held: snapshot + apply (not waiting) */
	double max_locked_ms;
	int last_considered;
	int last_running;
	uint64_t starts;
	uint64_t start_failures;
	uint64_t requeues;
	uint64_t checkpoint_requests;	/* two-step preemptions begun */
	uint64_t requeued_checkpointed;	/* ... requeued after the job reported its checkpoint */
	uint64_t requeued_grace;	/* ... when the grace ran out */
	uint64_t requeued_exited;	/* ... after the job ended on the request */
	uint64_t stops_gone;		/* ... ended otherwise (cancelled, finished, requeued by others) */
	uint64_t preemption_rows;	/* preemption rows written to the profile DB */
	uint64_t preemption_row_errors;
	uint64_t admission_verdicts;	/* deadline jobs marked best-effort, held or cancelled */
	uint64_t resizes;		/* running jobs requeued at a new size */
	uint64_t resize_failures;	/* ... whose new size could not be set after the requeue */
	uint64_t loans;			/* inference nodes lent to training */
	uint64_t reclaims;		/* ... taken back */
	uint64_t late_reclaims;		/* ... not free of training within ReclaimTimeout= */
	uint64_t speed_reads;		/* reads of the profile DB's epochs per node (speed observations) */
	int speed_samples;		/* runs the last cycle's view carried */
	double inference_demand;	/* as last read */
	char demand_status[600];	/* why no demand counts; "" when one does */
	char profile_status[512];	/* why ProfileDB= cannot be read; "" when it can */
	uint64_t gpu_updates;
	uint64_t priorities;
	char last_error[600];
	char describe[512];
	char safety[512];		/* what the safety rules follow: "" (the scheduler), or why not */
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
		"last_locked_ms=%.3f\nmax_locked_ms=%.3f\n"
		"last_jobs_considered=%d\nlast_jobs_running=%d\nstarts=%" PRIu64 "\nstart_failures=%" PRIu64
		"\nrequeues=%" PRIu64 "\ngpu_updates=%" PRIu64 "\npriorities_set=%" PRIu64 "\nlast_error=%s\n"
		"notes=%s\nexperience_rows=%" PRIu64 "\nexperience_errors=%" PRIu64 "\nexperience_dropped=%" PRIu64
		"\nlast_experience_error=%s\ncheckpoint_requests=%" PRIu64 "\nrequeued_after_checkpoint=%" PRIu64
		"\nrequeued_after_grace=%" PRIu64 "\nrequeued_after_exit=%" PRIu64 "\nstops_gone=%" PRIu64
		"\nstopping_now=%d\npreemption_rows=%" PRIu64 "\npreemption_row_errors=%" PRIu64
		"\nprofile_db_status=%s\nadmission_verdicts=%" PRIu64 "\nresizes=%" PRIu64 "\nloans=%" PRIu64 "\nreclaims=%" PRIu64
		"\nlate_reclaims=%" PRIu64 "\nloaned_nodes=%d\ninference_demand=%.4f\ninference_demand_status=%s\n"
		"speed_reads=%" PRIu64 "\nspeed_samples=%d\nstopping_write_errors=%" PRIu64 "\nresize_failures=%" PRIu64 "\n"
		"stopping_last_error=%s\nsafety_settings=%s\n",
		(int) getpid(), stats.describe, stats.cycles, stats.fallbacks, stats.last_ms,
		stats.cycles ? stats.sum_ms / stats.cycles : 0.0, stats.max_ms, stats.last_decide_ms,
		stats.last_locked_ms, stats.max_locked_ms,
		stats.last_considered, stats.last_running, stats.starts, stats.start_failures, stats.requeues,
		stats.gpu_updates, stats.priorities, stats.last_error, stats.notes, stats.exp_rows, stats.exp_errors,
		stats.exp_dropped, stats.exp_error, stats.checkpoint_requests, stats.requeued_checkpointed,
		stats.requeued_grace, stats.requeued_exited, stats.stops_gone, dls_stops_count(),
		stats.preemption_rows, stats.preemption_row_errors, stats.profile_status, stats.admission_verdicts,
		stats.resizes, stats.loans, stats.reclaims, stats.late_reclaims, dls_loans_count(), stats.inference_demand,
		stats.demand_status, stats.speed_reads, stats.speed_samples, dls_stops_write_errors(),
		stats.resize_failures, dls_stops_last_error(), stats.safety);
	fclose(f);
	if (rename(tmp, stats_path) != 0)
		unlink(tmp);
	xfree(tmp);
}

/*
 * The job's tres_per_node with its GPU count per node set to `per_node`, everything else as the
 * user wrote it: the GPU type (gres:gpu:v100:2 -> gres:gpu:v100:4) and any other per-node GRES.
 * NULL when its GPUs are not given per node (sbatch --gpus, --gpus-per-task: Slurm refuses a
 * per-node count beside them, so such a job is never resized) or it has no GPU entry.
 */
static char *_tres_per_node_with(job_record_t *job_ptr, int per_node)
{
	char *copy, *tok, *save = NULL, *out = NULL;
	bool found = false;

	if (!dls_job_gpus_per_node(job_ptr) || !job_ptr->tres_per_node)
		return NULL;
	copy = xstrdup(job_ptr->tres_per_node);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *entry = NULL;

		if (!found && (!xstrncmp(tok, "gres:gpu", 8) || !xstrncmp(tok, "gres/gpu", 8)) &&
		    (tok[8] == '\0' || tok[8] == ':')) {
			/* gres:gpu[:TYPE][:COUNT]: the type is what is not a number. */
			char *type = tok[8] == ':' ? tok + 9 : NULL;
			char *colon = type ? strchr(type, ':') : NULL;

			if (colon)
				*colon = '\0';
			else if (type && type[strspn(type, "0123456789")] == '\0')
				type = NULL;	/* gres:gpu:N */
			xstrfmtcat(entry, "%.8s%s%s:%d", tok, type ? ":" : "", type ? type : "", per_node);
			found = true;
		} else {
			entry = xstrdup(tok);
		}
		xstrfmtcat(out, "%s%s", out ? "," : "", entry);
		xfree(entry);
	}
	xfree(copy);
	if (!found)
		xfree(out);
	return out;
}

/* Sets a pending job's tres_per_node and node count as an admin's scontrol update would. */
static int _update_shape(job_record_t *job_ptr, const char *tres_per_node, uint32_t min_nodes, uint32_t max_nodes)
{
	job_desc_msg_t desc;
	slurm_msg_t msg;
	int rc;

	slurm_init_job_desc_msg(&desc);
	desc.job_id = job_ptr->job_id;
	desc.tres_per_node = xstrdup(tres_per_node);
	desc.min_nodes = min_nodes;
	desc.max_nodes = max_nodes;
	slurm_msg_t_init(&msg);
	msg.data = &desc;
	msg.protocol_version = SLURM_PROTOCOL_VERSION;
	rc = update_job(&msg, slurm_conf.slurm_user_id, false);
	xfree(desc.tres_per_node);
	xfree(desc.job_id_str);
	return rc;
}

/* Change a pending job's GPUs per node (keeping their type and other GRES, _tres_per_node_with())
 * and node count. ESLURM_NOT_SUPPORTED for a job whose GPUs are not per node. Locks: config read,
 * job write, node write, partition read, federation read (held by the caller). */
static int _update_gpus(job_record_t *job_ptr, int gpus_per_node, int nodes)
{
	char *tres = _tres_per_node_with(job_ptr, gpus_per_node);
	int rc;

	if (!tres)
		return ESLURM_NOT_SUPPORTED;
	/* What the user asked for, kept at the first resize (the policies size around it). */
	(void) dls_admin_comment_once(job_ptr, "dl_requested", (long) dls_job_gpus_requested(job_ptr));
	rc = _update_shape(job_ptr, tres, nodes, nodes);
	xfree(tres);
	return rc;
}

/* Whether sched/dlsched can give the job another GPU count (its GPUs are per node). */
static bool _resizable(job_record_t *job_ptr)
{
	char *tres = _tres_per_node_with(job_ptr, 1);
	bool ok = tres != NULL;

	xfree(tres);
	return ok;
}

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

/*
 * Whether the job's own node count allows n nodes: a user who gave sbatch -N
 * (min_nodes, and max_nodes when set) fixed the job's shape; without -N
 * (max_nodes 0) any number of nodes at or above min_nodes is the job's.
 */
static bool _nodes_allowed(job_record_t *job_ptr, size_t n)
{
	uint32_t lo = job_ptr->details->min_nodes, hi = job_ptr->details->max_nodes;

	return n >= lo && (!hi || n <= hi);
}

/* Start a pending job on exactly the planned nodes, as backfill starts jobs: the other nodes are
 * excluded for the duration of one select_nodes() call. A job whose node count (sbatch -N) does
 * not allow the planned number of nodes keeps its shape: it starts at its own GPUs where Slurm's
 * select plugin puts it, or not at all when the plan resized it. The caller checked that Slurm
 * would start the job now (dls_job_not_runnable()). Locks as _update_gpus. */
static int _start_planned(job_record_t *job_ptr, const dlsched_action_t *a, time_t now)
{
	bitstr_t *orig_exc = NULL, *exc;
	int per_node, rc;
	int requested = dls_job_gpus_requested(job_ptr);
	bool own_shape;
	char *orig_tres = NULL;
	uint32_t orig_min = 0, orig_max = 0;

	if (!job_ptr->details || !_uniform(a->shares, a->share_count, &per_node))
		return ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
	if (!_resv_allows(job_ptr, a, now))
		return ESLURM_RESERVATION_BUSY;
	own_shape = !_nodes_allowed(job_ptr, a->share_count);
	if (own_shape && requested != a->gpus)
		return ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
	if (!own_shape && (requested != a->gpus || (int) job_ptr->details->min_nodes != (int) a->share_count)) {
		/* Undone if the start fails: the job waits as its user shaped it. */
		orig_tres = xstrdup(job_ptr->tres_per_node);
		orig_min = job_ptr->details->min_nodes;
		orig_max = job_ptr->details->max_nodes;
		if ((rc = _update_gpus(job_ptr, per_node, (int) a->share_count)) != SLURM_SUCCESS) {
			xfree(orig_tres);
			return rc;
		}
		stats.gpu_updates++;
	}
	/* Ordered by dlsched (select/dlsched_cons_tres starts an elastic job only once it is). */
	if (!job_ptr->direct_set_prio && job_ptr->priority && job_ptr->priority < DLSCHED_PRIORITY_FLOOR)
		job_ptr->priority = DLSCHED_PRIORITY_TOP;
	exc = bit_alloc(node_record_count);
	if (!own_shape)
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
	if (rc != SLURM_SUCCESS && orig_tres) {
		int undo = _update_shape(job_ptr, orig_tres, orig_min, orig_max);

		if (undo != SLURM_SUCCESS)
			error("sched/dlsched: %pJ did not start at its planned size and its own (tres_per_node=%s, %u-%u nodes) cannot be restored: %s",
			      job_ptr, orig_tres, orig_min, orig_max, slurm_strerror(undo));
	}
	xfree(orig_tres);
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

/* PreemptGrace= and CheckpointSignal= of the loaded dlsched.conf, and whether it names a profile
 * DB (checkpoint reports can arrive only through one). */
static double preempt_grace;		/* PreemptGrace=, ReclaimTimeout=: read at every (re)load */
static int checkpoint_signal = SIGUSR1;
static bool profile_db = false;

/* The requeue that ends a preemption. Locks as _update_gpus. */
static int _requeue(job_record_t *job_ptr, const char *why)
{
	int rc = job_requeue(slurm_conf.slurm_user_id, job_ptr->job_id, NULL, false, 0);

	if (rc == SLURM_SUCCESS) {
		info("sched/dlsched: requeued %pJ (%s)", job_ptr, why);
		stats.requeues++;
	} else {
		info("sched/dlsched: cannot requeue %pJ (%s): %s", job_ptr, why, slurm_strerror(rc));
	}
	return rc;
}

/*
 * Dependants of the jobs being preempted. A job that saves and exits on the checkpoint request has
 * not finished: between its exit and its requeue Slurm sees it ended, and would start a pipeline's
 * next stage (--dependency=afterany, or afterok when it exits 0) on an unfinished model, and keep
 * the dependency fulfilled (or failed) after the requeue. So while a job is stopping, its pending
 * dependants may not begin before its grace is over (their begin time is moved there; a minute
 * more for the requeue); once it is requeued their dependency on it is unfulfilled again (and one
 * its exit made "never satisfied" waits again); when the stop ends, their own begin time comes back.
 * Kept in memory: after a slurmctld restart a moved begin time simply runs out.
 */
#define DLS_DEPENDANT_MARGIN_S 60
typedef struct {
	uint32_t job_id;	/* the dependant */
	uint32_t of;		/* the job being preempted */
	time_t begin;		/* its own begin time */
	time_t set;		/* the one set here */
} dls_dependant_t;
static dls_dependant_t *dependants = NULL;
static int dependant_cnt = 0;

static bool _depends_on(job_record_t *job_ptr, uint32_t of)
{
	depend_spec_t *dep;
	ListIterator it;

	if (!job_ptr->details || !job_ptr->details->depend_list)
		return false;
	it = list_iterator_create(job_ptr->details->depend_list);
	while ((dep = list_next(it)) && dep->job_id != of)
		;
	list_iterator_destroy(it);
	return dep != NULL;
}

/* Holds back the pending dependants of the jobs being preempted (new ones too). Locks: job write. */
static void _hold_dependants(void)
{
	ListIterator it;
	job_record_t *job_ptr;

	if (!dls_stops_count())
		return;
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!IS_JOB_PENDING(job_ptr) || !job_ptr->details || !job_ptr->details->depend_list)
			continue;
		for (int i = 0; i < dls_stops_count(); i++) {
			dls_stop_t *s = dls_stops_at(i);
			time_t until = (time_t) s->deadline + DLS_DEPENDANT_MARGIN_S;
			dls_dependant_t *d = NULL;

			if (!_depends_on(job_ptr, s->job_id))
				continue;
			for (int k = 0; k < dependant_cnt && !d; k++)
				if (dependants[k].job_id == job_ptr->job_id && dependants[k].of == s->job_id)
					d = &dependants[k];
			if (!d) {
				xrecalloc(dependants, dependant_cnt + 1, sizeof(*dependants));
				d = &dependants[dependant_cnt++];
				d->job_id = job_ptr->job_id;
				d->of = s->job_id;
				d->begin = job_ptr->details->begin_time;
			}
			if (job_ptr->details->begin_time < until) {
				job_ptr->details->begin_time = until;
				d->set = until;
				last_job_update = time(NULL);
				info("sched/dlsched: %pJ depends on JobId=%u, which is being preempted: not before its requeue",
				     job_ptr, s->job_id);
			}
		}
	}
	list_iterator_destroy(it);
}

/* The stop of `of` ended; `requeued`: it runs again later, so its dependants wait for it again.
 * Locks: job write. */
static void _release_dependants(uint32_t of, bool requeued)
{
	int kept = 0;

	for (int k = 0; k < dependant_cnt; k++) {
		dls_dependant_t *d = &dependants[k];
		job_record_t *job_ptr;

		if (d->of != of) {
			dependants[kept++] = *d;
			continue;
		}
		job_ptr = find_job_record(d->job_id);
		if (!job_ptr || !IS_JOB_PENDING(job_ptr) || !job_ptr->details)
			continue;
		if (requeued && job_ptr->details->depend_list) {
			ListIterator it = list_iterator_create(job_ptr->details->depend_list);
			depend_spec_t *dep;

			while ((dep = list_next(it)))
				if (dep->job_id == of && dep->depend_state != DEPEND_NOT_FULFILLED)
					dep->depend_state = DEPEND_NOT_FULFILLED;
			list_iterator_destroy(it);
			job_ptr->bit_flags |= JOB_DEPENDENT;
			if (job_ptr->state_reason == WAIT_DEP_INVALID) {
				job_ptr->state_reason = WAIT_DEPENDENCY;
				xfree(job_ptr->state_desc);
			}
		}
		if (d->set && job_ptr->details->begin_time == d->set)
			job_ptr->details->begin_time = d->begin;
		last_job_update = time(NULL);
	}
	dependant_cnt = kept;
}

/*
 * A preemption's first step: the checkpoint request (the protocol's signal to the batch step; see
 * dlsched-protocol(7)). The job is requeued later, by _check_stops(), once it reports its checkpoint
 * through the profile DB, or has ended on the request, or when its grace runs out, whichever comes
 * first; meanwhile its GPUs count as freeing. A grace of 0 requeues at once (Slurm's own requeue:
 * SIGTERM, KillWait, SIGKILL). A job Slurm cannot requeue (dls_job_requeueable()) is never
 * signalled: it would lose its work and keep running, or end. `per_node` and `nodes` give a
 * resize's new shape (0: none). Locks as _update_gpus.
 */
static int _request_checkpoint(job_record_t *job_ptr, const dlsched_action_t *a, time_t now, int per_node,
			       int nodes)
{
	dls_stop_t stop, *s;
	double grace = a->grace >= 0 ? a->grace : preempt_grace;

	if (!dls_job_requeueable(job_ptr)) {
		if (!_refused_before(job_ptr->job_id))
			info("sched/dlsched: %pJ cannot be requeued (%s); not preempted (%s)", job_ptr,
			     !job_ptr->batch_flag ? "not a batch job" : "its requeue is disabled", a->reason);
		return ESLURM_DISABLED;
	}
	if (dls_stops_find(job_ptr->job_id))
		return SLURM_SUCCESS;	/* asked already */
	memset(&stop, 0, sizeof(stop));
	stop.job_id = job_ptr->job_id;
	stop.requested = _now_ms() / 1000.0;
	stop.deadline = grace > 0 ? stop.requested + grace : stop.requested;
	stop.start_time = job_ptr->start_time;
	stop.restart_cnt = job_ptr->restart_cnt;
	stop.gpus = dls_job_gpus_allocated(job_ptr);
	stop.per_node = per_node;
	stop.nodes = nodes;
	stop.predicted_suspend = a->predicted_suspend;
	stop.predicted_resume = a->predicted_resume;
	strlcpy(stop.reason, a->reason, sizeof(stop.reason));
	/* On disk before the signal: a job that checkpoints and exits on it is requeued even if
	 * slurmctld restarts meanwhile. A preemption that cannot be remembered is not begun. */
	if (!(s = dls_stops_add(&stop))) {
		error("sched/dlsched: %pJ not preempted (%s): the stopping table cannot be written", job_ptr,
		      a->reason);
		return ESLURM_WRITING_TO_FILE;
	}
	stats.checkpoint_requests++;
	if (grace > 0 && job_signal(job_ptr, checkpoint_signal, KILL_JOB_BATCH, slurm_conf.slurm_user_id,
				    false) == SLURM_SUCCESS) {
		info("sched/dlsched: asked %pJ to checkpoint (%s; predicted %.0f s to stop, %.0f s to resume); "
		     "it is requeued when it reports its checkpoint, at the latest in %.0f s",
		     job_ptr, a->reason, a->predicted_suspend, a->predicted_resume, grace);
		_hold_dependants();
		return SLURM_SUCCESS;
	}
	/* No grace, or the signal could not be sent: Slurm's requeue at once. The row is still kept
	 * (with its outcome) so that the preemption is counted. */
	if (s->deadline != s->requested) {
		s->deadline = s->requested;
		(void) dls_stops_add(s);
	}
	return SLURM_SUCCESS;
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

/* Jobs whose resize failed once (a small ring): never resized again by checkpoint and requeue. */
#define DLS_RESIZE_REFUSED_MAX 64
static uint32_t resize_refused[DLS_RESIZE_REFUSED_MAX];
static int resize_refused_next = 0;

static void _resize_refused(uint32_t job_id)
{
	resize_refused[resize_refused_next] = job_id;
	resize_refused_next = (resize_refused_next + 1) % DLS_RESIZE_REFUSED_MAX;
}

static bool _was_resize_refused(uint32_t job_id)
{
	for (int i = 0; i < DLS_RESIZE_REFUSED_MAX; i++)
		if (resize_refused[i] == job_id)
			return true;
	return false;
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
			int rc = _update_gpus(job_ptr, resizes[i].gpus_per_node, resizes[i].nodes);

			if (rc == SLURM_SUCCESS) {
				stats.gpu_updates++;
			} else {
				/* It runs again at its old size: the requeue was for nothing. Not tried
				 * again for this job. */
				stats.resize_failures++;
				_resize_refused(job_ptr->job_id);
				error("sched/dlsched: %pJ requeued to run at %d GPUs x %d nodes, but the new size cannot be set (%s); it runs again at its old size",
				      job_ptr, resizes[i].gpus_per_node, resizes[i].nodes, slurm_strerror(rc));
			}
			continue;
		}
		resizes[kept++] = resizes[i];
	}
	resize_cnt = kept;
}

/*
 * The Admission policy's verdict on a pending job (deadline: DeadlineInfeasible=). Best-effort: the
 * reason is shown in squeue's REASON column (the job is ordered behind the admitted ones). Hold: an
 * administrator's hold with the reason (scontrol release lets it go; the next cycle judges it
 * again). Cancel: ended as Slurm's own --deadline check ends a job (state DEADLINE), the reason
 * logged. Only pending jobs with a deadline are touched, except by Wait: a job of a higher
 * priority class held back by deadline work it may not stop shows why. Locks as _apply.
 */
/*
 * A job this plugin held carries "dl_held=<epoch s>" in its admin comment (the
 * first hold's time), so that an administrator's release sticks across a
 * restart of slurmctld, as the job's other dl_ words do; the release itself is
 * recorded as "dl_released=<epoch s>" when first seen.
 */
static bool _was_held(job_record_t *job_ptr)
{
	return dls_admin_comment_value(job_ptr, "dl_held") >= 0;
}

static bool _admission(job_record_t *job_ptr, const dlsched_action_t *a, time_t now)
{
	int verdict = a->admission;

	/*
	 * Wait: a job of a higher priority class that deadline work holds back
	 * (it would make that work late): only the reason, in squeue's REASON.
	 */
	if (verdict == DLSCHED_ADMIT_WAIT) {
		/* The reason up to its ':' (the jobs and seconds after it change as they run). */
		size_t head = strcspn(a->reason, ":");
		bool again;

		if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr) || job_ptr->priority == 0 ||
		    !xstrcmp(job_ptr->state_desc, a->reason))
			return false;
		again = job_ptr->state_desc && !strncmp(job_ptr->state_desc, a->reason, head);
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(a->reason);
		if (again)
			debug("sched/dlsched: %pJ %s", job_ptr, a->reason);
		else
			info("sched/dlsched: %pJ %s", job_ptr, a->reason);
		return true;
	}
	if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr) || !dls_job_deadline(job_ptr))
		return false;
	/* When it was first found infeasible, for sacct (dlsched-report: infeasible at submit). */
	(void) dls_admin_comment_once(job_ptr, "infeasible", (long) now);
	/* Held once and released since (scontrol release): it runs best-effort, not held again. */
	if (verdict == DLSCHED_ADMIT_HOLD && job_ptr->priority != 0 && _was_held(job_ptr)) {
		verdict = DLSCHED_ADMIT_BEST_EFFORT;
		(void) dls_admin_comment_once(job_ptr, "dl_released", (long) now);
	}
	switch (verdict) {
	case DLSCHED_ADMIT_BEST_EFFORT: {
		char *reason = NULL;
		const char *held = xstrstr(a->reason, "; held");

		if (a->admission == DLSCHED_ADMIT_HOLD && held)
			reason = xstrdup_printf("%.*s; released: runs best-effort", (int) (held - a->reason), a->reason);
		else
			reason = xstrdup(a->reason);
		if (job_ptr->state_desc && !xstrcmp(job_ptr->state_desc, reason)) {
			xfree(reason);
			return false;
		}
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = reason;
		info("sched/dlsched: %pJ %s", job_ptr, reason);
		return true;
	}
	case DLSCHED_ADMIT_HOLD:
		if (job_ptr->priority == 0)
			return false;	/* held already (by us or anyone) */
		job_ptr->priority = 0;
		job_ptr->state_reason = WAIT_HELD;
		(void) dls_admin_comment_once(job_ptr, "dl_held", (long) now);
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(a->reason);
		info("sched/dlsched: %pJ %s", job_ptr, a->reason);
		return true;
	case DLSCHED_ADMIT_CANCEL:
		info("sched/dlsched: %pJ %s", job_ptr, a->reason);
		job_ptr->job_state = JOB_DEADLINE;
		job_ptr->exit_code = 1;
		job_ptr->state_reason = FAIL_DEADLINE;
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(a->reason);
		job_ptr->start_time = now;
		job_ptr->end_time = now;
		srun_allocate_abort(job_ptr);
		job_completion_logger(job_ptr, false);
		return true;
	default:
		return false;
	}
}

/*
 * Apply one cycle's decisions. Every job is re-checked: the queue moved while the core decided.
 * Locks: config read, job write, node write, partition read, federation read (held by the caller).
 */
/*
 * Capacity loaning. A node lent is recorded in the loan state file (select/dlsched_cons_tres then
 * lets training jobs that can be requeued onto it, and keeps inference jobs off); a node taken back
 * is recorded at once (no new training job goes there) and its training jobs, which the core asked
 * to shrink or checkpoint in the same decisions, must be gone within ReclaimTimeout=:
 * _enforce_reclaims() requeues those still there then, and counts the reclaim late.
 */
static double reclaim_timeout;
typedef struct {
	char *node;
	time_t since;
} dls_reclaim_t;
static dls_reclaim_t *reclaiming = NULL;
static int reclaiming_cnt = 0;

/* Lends an inference node to training, or takes it back. Locks: node read (and job write, held by
 * the caller for _apply). */
static void _set_loan(node_record_t *node_ptr, bool lend, const char *reason, time_t now)
{
	if (dls_node_loaned(node_ptr->name) == lend)
		return;
	if (dls_loans_set(node_ptr->name, lend) != SLURM_SUCCESS)
		return;
	if (lend) {
		stats.loans++;
		info("sched/dlsched: %s lent to training (%s)", node_ptr->name, reason ? reason : "");
		for (int i = 0; i < reclaiming_cnt; i++)
			if (!xstrcmp(reclaiming[i].node, node_ptr->name))
				reclaiming[i].since = 0;	/* lent again before it was free */
		return;
	}
	stats.reclaims++;
	info("sched/dlsched: %s taken back for inference (%s); its training jobs have %.0f s", node_ptr->name,
	     reason ? reason : "", reclaim_timeout);
	xrecalloc(reclaiming, reclaiming_cnt + 1, sizeof(dls_reclaim_t));
	reclaiming[reclaiming_cnt].node = xstrdup(node_ptr->name);
	reclaiming[reclaiming_cnt].since = now;
	reclaiming_cnt++;
}

static void _loan(const dlsched_action_t *a, time_t now)
{
	node_record_t *node_ptr;

	if (a->node_index >= (uint32_t) node_record_count || !(node_ptr = node_record_table_ptr[a->node_index]) ||
	    !dls_node_in_inference(node_ptr))
		return;
	_set_loan(node_ptr, a->kind == DLSCHED_LOAN, a->reason, now);
}

/* Whether a training job (not of the inference partition) holds GPUs on the node. Locks: job read. */
static bool _training_on(node_record_t *node_ptr, int node_inx, bool requeue_them, const char *why)
{
	ListIterator it = list_iterator_create(job_list);
	job_record_t *job_ptr;
	bool found = false;

	while ((job_ptr = list_next(it))) {
		if (!IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr))
			continue;
		if (!job_ptr->node_bitmap || !bit_test(job_ptr->node_bitmap, node_inx))
			continue;
		if (job_ptr->part_ptr && !xstrcmp(job_ptr->part_ptr->name, dls_inference_partition()))
			continue;
		found = true;
		if (requeue_them && IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr))
			(void) _requeue(job_ptr, why);
	}
	list_iterator_destroy(it);
	return found;
}

/* Reclaims under way: done when the node holds no training job; late at ReclaimTimeout=, when the
 * jobs still there are requeued at once. Locks: job write, node write (the caller's). */
static void _enforce_reclaims(time_t now)
{
	int kept = 0;

	for (int i = 0; i < reclaiming_cnt; i++) {
		dls_reclaim_t *r = &reclaiming[i];
		node_record_t *node_ptr = r->since ? find_node_record(r->node) : NULL;

		if (!node_ptr) {
			xfree(r->node);
			continue;
		}
		if (!_training_on(node_ptr, node_ptr->index, false, NULL)) {
			info("sched/dlsched: %s free for inference %.0f s after it was taken back", r->node,
			     difftime(now, r->since));
			xfree(r->node);
			continue;
		}
		if (difftime(now, r->since) >= reclaim_timeout) {
			stats.late_reclaims++;
			error("sched/dlsched: late reclaim: %s still holds training jobs %.0f s after it was taken back "
			      "(ReclaimTimeout=%.0f); requeueing them now", r->node, difftime(now, r->since),
			      reclaim_timeout);
			(void) _training_on(node_ptr, node_ptr->index, true, "late reclaim of its loaned node");
			xfree(r->node);
			continue;
		}
		reclaiming[kept++] = *r;
	}
	reclaiming_cnt = kept;
}

/*
 * A job submitted to several partitions (-p a,b) runs in one of them: the first of its list that
 * holds every planned node becomes its partition, as Slurm's main scheduler sets part_ptr to each
 * in turn, so that the partition's limits are checked and the start is accounted there. Locks: job
 * write, partition read.
 */
static void _choose_partition(job_record_t *job_ptr, const dlsched_action_t *a)
{
	ListIterator it;
	part_record_t *part_ptr;

	if (!job_ptr->part_ptr_list || !a->share_count)
		return;
	it = list_iterator_create(job_ptr->part_ptr_list);
	while ((part_ptr = list_next(it))) {
		size_t k;

		if (!part_ptr->node_bitmap)
			continue;
		for (k = 0; k < a->share_count; k++)
			if (!bit_test(part_ptr->node_bitmap, a->shares[k].node_index))
				break;
		if (k == a->share_count)
			break;
	}
	list_iterator_destroy(it);
	if (part_ptr && part_ptr != job_ptr->part_ptr) {
		debug("sched/dlsched: %pJ planned on partition %s's nodes", job_ptr, part_ptr->name);
		job_ptr->part_ptr = part_ptr;
	}
}

/*
 * A job held for its deadline stays in the view (dls_job_held_by_dlsched()) and is judged again every
 * cycle: one the Admission policy no longer holds (its estimate improved, the cluster emptied) is
 * released, as an administrator's release would (it then runs best-effort if it becomes infeasible
 * again, never held twice). The release is recorded (dl_released=) and survives a restart. Locks:
 * job write.
 */
static void _release_readmitted(dls_snapshot_t *snap, dlsched_decisions_t *d, time_t now)
{
	size_t n = dlsched_decisions_count(d), held_cnt = 0;
	uint32_t *held = xcalloc(n ? n : 1, sizeof(uint32_t));
	dlsched_action_t a;
	dlsched_error_t err;

	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	for (size_t i = 0; i < n; i++)
		if (dlsched_decisions_get(d, i, &a, &err) == DLSCHED_OK && a.kind == DLSCHED_ADMISSION &&
		    (a.admission == DLSCHED_ADMIT_HOLD || a.admission == DLSCHED_ADMIT_CANCEL))
			held[held_cnt++] = a.job_id;
	for (size_t i = 0; i < snap->view.job_count; i++) {
		job_record_t *job_ptr;
		size_t k;

		if (snap->jobs[i].state != DLSCHED_PENDING)
			continue;
		for (k = 0; k < held_cnt && held[k] != snap->jobs[i].job_id; k++)
			;
		if (k < held_cnt || !(job_ptr = find_job_record(snap->jobs[i].job_id)) ||
		    !dls_job_held_by_dlsched(job_ptr))
			continue;
		job_ptr->priority = DLSCHED_PRIORITY_FLOOR;	/* ordered from the next cycle */
		job_ptr->state_reason = WAIT_NO_REASON;
		xfree(job_ptr->state_desc);
		(void) dls_admin_comment_once(job_ptr, "dl_released", (long) now);
		last_job_update = now;
		stats.admission_verdicts++;
		info("sched/dlsched: %pJ released: its deadline is feasible again", job_ptr);
	}
	xfree(held);
}

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
		if (a.kind == DLSCHED_LOAN || a.kind == DLSCHED_RECLAIM) {
			_loan(&a, now);
			continue;
		}
		job_ptr = find_job_record(a.job_id);
		if (!job_ptr)
			continue;
		switch (a.kind) {
		case DLSCHED_START:
			if (!may_start)
				break;
			_choose_partition(job_ptr, &a);
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

				/* Only a job whose new size can be set once it is pending again: a
				 * preemption for nothing otherwise. */
				if (!_resizable(job_ptr) || _was_resize_refused(job_ptr->job_id)) {
					if (!_refused_before(job_ptr->job_id))
						info("sched/dlsched: %pJ not resized (%s): %s", job_ptr, a.reason,
						     _resizable(job_ptr) ?
						     "its new size could not be set before" :
						     "its GPUs are not per node (--gpus, --gpus-per-task)");
				} else if (_uniform(a.shares, a.share_count, &per_node)) {
					(void) _request_checkpoint(job_ptr, &a, now, per_node, (int) a.share_count);
				}
			}
			changed = true;
			break;
		case DLSCHED_REQUEUE:
			if (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr))
				(void) _request_checkpoint(job_ptr, &a, now, 0, 0);
			changed = true;
			break;
		case DLSCHED_ADMISSION:
			if (_admission(job_ptr, &a, now)) {
				stats.admission_verdicts++;
				changed = true;
			}
			break;
		default:
			break;	/* SET_PRIORITY: from the order below */
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
	slurmctld_lock_t write_lock = { .conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
					.part = READ_LOCK, .fed = READ_LOCK };
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
	/* A policy that cannot be built as configured (a model file missing or unusable) runs
	 * something else: an error for the admin, not a note. */
	for (line = strtok_r(notes, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "instead") || strstr(line, "not found"))
			error("sched/dlsched: note: %s", line);
		else
			info("sched/dlsched: note: %s", line);
	}
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

/* How long a job that ended after its checkpoint request may take to report the checkpoint (the
 * collector's last delivery) before it is requeued without: well under MinJobAge's 300 s default,
 * after which Slurm forgets a finished job. Without ProfileDB= no report can come: no wait. */
#define DLS_REPORT_WAIT_S 10

/* An outcome of a preemption, to complete its profile DB row off the locks. */
typedef struct {
	uint32_t job_id;
	double requested;
	const char *outcome;
	double at;
} dls_done_t;

/* Rows of the preemptions table: written with no slurmctld lock held. A failed write is logged
 * when its reason changes and counted; it never stops a preemption. */
static void _record_preemptions(dlsched_scheduler_t *sched, const dls_done_t *done, int done_cnt)
{
	static char last_error[512];
	dlsched_error_t err;

	if (!sched)
		return;	/* no dlsched.conf at all: the rows wait for one */
	for (int i = 0; i < dls_stops_count(); i++) {
		dls_stop_t *s = dls_stops_at(i);

		if (s->recorded)
			continue;
		if (dlsched_scheduler_record_preemption(sched, s->job_id, s->requested, s->deadline - s->requested,
							s->gpus,
							s->predicted_suspend, s->predicted_resume, s->reason,
							&err) == DLSCHED_OK) {
			stats.preemption_rows++;
		} else {
			stats.preemption_row_errors++;
			if (strcmp(err.message, last_error))
				info("sched/dlsched: preemption of JobId=%u not recorded in the profile DB (%s)",
				     s->job_id, err.message);
			strlcpy(last_error, err.message, sizeof(last_error));
		}
		dls_stops_set_recorded(s);	/* tried: never again */
	}
	for (int i = 0; i < done_cnt; i++) {
		if (dlsched_scheduler_finish_preemption(sched, done[i].job_id, done[i].requested, done[i].outcome,
							done[i].at, &err) != DLSCHED_OK) {
			stats.preemption_row_errors++;
			if (strcmp(err.message, last_error))
				info("sched/dlsched: end of the preemption of JobId=%u not recorded (%s)",
				     done[i].job_id, err.message);
			strlcpy(last_error, err.message, sizeof(last_error));
		}
	}
}

/*
 * The second step of the preemptions in progress: requeue each job that reported its checkpoint
 * after the request (the profile DB, read first with no lock held), or that ended on the request,
 * or whose grace ran out. A job that ended by itself - it finished its training (exit 0 with no
 * checkpoint), was cancelled, timed out - is left as it is; one that failed after the request (its
 * signal's default action, or its exit) is requeued: it loses at most what it trained since its
 * last checkpoint, never the job. A job that runs again since (someone else requeued it) is not
 * ours to requeue. `sched` is the object the safety rules follow (dls_scheduler_reload()): it
 * runs whatever the policy, while dlsched.conf does not load too; NULL (no dlsched.conf at all):
 * no checkpoint report can be read, a job is requeued once it ended, or at its grace's end. Takes
 * the locks itself (config read, job write, node write, partition read, federation read) once, when
 * there is something to do.
 */
static void _check_stops(dlsched_scheduler_t *sched)
{
	double now = _now_ms() / 1000.0;
	slurmctld_lock_t write_lock = { .conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
					.part = READ_LOCK, .fed = READ_LOCK };
	int n = dls_stops_count(), done_cnt = 0;
	bool *reported;
	dls_done_t *done;

	if (!n) {
		_record_preemptions(sched, NULL, 0);
		(void) dls_stops_sync();
		return;
	}
	reported = xcalloc(n, sizeof(bool));
	done = xcalloc(n, sizeof(dls_done_t));
	for (int i = 0; i < n; i++) {
		double at = 0;

		reported[i] = sched && dlsched_scheduler_checkpoint_since(sched, dls_stops_at(i)->job_id,
									  dls_stops_at(i)->requested, now,
									  &at) == DLSCHED_OK;
	}
	lock_slurmctld(write_lock);
	_hold_dependants();
	for (int i = 0; i < n; i++) {
		dls_stop_t *s = dls_stops_at(i);
		job_record_t *job_ptr = find_job_record(s->job_id);
		uint32_t base = job_ptr ? (job_ptr->job_state & JOB_STATE_BASE) : JOB_END;
		const char *outcome = NULL;
		char why[200];
		bool requeue = false;

		if (!job_ptr || (IS_JOB_PENDING(job_ptr) && !IS_JOB_COMPLETING(job_ptr))) {
			outcome = "gone";	/* purged, or requeued by someone else */
		} else if ((s->start_time && job_ptr->start_time != s->start_time) ||
			   (s->restart_cnt != UINT32_MAX && job_ptr->restart_cnt != s->restart_cnt)) {
			outcome = "gone";	/* requeued by someone else and started again */
		} else if (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr)) {
			if (reported[i] || now >= s->deadline) {
				requeue = true;
				outcome = reported[i] ? "checkpointed" : "grace";
			}
		} else if (reported[i]) {
			requeue = true;		/* it checkpointed and ended on the request */
			outcome = "checkpointed";
		} else if (base == JOB_COMPLETE || base == JOB_FAILED) {
			/* Ended after the request with no report (yet): its collector delivers within
			 * seconds; then it ended on the request all the same (a job that does not speak the
			 * protocol dies of the signal), and is requeued. */
			if (!s->ended_seen)
				s->ended_seen = now;
			if (sched && profile_db && now - s->ended_seen < DLS_REPORT_WAIT_S)
				continue;
			requeue = true;
			outcome = "exited";
		} else {
			outcome = "gone";	/* cancelled, timed out, ... by someone else */
		}
		if (!outcome)
			continue;
		if (requeue) {
			snprintf(why, sizeof(why), "%s; %s", s->reason,
				 !strcmp(outcome, "checkpointed") ? "after its checkpoint" :
				 !strcmp(outcome, "grace") ? "its grace ran out" : "it ended on the checkpoint request");
			if (_requeue(job_ptr, why) == SLURM_SUCCESS) {
				if (!strcmp(outcome, "checkpointed"))
					stats.requeued_checkpointed++;
				else if (!strcmp(outcome, "grace"))
					stats.requeued_grace++;
				else
					stats.requeued_exited++;
				if (s->per_node > 0) {
					long n = dls_admin_comment_value(job_ptr, "dl_resizes");

					_remember_resize(s->job_id, s->per_node, s->nodes);
					/* dlsched-report counts them (a requeue that was a resize). */
					dls_admin_comment_set(job_ptr, "dl_resizes", n > 0 ? n + 1 : 1);
					stats.resizes++;
				}
			} else {
				outcome = "gone";
			}
		}
		if (!strcmp(outcome, "gone"))
			stats.stops_gone++;
		_release_dependants(s->job_id, strcmp(outcome, "gone") != 0);
		done[done_cnt++] = (dls_done_t) { .job_id = s->job_id, .requested = s->requested,
						   .outcome = outcome, .at = now };
	}
	unlock_slurmctld(write_lock);
	for (int i = 0; i < done_cnt; i++)
		dls_stops_remove(done[i].job_id);
	_record_preemptions(sched, done, done_cnt);
	(void) dls_stops_sync();
	xfree(reported);
	xfree(done);
}

/* The jobs being preempted, as the core sees them: their GPUs are freeing. No lock needed (the
 * snapshot is ours, the table the scheduler thread's). */
static void _mark_stopping(dls_snapshot_t *snap)
{
	for (size_t i = 0; i < snap->view.job_count && dls_stops_count(); i++) {
		dls_stop_t *s = dls_stops_find(snap->jobs[i].job_id);

		if (s && snap->jobs[i].state == DLSCHED_RUNNING)
			snap->jobs[i].checkpoint_requested_at = s->requested;
	}
}

/* Logs the profile DB's status when it changes (ProfileDB= unreadable, or readable again). */
static void _profile_status(dlsched_scheduler_t *sched)
{
	char status[sizeof(stats.profile_status)] = "";

	(void) dlsched_scheduler_profile_status(sched, status, sizeof(status));
	if (!strcmp(status, stats.profile_status))
		return;
	if (status[0])
		error("sched/dlsched: profile DB: %s", status);
	else
		info("sched/dlsched: profile DB readable again");
	strlcpy(stats.profile_status, status, sizeof(stats.profile_status));
}

static void _cycle(dlsched_scheduler_t *sched, uint64_t cycle)
{
	/* The lock set is Slurm's own (sched/backfill's, and what job updates take): config read, job
	 * write, node write, partition read, federation read. The snapshot needs write locks too:
	 * Slurm's checks of whether a job can start update its state reason and begin time. */
	slurmctld_lock_t write_lock = { .conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
					.part = READ_LOCK, .fed = READ_LOCK };
	double t0 = _now_ms(), t1, t2, locked;
	time_t now = time(NULL);
	dls_snapshot_t *snap;
	dlsched_decisions_t *d = NULL;
	dlsched_error_t err;
	int rc, n_restored;

	_check_stops(sched);
	/* Speed observations (the profile DB's epochs per node), every ProfileRefresh= seconds, before
	 * the locks are taken. */
	if (dls_speeds_refresh(plugin_type) >= 0)
		stats.speed_reads++;
	/* The declared inference demand, read with no lock held (a file on a hung mount must not stall
	 * slurmctld): the snapshot takes this value. */
	if (dls_inference_partition()) {
		char why[sizeof(stats.demand_status)];

		stats.inference_demand = dls_inference_demand(why, sizeof(why));
		if (strcmp(why, stats.demand_status))
			info("sched/dlsched: inference demand %.3f%s%s", stats.inference_demand, why[0] ? ": " : "", why);
		snprintf(stats.demand_status, sizeof(stats.demand_status), "%s", why);
	}
	lock_slurmctld(write_lock);
	locked = _now_ms();
	if (reclaiming_cnt)
		_enforce_reclaims(now);
	snap = dls_snapshot_take(now, cycle, true);
	snap->view.requeue_delay = dls_requeue_delay();
	_unorder_left_out(snap);
	unlock_slurmctld(write_lock);
	locked = _now_ms() - locked;
	_mark_stopping(snap);

	t1 = _now_ms();
	dls_speeds_lock();
	stats.speed_samples = (int) dls_speeds_attach(&snap->view);
	rc = dlsched_scheduler_decide(sched, &snap->view, &d, &err);
	dls_speeds_unlock();
	t2 = _now_ms();
	_profile_status(sched);
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
		double held;

		lock_slurmctld(write_lock);
		held = _now_ms();
		_apply(d, time(NULL));
		_release_readmitted(snap, d, time(NULL));
		unlock_slurmctld(write_lock);
		locked += _now_ms() - held;
		dlsched_decisions_free(d);
		/* A grace of 0 requeues at once; the new preemptions get their rows. */
		_check_stops(sched);
	}
	dls_snapshot_free(snap);

	stats.cycles++;
	stats.last_locked_ms = locked;
	if (locked > stats.max_locked_ms)
		stats.max_locked_ms = locked;
	stats.last_ms = _now_ms() - t0;
	stats.sum_ms += stats.last_ms;
	if (stats.last_ms > stats.max_ms)
		stats.max_ms = stats.last_ms;
	debug("sched/dlsched: cycle %" PRIu64 ": %d pending, %d running, %.2f ms (decide %.2f ms, write locks held %.2f ms)",
	      cycle, stats.last_considered, stats.last_running, stats.last_ms, stats.last_decide_ms, locked);
	_write_stats();
}

/*
 * A cycle without a scheduler (dlsched.conf missing or invalid): Slurm decides, and the safety rules
 * go on with `safety`'s settings: preemptions in progress are finished (_check_stops), and capacity
 * loaning falls back as Slurm would have it, inference nodes for inference: every lent node is taken
 * back (its training jobs have ReclaimTimeout= to leave, as in any reclaim) and the fence keeps
 * training off it. Locks as _cycle.
 */
static void _fallback_cycle(dlsched_scheduler_t *safety)
{
	slurmctld_lock_t write_lock = { .conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
					.part = READ_LOCK, .fed = READ_LOCK };
	time_t now = time(NULL);
	node_record_t *node_ptr;

	stats.fallbacks++;
	_check_stops(safety);
	if (dls_inference_partition() && (dls_loans_count() || reclaiming_cnt)) {
		lock_slurmctld(write_lock);
		for (int i = 0; (node_ptr = next_node(&i)); i++)
			if (dls_node_in_inference(node_ptr) && dls_node_loaned(node_ptr->name))
				_set_loan(node_ptr, false, "dlsched.conf does not load: no loans while Slurm decides",
					  now);
		if (reclaiming_cnt)
			_enforce_reclaims(now);
		unlock_slurmctld(write_lock);
	}
	_write_stats();
}

/* Whether a dlsched.conf string key has a value (ProfileDB=). */
static bool _config_is_set(dlsched_scheduler_t *sched, const char *key)
{
	char buf[PATH_MAX];

	return sched && dlsched_scheduler_config(sched, key, buf, sizeof(buf)) == DLSCHED_OK && buf[0];
}

/* CheckpointSignal= as a signal number (the key's values are checked when dlsched.conf is read). */
static int _config_signal(dlsched_scheduler_t *sched)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "TERM", SIGTERM },
		     { "INT", SIGINT }, { "HUP", SIGHUP }, { "URG", SIGURG } };
	char buf[16];

	if (dlsched_config_get_text(sched, "CheckpointSignal", buf, sizeof(buf)) != DLSCHED_OK)
		return SIGUSR1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcasecmp(buf, sigs[i].name))
			return sigs[i].sig;
	return SIGUSR1;
}

static void *_sched_agent(void *arg)
{
	/* sched decides (NULL: Slurm does); safety is what the safety rules follow
	 * (dls_scheduler_reload()): sched itself, or the last one that loaded, or the
	 * file's safety keys alone. */
	dlsched_scheduler_t *sched = NULL, *safety = NULL;
	double interval = 0, next_cycle = 0;	/* SchedInterval=, read at every (re)load */
	uint64_t cycle = 0;

	(void) arg;
	for (;;) {
		struct timespec ts;
		bool reload;

		slurm_mutex_lock(&term_lock);
		reload = !sched || reconfig;
		reconfig = false;
		slurm_mutex_unlock(&term_lock);
		if (reload) {
			bool had = sched != NULL;

			/* Every (re)load builds the policies afresh: a learned ordering loads its
			 * ModelFile= again. libtorch itself stays loaded with this plugin. A file
			 * that does not load leaves the safety rules as they were: preemptions in
			 * progress are still requeued, lent nodes still fenced. */
			(void) dls_scheduler_reload(plugin_type, false, &sched, &safety);
			interval = dls_config_double(safety, "SchedInterval");
			preempt_grace = dls_config_double(safety, "PreemptGrace");
			checkpoint_signal = _config_signal(safety);
			profile_db = _config_is_set(safety, "ProfileDB");
			reclaim_timeout = dls_config_double(safety, "ReclaimTimeout");
			dls_loans_configure(safety);
			dls_speeds_configure(sched);
			stats.safety[0] = '\0';
			if (safety && safety != sched)
				(void) dlsched_scheduler_describe(safety, stats.safety, sizeof(stats.safety));
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
		if (sched) {
			_cycle(sched, ++cycle);
		} else {
			_fallback_cycle(safety);
		}
		next_cycle = _now_ms() / 1000.0 + interval;

		/* Until the next cycle; while jobs are being preempted, their second step is checked
		 * every second (a job that ended on its request is requeued without waiting). */
		for (;;) {
			double wait = next_cycle - _now_ms() / 1000.0;
			bool quit, again;

			if (dls_stops_count() && wait > 1.0)
				wait = 1.0;
			if (wait < 0)
				wait = 0;
			ts = dls_time_in(wait);
			slurm_mutex_lock(&term_lock);
			if (!stop_thread && !reconfig)
				pthread_cond_timedwait(&term_cond, &term_lock, &ts);
			quit = stop_thread;
			again = reconfig;
			slurm_mutex_unlock(&term_lock);
			if (quit || again || _now_ms() / 1000.0 >= next_cycle)
				break;
			if (dls_stops_count()) {
				_check_stops(safety);
				_write_stats();
			}
		}
		slurm_mutex_lock(&term_lock);
		if (stop_thread) {
			slurm_mutex_unlock(&term_lock);
			break;
		}
		slurm_mutex_unlock(&term_lock);
	}
	dls_scheduler_unload(&sched, &safety);
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
	/* Preemptions a restarted slurmctld must still finish (their jobs may have ended meanwhile). */
	dls_stops_load(slurm_conf.state_save_location);
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
	xfree(dependants);
	dependant_cnt = 0;
	for (int i = 0; i < reclaiming_cnt; i++)
		xfree(reclaiming[i].node);
	xfree(reclaiming);
	reclaiming_cnt = 0;
	xfree(stats_path);
	dls_stops_free();
	dls_speeds_fini();
	dls_loans_fini();
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
