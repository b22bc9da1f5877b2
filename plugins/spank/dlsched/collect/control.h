/*****************************************************************************\
 *  control.h - how spank/dlsched talks to its collector, shared by both:
 *  signals sent with a value (sigqueue semantics, si_code SI_QUEUE).
 *
 *  SIGUSR2, RUN_MAGIC | run: the job's restart count, from the first task.
 *  Slurm 22.05 knows it only in the tasks' environment (SLURM_RESTART_COUNT;
 *  S_SLURM_RESTART_COUNT is always 0 and slurmstepd's own environment lacks
 *  it when the collector starts), so the collector started with --await-run
 *  holds its batches until local task 0 tells it.
 *
 *  SIGTERM, STOP_MAGIC | STOP_TASKS_*: stop; how the step's tasks on this
 *  node ended. A SIGTERM without the value stops the collector too (tasks'
 *  end unknown), except one that slurmstepd itself sends with kill(2): that is
 *  Slurm signalling the whole step (scancel, requeue), and the job may still
 *  be writing its checkpoint; the collector keeps reading until the plugin
 *  stops it when the tasks are gone.
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_CONTROL_H
#define DLSCHED_COLLECT_CONTROL_H

#define CONTROL_MAGIC_MASK 0xff000000u
#define CONTROL_VALUE_MASK 0x00ffffffu

#define RUN_MAGIC 0x52000000u /* 'R' */

#define STOP_MAGIC 0x53000000u /* 'S' */
#define STOP_TASKS_UNKNOWN 0
#define STOP_TASKS_OK 1	    /* every task exited with status 0 */
#define STOP_TASKS_FAILED 2 /* some task exited non-zero or by a signal */

#endif
