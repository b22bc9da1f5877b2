/*****************************************************************************\
 *  loans.c - sched/dlsched's side of capacity loaning: the LOAN and RECLAIM
 *  decisions recorded in the loan state file (plugins/common/dlsched_loans.c,
 *  which select/dlsched_cons_tres reads to fence the nodes), and the reclaims
 *  under way, whose training jobs must leave within ReclaimTimeout=.
\*****************************************************************************/

#include "sched_dlsched.h"
#include "stopping.h"

/*
 * Capacity loaning. A node lent is recorded in the loan state file (select/dlsched_cons_tres then
 * lets training jobs that can be requeued onto it, and keeps inference jobs off); a node taken back
 * is recorded at once (no new training job goes there) with the time of the reclaim, in the same
 * file (a restarted slurmctld goes on with it), and its training jobs, which the core asked to
 * shrink or checkpoint in the same decisions, must be gone within ReclaimTimeout=:
 * dls_lending_enforce() requeues those still there then, and counts the reclaim late. A job asked
 * to checkpoint keeps its own grace (PreemptGrace=, or what its preemption gave it): the late
 * reclaim leaves it to dls_check_stops(), which requeues it at the end of its grace at the latest.
 */

/* Lends an inference node to training, or takes it back. Locks: node read (and job write, held by
 * the caller for dls_apply). */
static void _set_loan(node_record_t *node_ptr, bool lend, const char *reason, time_t now)
{
	if (dls_node_loaned(node_ptr->name) == lend)
		return;
	if (dls_loans_set(node_ptr->name, lend, now) != SLURM_SUCCESS)
		return;
	if (lend) {
		dls_stats.loans++;
		info(DLS_LOG_PREFIX "%s lent to training (%s)", node_ptr->name, reason ? reason : "");
		return;
	}
	dls_stats.reclaims++;
	info(DLS_LOG_PREFIX "%s taken back for inference (%s); its training jobs have %.0f s", node_ptr->name,
	     reason ? reason : "", dls_sched_conf.reclaim_timeout);
}

extern void dls_lending_apply(const dlsched_action_t *a, time_t now)
{
	node_record_t *node_ptr;

	if (a->node_index >= (uint32_t) node_record_count || !(node_ptr = node_record_table_ptr[a->node_index]) ||
	    !dls_node_in_inference(node_ptr))
		return;
	_set_loan(node_ptr, a->kind == DLSCHED_LOAN, a->reason, now);
}

/*
 * Whether a training job (not of the inference partition) holds GPUs on the node. With
 * `requeue_them`, requeues those running there, except a job asked to checkpoint whose grace is not
 * over (its stop requeues it then): `*waiting` counts those, and the latest end of their graces goes
 * to `*grace_end`. Locks: job read (write to requeue).
 */
static bool _training_on(node_record_t *node_ptr, int node_inx, bool requeue_them, const char *why, int *waiting,
			 double *grace_end)
{
	list_itr_t *it = list_iterator_create(job_list);
	job_record_t *job_ptr;
	double now = dls_now_ms() / 1000.0;
	bool found = false;

	while ((job_ptr = list_next(it))) {
		dls_stop_t *stop;

		if (!IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr))
			continue;
		if (!job_ptr->node_bitmap || !bit_test(job_ptr->node_bitmap, node_inx))
			continue;
		if (job_ptr->part_ptr && !xstrcmp(job_ptr->part_ptr->name, dls_inference_partition()))
			continue;
		found = true;
		if (!requeue_them || !IS_JOB_RUNNING(job_ptr) || IS_JOB_COMPLETING(job_ptr))
			continue;
		if ((stop = dls_stops_find(job_ptr->job_id)) && stop->deadline > now &&
		    stop->start_time == job_ptr->start_time) {
			(*waiting)++;
			if (stop->deadline > *grace_end)
				*grace_end = stop->deadline;
			continue;
		}
		(void) dls_requeue(job_ptr, why);
	}
	list_iterator_destroy(it);
	return found;
}

/* Reclaims under way: done when the node holds no training job; late at ReclaimTimeout=, when the
 * jobs still there are requeued at once (but for those still in their checkpoint grace). Locks: job
 * write, node write (the caller's). */
extern void dls_lending_enforce(time_t now)
{
	dls_reclaim_t *r;
	int cnt = dls_loans_reclaims(&r);

	for (int i = 0; i < cnt; i++) {
		node_record_t *node_ptr = find_node_record(r[i].node);
		double waited = difftime(now, r[i].since), grace_end = 0;
		int waiting = 0;

		if (!node_ptr || !dls_node_in_inference(node_ptr)) {
			dls_loans_reclaim_done(r[i].node);
			continue;
		}
		if (!_training_on(node_ptr, node_ptr->index, false, NULL, NULL, NULL)) {
			info(DLS_LOG_PREFIX "%s free for inference %.0f s after it was taken back", r[i].node, waited);
			dls_loans_reclaim_done(r[i].node);
			continue;
		}
		/* Late: once (a reclaim stays until its node is free: a job left to its grace, or one
		 * Slurm would not requeue, is not tried again every cycle). */
		if (waited < dls_sched_conf.reclaim_timeout || r[i].late)
			continue;
		dls_stats.late_reclaims++;
		error(DLS_LOG_PREFIX "late reclaim: %s still holds training jobs %.0f s after it was taken back "
				     "(ReclaimTimeout=%.0f); requeueing them now",
		      r[i].node, waited, dls_sched_conf.reclaim_timeout);
		dls_loans_reclaim_late(r[i].node);
		(void) _training_on(node_ptr, node_ptr->index, true, "late reclaim of its loaned node", &waiting,
				    &grace_end);
		if (waiting)
			info(DLS_LOG_PREFIX "late reclaim of %s: %d job(s) asked to checkpoint keep their grace, "
					    "%.0f s more at most",
			     r[i].node, waiting, grace_end - dls_now_ms() / 1000.0);
	}
	dls_loans_reclaims_free(r, cnt);
}

extern int dls_lending_reclaims(void)
{
	dls_reclaim_t *r;
	int cnt = dls_loans_reclaims(&r);

	dls_loans_reclaims_free(r, cnt);
	return cnt;
}

extern void dls_lending_take_all_back(const char *reason, time_t now)
{
	node_record_t *node_ptr;

	for (int i = 0; (node_ptr = next_node(&i)); i++)
		if (dls_node_in_inference(node_ptr) && dls_node_loaned(node_ptr->name))
			_set_loan(node_ptr, false, reason, now);
}
