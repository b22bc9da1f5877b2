/*****************************************************************************\
 *  loans.c - sched/dlsched's side of capacity loaning: the LOAN and RECLAIM
 *  decisions recorded in the loan state file (plugins/common/dlsched_loans.c,
 *  which select/dlsched_cons_tres reads to fence the nodes), and the reclaims
 *  under way, whose training jobs must leave within ReclaimTimeout=.
\*****************************************************************************/

#include "sched_dlsched.h"

/*
 * Capacity loaning. A node lent is recorded in the loan state file (select/dlsched_cons_tres then
 * lets training jobs that can be requeued onto it, and keeps inference jobs off); a node taken back
 * is recorded at once (no new training job goes there) and its training jobs, which the core asked
 * to shrink or checkpoint in the same decisions, must be gone within ReclaimTimeout=:
 * dls_lending_enforce() requeues those still there then, and counts the reclaim late.
 */
typedef struct {
	char *node;
	time_t since;
} dls_reclaim_t;
static dls_reclaim_t *reclaiming = NULL;
static int reclaiming_cnt = 0;

/* Lends an inference node to training, or takes it back. Locks: node read (and job write, held by
 * the caller for dls_apply). */
static void _set_loan(node_record_t *node_ptr, bool lend, const char *reason, time_t now)
{
	if (dls_node_loaned(node_ptr->name) == lend)
		return;
	if (dls_loans_set(node_ptr->name, lend) != SLURM_SUCCESS)
		return;
	if (lend) {
		dls_stats.loans++;
		info(DLS_LOG_PREFIX "%s lent to training (%s)", node_ptr->name, reason ? reason : "");
		for (int i = 0; i < reclaiming_cnt; i++)
			if (!xstrcmp(reclaiming[i].node, node_ptr->name))
				reclaiming[i].since = 0; /* lent again before it was free */
		return;
	}
	dls_stats.reclaims++;
	info(DLS_LOG_PREFIX "%s taken back for inference (%s); its training jobs have %.0f s", node_ptr->name,
	     reason ? reason : "", dls_sched_conf.reclaim_timeout);
	xrecalloc(reclaiming, reclaiming_cnt + 1, sizeof(dls_reclaim_t));
	reclaiming[reclaiming_cnt].node = xstrdup(node_ptr->name);
	reclaiming[reclaiming_cnt].since = now;
	reclaiming_cnt++;
}

extern void dls_lending_apply(const dlsched_action_t *a, time_t now)
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
	list_itr_t *it = list_iterator_create(job_list);
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
			(void) dls_requeue(job_ptr, why);
	}
	list_iterator_destroy(it);
	return found;
}

/* Reclaims under way: done when the node holds no training job; late at ReclaimTimeout=, when the
 * jobs still there are requeued at once. Locks: job write, node write (the caller's). */
extern void dls_lending_enforce(time_t now)
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
			info(DLS_LOG_PREFIX "%s free for inference %.0f s after it was taken back", r->node,
			     difftime(now, r->since));
			xfree(r->node);
			continue;
		}
		if (difftime(now, r->since) >= dls_sched_conf.reclaim_timeout) {
			dls_stats.late_reclaims++;
			error(DLS_LOG_PREFIX
			      "late reclaim: %s still holds training jobs %.0f s after it was taken back "
			      "(ReclaimTimeout=%.0f); requeueing them now",
			      r->node, difftime(now, r->since), dls_sched_conf.reclaim_timeout);
			(void) _training_on(node_ptr, node_ptr->index, true, "late reclaim of its loaned node");
			xfree(r->node);
			continue;
		}
		reclaiming[kept++] = *r;
	}
	reclaiming_cnt = kept;
}

extern int dls_lending_reclaims(void)
{
	return reclaiming_cnt;
}

extern void dls_lending_take_all_back(const char *reason, time_t now)
{
	node_record_t *node_ptr;

	for (int i = 0; (node_ptr = next_node(&i)); i++)
		if (dls_node_in_inference(node_ptr) && dls_node_loaned(node_ptr->name))
			_set_loan(node_ptr, false, reason, now);
}

extern void dls_lending_fini(void)
{
	for (int i = 0; i < reclaiming_cnt; i++)
		xfree(reclaiming[i].node);
	xfree(reclaiming);
	reclaiming_cnt = 0;
}
