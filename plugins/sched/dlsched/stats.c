/*****************************************************************************\
 *  stats.c - sched/dlsched's stats file, StateSaveLocation/dlsched-sched.stats
 *  (key=value lines, documented in plugins/sched/dlsched/README.md), rewritten
 *  after every cycle: the counters the other parts of the plugin add to.
\*****************************************************************************/

#include "sched_dlsched.h"

dls_stats_t dls_stats;
static char *stats_path = NULL;

extern double dls_now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec * 1000.0 + tv.tv_usec / 1000.0;
}

/* The stats file an admin reads (documented in plugins/sched/dlsched/README.md). */
extern void dls_stats_write(void)
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
		"\nprofile_db_status=%s\nadmission_verdicts=%" PRIu64 "\nresizes=%" PRIu64 "\nloans=%" PRIu64
		"\nreclaims=%" PRIu64 "\nlate_reclaims=%" PRIu64
		"\nloaned_nodes=%d\ninference_demand=%.4f\ninference_demand_status=%s\n"
		"speed_reads=%" PRIu64 "\nspeed_samples=%d\nstopping_write_errors=%" PRIu64 "\nresize_failures=%" PRIu64
		"\n"
		"stopping_last_error=%s\nsafety_settings=%s\n"
		"borrowed_gpus=%g\nborrowed_gpu_s=%.1f\nquota_reclaims=%" PRIu64 "\nquota_reclaimed_gpus=%" PRIu64
		"\nquota_reclaim_cost_gpu_s=%.1f\nwait_reasons=%" PRIu64 "\n",
		(int) getpid(), dls_stats.describe, dls_stats.cycles, dls_stats.fallbacks, dls_stats.last_ms,
		dls_stats.cycles ? dls_stats.sum_ms / dls_stats.cycles : 0.0, dls_stats.max_ms,
		dls_stats.last_decide_ms, dls_stats.last_locked_ms, dls_stats.max_locked_ms, dls_stats.last_considered,
		dls_stats.last_running, dls_stats.starts, dls_stats.start_failures, dls_stats.requeues,
		dls_stats.gpu_updates, dls_stats.priorities, dls_stats.last_error, dls_stats.notes, dls_stats.exp_rows,
		dls_stats.exp_errors, dls_stats.exp_dropped, dls_stats.exp_error, dls_stats.checkpoint_requests,
		dls_stats.requeued_checkpointed, dls_stats.requeued_grace, dls_stats.requeued_exited,
		dls_stats.stops_gone, dls_stops_count(), dls_stats.preemption_rows, dls_stats.preemption_row_errors,
		dls_stats.profile_status, dls_stats.admission_verdicts, dls_stats.resizes, dls_stats.loans,
		dls_stats.reclaims, dls_stats.late_reclaims, dls_loans_count(), dls_stats.inference_demand,
		dls_stats.demand_status, dls_stats.speed_reads, dls_stats.speed_samples, dls_stops_write_errors(),
		dls_stats.resize_failures, dls_stops_last_error(), dls_stats.safety, dls_stats.borrowed_gpus,
		dls_stats.borrowed_gpu_s, dls_stats.quota_reclaims, dls_stats.quota_reclaimed_gpus,
		dls_stats.quota_reclaim_cost_gpu_s, dls_stats.wait_reasons);
	dls_guard_stats(f);
	fclose(f);
	if (rename(tmp, stats_path) != 0)
		unlink(tmp);
	xfree(tmp);
}

extern void dls_stats_init(const char *state_dir)
{
	memset(&dls_stats, 0, sizeof(dls_stats));
	xfree(stats_path);
	stats_path = xstrdup_printf("%s/dlsched-sched.stats", state_dir);
}

extern void dls_stats_fini(void)
{
	xfree(stats_path);
}
