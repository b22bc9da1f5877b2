/*****************************************************************************\
 *  fairness.c - what sched/dlsched counts of the accounts (teams) sharing the
 *  cluster (FairnessPolicy=, doc/admin-guide.md "Teams, shares and quotas"):
 *  the GPU time accounts borrow beyond their quotas, and the borrowed GPUs
 *  taken back for accounts below theirs. The stats file carries both.
\*****************************************************************************/

#include "sched_dlsched.h"

/* Borrowed GPUs at the last cycle, and when it was taken. */
static double last_borrowed = -1;
static double last_at = 0;

/*
 * After each cycle's snapshot: the GPUs each account's running jobs hold beyond its quota (the
 * snapshot's quotas, from the associations' shares), summed, and their integral over time since
 * the last cycle. Logged when the total changes. No lock: the snapshot is the cycle's own copy.
 */
extern void dls_fairness_after_snapshot(const dls_snapshot_t *snap)
{
	const dlsched_cluster_view_t *v = &snap->view;
	double borrowed = 0;
	char *who = NULL;

	for (size_t a = 0; a < v->account_count; a++) {
		double held = 0;

		for (size_t j = 0; j < v->job_count; j++)
			if (v->jobs[j].state == DLSCHED_RUNNING && !xstrcmp(v->jobs[j].account, v->accounts[a].name) &&
			    v->jobs[j].checkpoint_requested_at <= 0)
				held += v->jobs[j].gpus_allocated;
		if (held > v->accounts[a].quota_gpus) {
			borrowed += held - v->accounts[a].quota_gpus;
			xstrfmtcat(who, "%s%s %g of %g", who ? ", " : "", v->accounts[a].name, held,
				   v->accounts[a].quota_gpus);
		}
	}
	if (last_borrowed >= 0 && v->now > last_at)
		dls_stats.borrowed_gpu_s += last_borrowed * (v->now - last_at);
	if (borrowed != last_borrowed && (borrowed > 0 || last_borrowed > 0))
		info(DLS_LOG_PREFIX "accounts borrow %g GPUs beyond their quotas%s%s%s", borrowed, who ? " (" : "",
		     who ? who : "", who ? " GPUs held)" : "");
	dls_stats.borrowed_gpus = borrowed;
	last_borrowed = borrowed;
	last_at = v->now;
	xfree(who);
}

/*
 * A requeue that gives borrowed GPUs back to an account below its quota (the core's reason begins
 * with "quota reclaimed"), once its checkpoint request is made: counted with the job's GPUs and the
 * GPU time its stop is predicted to cost. Locks: job read (the caller's).
 */
extern void dls_fairness_reclaimed(job_record_t *job_ptr, const dlsched_action_t *a)
{
	int gpus = dls_job_gpus_allocated(job_ptr);
	double cost = 0;

	if (xstrncmp(a->reason, DLS_QUOTA_RECLAIMED, strlen(DLS_QUOTA_RECLAIMED)))
		return;
	if (a->predicted_suspend > 0)
		cost += a->predicted_suspend;
	if (a->predicted_resume > 0)
		cost += a->predicted_resume;
	dls_stats.quota_reclaims++;
	dls_stats.quota_reclaimed_gpus += gpus;
	dls_stats.quota_reclaim_cost_gpu_s += cost * gpus;
	info(DLS_LOG_PREFIX "%pJ: %d borrowed GPUs reclaimed (%s)", job_ptr, gpus, a->reason);
}

extern void dls_fairness_fini(void)
{
	last_borrowed = -1;
	last_at = 0;
}
