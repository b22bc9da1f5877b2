/*****************************************************************************\
 *  dlsched_advisor.h - the advisor mode's background decision thread.
 *
 *  site_factor/dlsched and preempt/dlsched run under Slurm's own scheduler
 *  (sched/backfill). Their hooks are called with slurmctld's locks held, so
 *  they must not decide there: a thread copies the queue under a read lock
 *  every SchedInterval seconds, runs the dlsched core with no lock held, and
 *  publishes a table of job ranks and preemption victims that the hooks only
 *  look up (a mutex of its own, held for a binary search).
 *
 *  One advisor serves both plugins: it lives in libdlsched_advisor.so, a
 *  shared library both plugins link (installed in dlsched's library
 *  directory, found through the plugins' run path), so slurmctld loads it
 *  once. The first plugin to start it runs the thread; the last to stop it
 *  ends it. Stopping never waits for a thread that waits for slurmctld's
 *  locks (preempt/dlsched's fini runs under the write locks when a
 *  reconfigure changes PreemptType), and the library stays loaded until
 *  slurmctld exits, so such a thread can end after its plugins are gone.
\*****************************************************************************/

#ifndef _DLSCHED_ADVISOR_H
#define _DLSCHED_ADVISOR_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Start / stop the advisor for plugin `plugin` ("site_factor/dlsched"): reference counted; the name
 * is copied. Either may be called with slurmctld's locks held (a reconfigure).
 */
extern void dls_advisor_start(const char *plugin);
extern void dls_advisor_stop(const char *plugin);
/* How many plugins use the advisor now (2 when site_factor/dlsched and preempt/dlsched share it). */
extern int dls_advisor_users(void);
/* dlsched.conf is read again before the next cycle. */
extern void dls_advisor_reconfig(void);

/*
 * Rank of a pending job in dlsched's order (0 = most urgent; jobs the plan
 * would start now come first). False when the job is not ranked (yet).
 */
extern bool dls_advisor_rank(uint32_t job_id, uint32_t *rank);
/* Victim position of a running job chosen by the Preemption policy (0 = first). */
extern bool dls_advisor_victim(uint32_t job_id, uint32_t *position);
/* True when the latest cycle ranked the job among those its victims make room for (the jobs it
 * starts, then one per victim): only these may preempt. */
extern bool dls_advisor_front(uint32_t job_id);
/* Cycles run and cycles that fell back to Slurm, for logs and tests. */
extern void dls_advisor_counts(uint64_t *cycles, uint64_t *fallbacks);

#endif
