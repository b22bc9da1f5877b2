/*****************************************************************************\
 *  actuate.c - what a cycle's decisions do to Slurm's jobs, under the write
 *  locks the cycle takes: queue priorities, starts on the planned nodes, GPU
 *  counts of pending jobs (resizes), the Admission policy's holds and
 *  cancels, and Slurm's own priorities back while dlsched does not decide.
 *  Preemptions (checkpoint and requeue) are in preempt.c, loans in loans.c.
\*****************************************************************************/

#include "sched_dlsched.h"

/*
 * Priorities we set (DLSCHED_PRIORITY_TOP down to DLSCHED_PRIORITY_FLOOR,
 * dlsched/api.h) live above priority/basic's TOP_PRIORITY (0xffff0000), which
 * new jobs count down from: a job submitted between two cycles ranks after
 * every job dlsched has ordered.
 */

/* Runs the requeue of a resized job, then its new size once it is pending again. */
typedef struct {
	uint32_t job_id;
	int gpus_per_node;
	int nodes;
} dls_resize_t;
static dls_resize_t *resizes = NULL;
static int resize_cnt = 0;

/*
 * The job's tres_per_node with its GPU count per node set to `per_node`, everything else as the
 * user wrote it: the GPU type (gres:gpu:v100:2 -> gres:gpu:v100:4, in the form of the release,
 * dls_tres_per_node_gpus()) and any other per-node GRES.
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

		char *type = NULL;

		if (!found && dls_tres_gpu_entry(tok, &type, NULL)) {
			/* In the form this release's update_job() takes (gres:gpu or gres/gpu). */
			entry = dls_tres_per_node_gpus(type, per_node);
			xfree(type);
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
	dls_job_desc_set_job_id(&desc, job_ptr->job_id);
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
	(void) dls_admin_comment_once(job_ptr, DLSCHED_WORD_REQUESTED, (long) dls_job_gpus_requested(job_ptr));
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
	bitstr_t *avail = NULL;
	bool ok;
	time_t when = now;

	ok = dls_job_test_resv(job_ptr, &when, &avail) == SLURM_SUCCESS && when <= now && avail;
	for (size_t i = 0; ok && i < a->share_count; i++)
		if (a->shares[i].node_index >= (uint32_t) node_record_count ||
		    !bit_test(avail, a->shares[i].node_index))
			ok = false;
	FREE_NULL_BITMAP(avail);
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
		dls_stats.gpu_updates++;
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
		rc = dls_select_nodes(job_ptr);
		if (rc == SLURM_SUCCESS)
			fed_mgr_job_start(job_ptr, job_ptr->start_time);
		else
			fed_mgr_job_unlock(job_ptr);
	}
	if (job_ptr->details) { /* select_nodes() may replace the bitmap */
		FREE_NULL_BITMAP(job_ptr->details->exc_node_bitmap);
		job_ptr->details->exc_node_bitmap = orig_exc;
	} else {
		FREE_NULL_BITMAP(orig_exc);
	}
	if (rc != SLURM_SUCCESS && orig_tres) {
		int undo = _update_shape(job_ptr, orig_tres, orig_min, orig_max);

		if (undo != SLURM_SUCCESS)
			error(DLS_LOG_PREFIX "%pJ did not start at its planned size and its own (tres_per_node=%s, "
					     "%u-%u nodes) cannot be restored: %s",
			      job_ptr, orig_tres, orig_min, orig_max, slurm_strerror(undo));
	}
	xfree(orig_tres);
	if (rc == SLURM_SUCCESS) {
		last_job_update = time(NULL);
		info(DLS_LOG_PREFIX "started %pJ on %s%s%s", job_ptr, job_ptr->nodes, a->reason[0] ? ": " : "",
		     a->reason);
		dls_job_launch(job_ptr);
	}
	return rc;
}

/* Running jobs already logged as not requeueable: each is logged once (a small ring). */
#define DLS_REFUSED_MAX 64
static uint32_t refused[DLS_REFUSED_MAX];
static int refused_next = 0;

extern bool dls_refused_before(uint32_t job_id)
{
	for (int i = 0; i < DLS_REFUSED_MAX; i++)
		if (refused[i] == job_id)
			return true;
	refused[refused_next] = job_id;
	refused_next = (refused_next + 1) % DLS_REFUSED_MAX;
	return false;
}

extern void dls_remember_resize(uint32_t job_id, int per_node, int nodes)
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
				dls_stats.gpu_updates++;
			} else {
				/* It runs again at its old size: the requeue was for nothing. Not tried
				 * again for this job. */
				dls_stats.resize_failures++;
				_resize_refused(job_ptr->job_id);
				error(DLS_LOG_PREFIX "%pJ requeued to run at %d GPUs x %d nodes, but the new size "
						     "cannot be set (%s); it runs again at its old size",
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
 * priority class held back by deadline work it may not stop shows why. Locks as dls_apply.
 */
/*
 * A job this plugin held carries "dl_held=<epoch s>" in its admin comment (the
 * first hold's time), so that an administrator's release sticks across a
 * restart of slurmctld, as the job's other dl_ words do; the release itself is
 * recorded as "dl_released=<epoch s>" when first seen.
 */
static bool _was_held(job_record_t *job_ptr)
{
	return dls_admin_comment_value(job_ptr, DLSCHED_WORD_HELD) >= 0;
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
			debug(DLS_LOG_PREFIX "%pJ %s", job_ptr, a->reason);
		else
			info(DLS_LOG_PREFIX "%pJ %s", job_ptr, a->reason);
		return true;
	}
	if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr) || !dls_job_deadline(job_ptr))
		return false;
	/* When it was first found infeasible, for sacct (dlsched-report: infeasible at submit). */
	(void) dls_admin_comment_once(job_ptr, DLSCHED_WORD_INFEASIBLE, (long) now);
	/* Held once and released since (scontrol release): it runs best-effort, not held again. */
	if (verdict == DLSCHED_ADMIT_HOLD && job_ptr->priority != 0 && _was_held(job_ptr)) {
		verdict = DLSCHED_ADMIT_BEST_EFFORT;
		(void) dls_admin_comment_once(job_ptr, DLSCHED_WORD_RELEASED, (long) now);
	}
	switch (verdict) {
	case DLSCHED_ADMIT_BEST_EFFORT: {
		char *reason = NULL;
		const char *held = xstrstr(a->reason, "; held");

		if (a->admission == DLSCHED_ADMIT_HOLD && held)
			reason =
				xstrdup_printf("%.*s; released: runs best-effort", (int) (held - a->reason), a->reason);
		else
			reason = xstrdup(a->reason);
		if (job_ptr->state_desc && !xstrcmp(job_ptr->state_desc, reason)) {
			xfree(reason);
			return false;
		}
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = reason;
		info(DLS_LOG_PREFIX "%pJ %s", job_ptr, reason);
		return true;
	}
	case DLSCHED_ADMIT_HOLD:
		if (job_ptr->priority == 0)
			return false; /* held already (by us or anyone) */
		job_ptr->priority = 0;
		job_ptr->state_reason = WAIT_HELD;
		(void) dls_admin_comment_once(job_ptr, DLSCHED_WORD_HELD, (long) now);
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(a->reason);
		info(DLS_LOG_PREFIX "%pJ %s", job_ptr, a->reason);
		return true;
	case DLSCHED_ADMIT_CANCEL:
		info(DLS_LOG_PREFIX "%pJ %s", job_ptr, a->reason);
		job_ptr->job_state = JOB_DEADLINE;
		job_ptr->exit_code = 1;
		job_ptr->state_reason = FAIL_DEADLINE;
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(a->reason);
		job_ptr->start_time = now;
		job_ptr->end_time = now;
		dls_srun_allocate_abort(job_ptr);
		job_completion_logger(job_ptr, false);
		return true;
	default:
		return false;
	}
}

/*
 * A job submitted to several partitions (-p a,b) runs in one of them: the first of its list that
 * holds every planned node becomes its partition, as Slurm's main scheduler sets part_ptr to each
 * in turn, so that the partition's limits are checked and the start is accounted there. Locks: job
 * write, partition read.
 */
static void _choose_partition(job_record_t *job_ptr, const dlsched_action_t *a)
{
	list_itr_t *it;
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
		debug(DLS_LOG_PREFIX "%pJ planned on partition %s's nodes", job_ptr, part_ptr->name);
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
extern void dls_release_readmitted(dls_snapshot_t *snap, dlsched_decisions_t *d, time_t now)
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
		job_ptr->priority = DLSCHED_PRIORITY_FLOOR; /* ordered from the next cycle */
		job_ptr->state_reason = WAIT_NO_REASON;
		xfree(job_ptr->state_desc);
		(void) dls_admin_comment_once(job_ptr, DLSCHED_WORD_RELEASED, (long) now);
		last_job_update = now;
		dls_stats.admission_verdicts++;
		info(DLS_LOG_PREFIX "%pJ released: its deadline is feasible again", job_ptr);
	}
	xfree(held);
}

/*
 * Apply one cycle's decisions. Every job is re-checked: the queue moved while the core decided.
 * Locks: config read, job write, node write, partition read, federation read (held by the caller).
 */
extern void dls_apply(dlsched_decisions_t *d, time_t now)
{
	size_t n = dlsched_decisions_count(d), order_cnt = 0;
	const uint32_t *order = dlsched_decisions_order(d, &order_cnt);
	dlsched_action_t a;
	dlsched_error_t err;
	list_itr_t *it;
	job_record_t *job_ptr;
	bool changed = false;
	/* Both Slurm schedulers start nothing until the federation's siblings are synced. */
	bool may_start = fed_mgr_sibs_synced();
	const char *why;
	/*
	 * The jobs this cycle plans to start rank above every job still
	 * waiting (the core's order lists only those): a planned job that
	 * does not start now (its nodes free once a preempted job has gone)
	 * gets DLSCHED_PRIORITY_TOP - k, the k-th start of the plan, and
	 * the waiting jobs follow below all of them. With a tie, Slurm's main
	 * scheduler takes the lower job id, and on 26.05 gave the GPUs freed
	 * for a released job to an older --nice job, preempted again at the
	 * next cycle.
	 */
	uint32_t starts_planned = 0;

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
			dls_lending_apply(&a, now);
			continue;
		}
		job_ptr = find_job_record(a.job_id);
		if (!job_ptr)
			continue;
		switch (a.kind) {
		case DLSCHED_START:
			if (starts_planned < DLSCHED_PRIORITY_TOP - DLSCHED_PRIORITY_FLOOR)
				starts_planned++;
			if (!may_start)
				break;
			_choose_partition(job_ptr, &a);
			/* Only what Slurm's own schedulers would start now. */
			if ((why = dls_job_not_runnable(job_ptr, now))) {
				debug(DLS_LOG_PREFIX "%pJ not started: %s", job_ptr, why);
				break;
			}
			if (_start_planned(job_ptr, &a, now) == SLURM_SUCCESS) {
				dls_stats.starts++;
				changed = true;
			} else {
				/* Left to Slurm's main scheduler at its dlsched priority (an
				 * administrator's priority stays). */
				dls_stats.start_failures++;
				if (!job_ptr->direct_set_prio)
					job_ptr->priority = DLSCHED_PRIORITY_TOP - (starts_planned - 1);
				debug(DLS_LOG_PREFIX "%pJ not started on its planned nodes; priority %u", job_ptr,
				      job_ptr->priority);
			}
			break;
		case DLSCHED_RESIZE:
			if (IS_JOB_PENDING(job_ptr)) {
				int per_node;

				if (_uniform(a.shares, a.share_count, &per_node) &&
				    _update_gpus(job_ptr, per_node, (int) a.share_count) == SLURM_SUCCESS)
					dls_stats.gpu_updates++;
			} else if (IS_JOB_RUNNING(job_ptr)) {
				int per_node;

				/* Only a job whose new size can be set once it is pending again: a
				 * preemption for nothing otherwise. */
				if (!_resizable(job_ptr) || _was_resize_refused(job_ptr->job_id)) {
					if (!dls_refused_before(job_ptr->job_id))
						info(DLS_LOG_PREFIX "%pJ not resized (%s): %s", job_ptr, a.reason,
						     _resizable(job_ptr)
							     ? "its new size could not be set before"
							     : "its GPUs are not per node (--gpus, --gpus-per-task)");
				} else if (_uniform(a.shares, a.share_count, &per_node)) {
					(void) dls_request_checkpoint(job_ptr, &a, now, per_node, (int) a.share_count);
				}
			}
			changed = true;
			break;
		case DLSCHED_REQUEUE:
			if (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr)) {
				bool asked = dls_stops_find(job_ptr->job_id) != NULL;

				if (dls_request_checkpoint(job_ptr, &a, now, 0, 0) == SLURM_SUCCESS && !asked)
					dls_fairness_reclaimed(job_ptr, &a);
			}
			changed = true;
			break;
		case DLSCHED_ADMISSION:
			if (_admission(job_ptr, &a, now)) {
				/* A wait's reason (quota, deadline work a higher class may not stop) is
				 * no verdict: the job is admitted and waits for GPUs. */
				if (a.admission == DLSCHED_ADMIT_WAIT)
					dls_stats.wait_reasons++;
				else
					dls_stats.admission_verdicts++;
				changed = true;
			}
			break;
		default:
			break; /* SET_PRIORITY: from the order below */
		}
	}

	/*
	 * Queue order: most urgent first, all above priority/basic's range. A
	 * priority an administrator set is never overwritten: the core placed the
	 * job by it (ahead of or behind every job ordered here), and Slurm's main
	 * scheduler sees the same. Held jobs (0) stay held.
	 */
	for (size_t r = 0; r < order_cnt; r++) {
		uint32_t prio, below = DLSCHED_PRIORITY_TOP - DLSCHED_PRIORITY_FLOOR - starts_planned;

		job_ptr = find_job_record(order[r]);
		if (!job_ptr || !IS_JOB_PENDING(job_ptr) || job_ptr->priority == 0 || job_ptr->direct_set_prio)
			continue;
		prio = r < below ? DLSCHED_PRIORITY_TOP - starts_planned - (uint32_t) r : DLSCHED_PRIORITY_FLOOR;
		if (job_ptr->priority != prio) {
			job_ptr->priority = prio;
			dls_stats.priorities++;
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
extern int dls_restore_slurm_priorities(void)
{
	slurmctld_lock_t write_lock = {
		.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .part = READ_LOCK, .fed = READ_LOCK};
	list_itr_t *it;
	job_record_t *job_ptr;
	int n = 0;

	lock_slurmctld(write_lock);
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!IS_JOB_PENDING(job_ptr) || job_ptr->priority == 0 || job_ptr->priority < DLSCHED_PRIORITY_FLOOR ||
		    job_ptr->direct_set_prio)
			continue;
		set_job_prio(job_ptr); /* only the priority field changes */
		n++;
	}
	list_iterator_destroy(it);
	if (n)
		last_job_update = time(NULL);
	unlock_slurmctld(write_lock);
	return n;
}

/*
 * Jobs the snapshot left out because Slurm would not start them now, which
 * still hold a dlsched priority from an earlier cycle: back to the priority
 * Slurm's priority plugin gives them (set_job_prio), below every job dlsched
 * orders, until they can start. Locks: job write (held by the caller).
 */
extern void dls_unorder_left_out(dls_snapshot_t *snap)
{
	for (size_t i = 0; i < snap->left_out_cnt; i++) {
		job_record_t *job_ptr = find_job_record(snap->left_out[i]);

		if (!job_ptr || !IS_JOB_PENDING(job_ptr) || job_ptr->priority == 0 || job_ptr->direct_set_prio ||
		    job_ptr->priority < DLSCHED_PRIORITY_FLOOR)
			continue;
		set_job_prio(job_ptr);
		dls_stats.priorities++;
		last_job_update = time(NULL);
	}
}

extern void dls_actuate_fini(void)
{
	xfree(resizes);
	resize_cnt = 0;
}
