/*****************************************************************************\
 *  launch.h - starting and stopping dlsched-collect from slurmstepd.
 *
 *  The collector runs as the job's user, in a session of its own, outside the
 *  step's process tree (a double fork: its parent is init), so that Slurm's
 *  process tracking neither waits for it nor kills it before the plugin has
 *  asked it to flush. The plugin keeps a pidfd to signal exactly that process
 *  (never a recycled pid) and to wait for its end.
\*****************************************************************************/

#ifndef DLSCHED_SPANK_LAUNCH_H
#define DLSCHED_SPANK_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
	pid_t pid; /* 0: none */
	int pidfd; /* -1: none (kernels before 5.3) */
} dls_collector_t;

#define DLS_COLLECTOR_NONE                                                                                             \
	{                                                                                                              \
		0, -1                                                                                                  \
	}

/*
 * Runs path with argv (argv[0] included) as uid:gid with the given
 * supplementary groups, standard streams on /dev/null, no inherited
 * descriptors, a minimal environment, SIGTERM and SIGUSR2 blocked (the
 * collector reads them from a signalfd; one sent early waits for it). Returns 0 once the program was executed,
 * or -1 with the reason in err (at most about 2 s). Async-signal-safe between
 * fork and exec: everything is prepared before.
 */
extern int dls_collector_start(dls_collector_t *c, const char *path, char *const argv[], uid_t uid, gid_t gid,
			       const gid_t *groups, int ngroups, char *err, size_t errlen);

/* Sends sig with value (collect/control.h) to the collector; -1 if it is
 * gone. Works from a task too (as the job's user). */
extern int dls_collector_tell(dls_collector_t *c, int sig, int value);

/*
 * SIGTERM carrying stop_value (collect/control.h), then waits up to timeout_ms
 * for the collector to exit, then SIGKILL (its batches are in the spool
 * already). Returns 0 when it exited by itself, 1 when it was killed, -1 when
 * there was none.
 */
extern int dls_collector_stop(dls_collector_t *c, int stop_value, int timeout_ms);

#endif
