/*****************************************************************************\
 *  sched_dlsched.h - what the parts of sched/dlsched share (see sched_dlsched.c
 *  for the parts). Private to this plugin; every function here runs in the
 *  scheduler thread (cycle.c), with the locks each one names.
\*****************************************************************************/

#ifndef _DLSCHED_SCHED_DLSCHED_H
#define _DLSCHED_SCHED_DLSCHED_H

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
#include "src/common/read_config.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "../../common/dlsched_slurm.h"
#include "src/slurmctld/fed_mgr.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"
#include "src/slurmctld/slurmctld.h"

#include "../../common/dlsched_agent.h"
#include "stopping.h"

/* The plugin's type, and the prefix of every line it logs. */
#define DLS_PLUGIN_TYPE "sched/dlsched"
#define DLS_LOG_PREFIX DLS_PLUGIN_TYPE ": "
extern const char plugin_type[];

/* ---- stats.c ---- */
typedef struct {
	uint64_t cycles;
	uint64_t fallbacks;
	double last_ms;
	double sum_ms;
	double max_ms;
	double last_decide_ms;
	double last_locked_ms; /* the cycle's write locks held: snapshot + apply (not waiting) */
	double max_locked_ms;
	int last_considered;
	int last_running;
	uint64_t starts;
	uint64_t start_failures;
	uint64_t requeues;
	uint64_t checkpoint_requests;	/* two-step preemptions begun */
	uint64_t requeued_checkpointed; /* ... requeued after the job reported its checkpoint */
	uint64_t requeued_grace;	/* ... when the grace ran out */
	uint64_t requeued_exited;	/* ... after the job ended on the request */
	uint64_t stops_gone;		/* ... ended otherwise (cancelled, finished, requeued by others) */
	uint64_t preemption_rows;	/* preemption rows written to the profile DB */
	uint64_t preemption_row_errors;
	uint64_t admission_verdicts; /* deadline jobs marked best-effort, held or cancelled */
	uint64_t wait_reasons;	     /* squeue reasons set for admitted jobs that wait (quota, ...) */
	uint64_t resizes;	     /* running jobs requeued at a new size */
	uint64_t resize_failures;    /* ... whose new size could not be set after the requeue */
	uint64_t loans;		     /* inference nodes lent to training */
	uint64_t reclaims;	     /* ... taken back */
	uint64_t late_reclaims;	     /* ... not free of training within ReclaimTimeout= */
	uint64_t speed_reads;	     /* reads of the profile DB's epochs per node (speed observations) */
	int speed_samples;	     /* runs the last cycle's view carried */
	double inference_demand;     /* as last read */
	char demand_status[600];     /* why no demand counts; "" when one does */
	char profile_status[512];    /* why ProfileDB= cannot be read; "" when it can */
	uint64_t gpu_updates;
	uint64_t priorities;
	char last_error[600];
	char describe[512];
	char safety[512]; /* what the safety rules follow: "" (the scheduler), or why not */
	char notes[1024]; /* the scheduler's notes, on one line */
	/* Experience rows (RecordExperience=yes), over every scheduler since init(). */
	uint64_t exp_rows;
	uint64_t exp_errors;
	uint64_t exp_dropped;
	char exp_error[512];
	/* Accounts (fairness.c), since init(). */
	double borrowed_gpus;		 /* GPUs held beyond the accounts' quotas, last cycle */
	double borrowed_gpu_s;		 /* ... integrated over the cycles */
	uint64_t quota_reclaims;	 /* jobs requeued to give borrowed GPUs back */
	uint64_t quota_reclaimed_gpus;	 /* ... the GPUs they held */
	double quota_reclaim_cost_gpu_s; /* ... predicted GPU time their stops cost */
} dls_stats_t;
extern dls_stats_t dls_stats;

/* Milliseconds since the epoch (the cycle's clock). */
extern double dls_now_ms(void);
/* The stats file is StateSaveLocation/dlsched-sched.stats; the counters start at 0. */
extern void dls_stats_init(const char *state_dir);
extern void dls_stats_fini(void);
/* Rewrites the stats file (a temporary file renamed over it). */
extern void dls_stats_write(void);

/* ---- cycle.c ---- */
/* The safety settings of the loaded dlsched.conf (or of its safety keys alone, when it does not load),
 * read at every (re)load: PreemptGrace=, CheckpointSignal=, ReclaimTimeout=, and whether it names a
 * profile DB (checkpoint reports can arrive only through one). */
typedef struct {
	double preempt_grace;
	int checkpoint_signal;
	bool profile_db;
	double reclaim_timeout;
} dls_sched_conf_t;
extern dls_sched_conf_t dls_sched_conf;
/* The scheduler thread: started by init(), stopped (and joined) by fini(); a reconfigure reloads
 * dlsched.conf before the next cycle. */
extern void dls_cycle_start(void);
extern void dls_cycle_stop(void);
extern void dls_cycle_reconfig(void);

/* ---- actuate.c ---- */
extern void dls_apply(dlsched_decisions_t *d, time_t now);
extern void dls_release_readmitted(dls_snapshot_t *snap, dlsched_decisions_t *d, time_t now);
extern int dls_restore_slurm_priorities(void);
extern void dls_unorder_left_out(dls_snapshot_t *snap);
/* A requeued job's new size, set once it is pending again. */
extern void dls_remember_resize(uint32_t job_id, int per_node, int nodes);
/* Whether a job was already logged as not requeueable (remembers it if not). */
extern bool dls_refused_before(uint32_t job_id);
extern void dls_actuate_fini(void);

/* ---- preempt.c ---- */
extern int dls_requeue(job_record_t *job_ptr, const char *why);
extern int dls_request_checkpoint(job_record_t *job_ptr, const dlsched_action_t *a, time_t now, int per_node,
				  int nodes);
extern void dls_check_stops(dlsched_scheduler_t *sched);
extern void dls_mark_stopping(dls_snapshot_t *snap);
extern void dls_preempt_fini(void);

/* ---- fairness.c ---- */
/* The start of the reason of every requeue that gives borrowed GPUs back (the core's kQuotaReclaimed). */
#define DLS_QUOTA_RECLAIMED "quota reclaimed"
/* After the snapshot: borrowed GPUs and their time. No lock. */
extern void dls_fairness_after_snapshot(const dls_snapshot_t *snap);
/* A REQUEUE whose checkpoint request was made: counted when it is a quota reclaim. Locks: job read. */
extern void dls_fairness_reclaimed(job_record_t *job_ptr, const dlsched_action_t *a);
/* PriorityType= and PriorityFlags= against full mode and FairnessPolicy=: logged. No lock. */
extern void dls_fairness_configure(dlsched_scheduler_t *sched);
extern void dls_fairness_fini(void);

/* ---- loans.c ---- */
/* A LOAN or RECLAIM decision. Locks: job write, node write (the caller's). */
extern void dls_lending_apply(const dlsched_action_t *a, time_t now);
/* Reclaims under way (kept in the loan state file): requeues what is still on a node at
 * ReclaimTimeout=, but for jobs still in their checkpoint grace. Locks as dls_lending_apply. */
extern void dls_lending_enforce(time_t now);
/* How many reclaims are under way. */
extern int dls_lending_reclaims(void);
/* Every lent node taken back (dlsched.conf does not load). Locks as dls_lending_apply. */
extern void dls_lending_take_all_back(const char *reason, time_t now);

/* ---- guard.c ---- */
/* The learned policy's guard after every (re)load: on when `sched` has one (LearnedGuard=yes and a
 * learned policy), reading GuardVerdictFile= and GuardInterval=. */
extern void dls_guard_configure(dlsched_scheduler_t *sched);
/* Before a cycle decides, with no slurmctld lock held: reads the verdict file (at most once a second,
 * when it changed) and sets who decides; logs and counts each switch. */
extern void dls_guard_before_cycle(dlsched_scheduler_t *sched, uint64_t cycle);
/* guard_choice, guard_switches, guard_learned_cycles, guard_verdict_age_s, guard_status lines. */
extern void dls_guard_stats(FILE *f);
extern void dls_guard_fini(void);

#endif
