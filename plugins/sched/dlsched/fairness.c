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

/*
 * Full mode beside Slurm's priority plugin, checked at every (re)load of dlsched.conf (logs only;
 * doc/admin-guide.md, "Full mode and PriorityType"):
 *  - priority/multifactor recomputes every pending job's priority each PriorityCalcPeriod= and,
 *    unless PriorityFlags=INCR_ONLY, overwrites the order set here until the next cycle (Slurm's
 *    main scheduler may start jobs in multifactor's order meanwhile). With INCR_ONLY it only ever
 *    raises a priority, and its values stay below dlsched's (DLSCHED_PRIORITY_FLOOR) while the
 *    PriorityWeight* sum does: the order stands, usage accumulates, sshare and sprio are meaningful.
 *  - priority/basic records no usage: FairnessPolicy=fairshare has every account at the same factor.
 * No lock: slurm_conf's priority settings change only with a reconfigure, which calls this.
 */
extern void dls_fairness_configure(dlsched_scheduler_t *sched)
{
	char fairness[32] = "";
	bool multifactor = !xstrcmp(slurm_conf.priority_type, "priority/multifactor");
	uint64_t weights = (uint64_t) slurm_conf.priority_weight_age + slurm_conf.priority_weight_assoc +
		slurm_conf.priority_weight_fs + slurm_conf.priority_weight_js + slurm_conf.priority_weight_part +
		slurm_conf.priority_weight_qos;

	if (sched)
		(void) dlsched_config_get_text(sched, "FairnessPolicy", fairness, sizeof(fairness));
	if (multifactor && !(slurm_conf.priority_flags & PRIORITY_FLAGS_INCR_ONLY))
		error(DLS_LOG_PREFIX
		      "PriorityType=priority/multifactor without PriorityFlags=INCR_ONLY: every "
		      "PriorityCalcPeriod= multifactor overwrites dlsched's queue order until the next cycle, "
		      "and Slurm's main scheduler may start jobs in multifactor's order meanwhile; add INCR_ONLY "
		      "to PriorityFlags= (doc/admin-guide.md, \"Full mode and PriorityType\")");
	else if (multifactor && weights >= DLSCHED_PRIORITY_FLOOR)
		error(DLS_LOG_PREFIX
		      "the PriorityWeight* values sum to %" PRIu64 ", which reaches dlsched's "
		      "priorities (from %u): jobs multifactor ranks that high go ahead of dlsched's order; lower "
		      "the weights (doc/admin-guide.md, \"Full mode and PriorityType\")",
		      weights, (unsigned) DLSCHED_PRIORITY_FLOOR);
	else if (multifactor)
		info(DLS_LOG_PREFIX "PriorityType=priority/multifactor with INCR_ONLY: dlsched's order stands, "
				    "Slurm records usage (sshare, FairnessPolicy=fairshare)");
	if (!multifactor && !xstrcmp(fairness, "fairshare"))
		error(DLS_LOG_PREFIX
		      "FairnessPolicy=fairshare under PriorityType=%s: Slurm records no usage there, so "
		      "every account has the same fair-share factor and the policy's order alone decides; set "
		      "PriorityType=priority/multifactor and PriorityFlags=INCR_ONLY (doc/admin-guide.md, \"Full mode "
		      "and PriorityType\")",
		      slurm_conf.priority_type ? slurm_conf.priority_type : "(none)");
}

extern void dls_fairness_fini(void)
{
	last_borrowed = -1;
	last_at = 0;
}
