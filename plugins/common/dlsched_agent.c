/*****************************************************************************\
 *  dlsched_agent.c - see dlsched_agent.h.
\*****************************************************************************/

#include <stdbool.h>
#include <sys/time.h>

#include "src/common/macros.h"

#include "dlsched_agent.h"
#include "dlsched_slurm.h"

static double _now_s(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static bool _busy(const dls_agent_t *a)
{
	return a->busy && a->between && a->busy(a->arg);
}

extern void dls_agent_loop(const dls_agent_t *a)
{
	double interval = 0, next_cycle;
	bool loaded = false;

	for (;;) {
		bool reload, quit;

		slurm_mutex_lock(a->lock);
		quit = a->stopped(a->arg);
		reload = !loaded || *a->reconfig;
		/* A thread that ends leaves a reconfigure to the thread that follows it (the advisor's
		 * next generation). */
		if (!quit)
			*a->reconfig = false;
		slurm_mutex_unlock(a->lock);
		if (quit)
			break;
		if (reload)
			loaded = a->reload(a->arg, &interval);
		a->cycle(a->arg);
		next_cycle = _now_s() + interval;

		/* Until the next cycle, an end or a reconfigure; the host's work between cycles, if
		 * any, every second. */
		for (;;) {
			double wait = next_cycle - _now_s();
			struct timespec ts;
			bool again;

			if (_busy(a) && wait > 1.0)
				wait = 1.0;
			ts = dls_time_in(wait); /* negative: now */
			slurm_mutex_lock(a->lock);
			if (!a->stopped(a->arg) && !*a->reconfig)
				pthread_cond_timedwait(a->cond, a->lock, &ts);
			quit = a->stopped(a->arg);
			again = *a->reconfig;
			slurm_mutex_unlock(a->lock);
			if (quit || again || _now_s() >= next_cycle)
				break;
			if (_busy(a))
				a->between(a->arg);
		}
	}
}
