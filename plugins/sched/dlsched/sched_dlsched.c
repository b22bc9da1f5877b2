/*****************************************************************************\
 *  sched_dlsched.c - the dlsched scheduler: a thread in slurmctld that every
 *  SchedInterval seconds copies the queue under a short read lock, lets the
 *  dlsched core decide with no lock held, and applies the decisions under
 *  the write locks: queue priorities, starts on the planned nodes, GPU counts
 *  of pending jobs, checkpoint-signal-and-requeue.
 *
 *  Slurm's own main scheduler keeps running and starts jobs in the priority
 *  order set here (PriorityType=priority/basic keeps them, and so does
 *  priority/multifactor with PriorityFlags=INCR_ONLY). If dlsched cannot
 *  decide (no or bad dlsched.conf, an error in the core) nothing is changed
 *  for that cycle, the reason is logged, and Slurm's ordering stands.
 *
 *  The plugin's identity and its init/fini. The parts: cycle.c (the thread and
 *  its cycle), actuate.c (what decisions do to jobs), preempt.c (two-step
 *  preemptions; stopping.c keeps their table), loans.c (lent inference
 *  nodes), guard.c (the learned policy's guard: the verdict file of
 *  dlsched-guard), fairness.c (borrowed and reclaimed GPUs), stats.c (the
 *  stats file).
 *
 *  Built with libtorch, it also runs the learned policies (Policy=dl2,
 *  dual-agent; dlsched_models.h); their model is loaded at every (re)load of
 *  dlsched.conf, and with RecordExperience=yes each cycle's step is appended
 *  to the profile DB (inside dlsched_scheduler_decide, no lock held).
\*****************************************************************************/

#include "sched_dlsched.h"
#include "dlsched_models.h"

const char plugin_name[] = "dlsched: learned DL scheduling for GPU clusters";
const char plugin_type[] = DLS_PLUGIN_TYPE;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Called by slurmctld when the plugin loads; no locks held. */
extern int init(void)
{
	verbose(DLS_LOG_PREFIX "init (dlsched %s)", dlsched_version());
	/* Before the scheduler thread creates the first scheduler. */
	if (dls_models_install())
		verbose(DLS_LOG_PREFIX "learned policies (dl2, dual-agent) available");
	else
		verbose(DLS_LOG_PREFIX "built without libtorch: no learned policies (Policy=dl2 is unknown)");
	dls_stats_init(slurm_conf.state_save_location);
	/* Preemptions a restarted slurmctld must still finish (their jobs may have ended meanwhile). */
	dls_stops_load(slurm_conf.state_save_location);
	dls_cycle_start();
	return SLURM_SUCCESS;
}

/* Called at shutdown; no locks held. */
extern void fini(void)
{
	dls_cycle_stop();
	dls_actuate_fini();
	dls_preempt_fini();
	dls_guard_fini();
	dls_fairness_fini();
	dls_stats_fini();
	dls_stops_free();
	dls_speeds_fini();
	dls_loans_fini();
}

/* scontrol reconfigure: dlsched.conf is read again before the next cycle. */
extern int sched_p_reconfig(void)
{
	dls_cycle_reconfig();
	return SLURM_SUCCESS;
}
