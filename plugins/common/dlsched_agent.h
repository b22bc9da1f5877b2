/*****************************************************************************\
 *  dlsched_agent.h - the decision thread's loop, one for sched/dlsched
 *  (cycle.c) and the advisor (dlsched_advisor.c).
 *
 *  The loop (re)loads dlsched.conf when it has no scheduler yet or a
 *  reconfigure asked for it, runs one cycle, and waits SchedInterval seconds
 *  for the next, waking early to end or to reload. While the host has work
 *  between cycles (sched/dlsched's preemptions in progress) it wakes every
 *  second for it. The host keeps its own mutex, condition and flags (the
 *  advisor's also guard its generation and table): the loop only reads them
 *  under that mutex, and calls every hook with no lock held.
\*****************************************************************************/

#ifndef _DLSCHED_AGENT_H
#define _DLSCHED_AGENT_H

#include <pthread.h>
#include <stdbool.h>

typedef struct {
	pthread_mutex_t *lock; /* guards *reconfig and what stopped() reads */
	pthread_cond_t *cond;  /* signalled by the host to stop or reconfigure */
	bool *reconfig;	       /* set by the host: reload before the next cycle (cleared here) */
	/* Whether the thread must end; called with *lock held. */
	bool (*stopped)(void *arg);
	/* (Re)loads dlsched.conf; returns whether a scheduler decides now (if not, the next cycle
	 * loads again), and sets *interval to SchedInterval= in seconds. */
	bool (*reload)(void *arg, double *interval);
	/* One cycle (with or without a scheduler: the host knows). */
	void (*cycle)(void *arg);
	/* Optional: whether there is work between cycles, and that work, done every second. */
	bool (*busy)(void *arg);
	void (*between)(void *arg);
	void *arg;
} dls_agent_t;

/* Runs the loop until stopped() says so; returns then (the host frees what it loaded). */
extern void dls_agent_loop(const dls_agent_t *agent);

#endif
