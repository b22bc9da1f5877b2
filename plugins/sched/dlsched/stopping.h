/*****************************************************************************\
 *  stopping.h - sched/dlsched's jobs being preempted: asked to checkpoint,
 *  not requeued yet (two-step preemption, see stopping.c).
 *
 *  The table belongs to the scheduler thread: only it reads or changes it, so
 *  it needs no lock. It is journalled in StateSaveLocation/dlsched-stopping.state
 *  so that a restarted slurmctld still requeues a job it asked to stop (which
 *  may have exited on its own in the meantime): a preemption is on disk
 *  (written and flushed to stable storage) before its job is signalled, or the
 *  job is not signalled at all.
\*****************************************************************************/

#ifndef _DLSCHED_STOPPING_H
#define _DLSCHED_STOPPING_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef struct {
	uint32_t job_id;
	double requested;			    /* the checkpoint request was sent (Unix seconds, sub-second) */
	double deadline;			    /* requested + grace: requeued then at the latest */
	int gpus;				    /* GPUs it held */
	int per_node, nodes;			    /* a resize: its shape once pending again; 0: as it was */
	double predicted_suspend, predicted_resume; /* what the policy expected */
	bool recorded;				    /* its row is in the profile DB's preemptions table */
	double ended_seen;    /* when it was first seen ended without a checkpoint report (0: not) */
	time_t start_time;    /* the run that was asked to stop (Slurm's start_time then) ... */
	uint32_t restart_cnt; /* ... and its restart count: another run is not ours to requeue */
	char reason[128];
} dls_stop_t;

/* How a preemption ended, as the profile DB's preemptions table records it (dls_stop_outcome_name()). */
typedef enum {
	DLS_STOP_UNDER_WAY = 0, /* not ended: the job still has its grace */
	DLS_STOP_CHECKPOINTED,	/* requeued after it reported its checkpoint */
	DLS_STOP_GRACE,		/* requeued when its grace ran out */
	DLS_STOP_EXITED,	/* requeued after it ended on the request */
	DLS_STOP_GONE,		/* ended otherwise (cancelled, finished, requeued by someone else) */
} dls_stop_outcome_t;
/* "checkpointed", "grace", "exited", "gone" (the words of dlsched-db and dlsched-report);
 * "under-way" for DLS_STOP_UNDER_WAY. */
extern const char *dls_stop_outcome_name(dls_stop_outcome_t outcome);

/* Reads the table back (init: after a slurmctld restart) from DIR/dlsched-stopping.state and
 * compacts the journal; a missing file is an empty table, a malformed line is logged and skipped. */
extern void dls_stops_load(const char *state_dir);
extern void dls_stops_free(void);

extern int dls_stops_count(void);
extern dls_stop_t *dls_stops_at(int i);
extern dls_stop_t *dls_stops_find(uint32_t job_id);
/* Adds an entry (replacing one of the same job), journalled and flushed to stable storage before it
 * returns. NULL, with the error logged and counted, when the journal cannot be written: the caller
 * must then not signal the job (a restart would not know to requeue it). */
extern dls_stop_t *dls_stops_add(const dls_stop_t *stop);
/* Marks an entry's profile DB row as written (journalled, flushed with the next sync). */
extern void dls_stops_set_recorded(dls_stop_t *stop);
/* Removes an entry (journalled, flushed with the next sync). */
extern void dls_stops_remove(uint32_t job_id);
/* Flushes what was journalled since the last sync to stable storage, and compacts the journal when it
 * has grown well past the table. Call with no slurmctld lock held. 0, or -1 (logged, counted). */
extern int dls_stops_sync(void);
/* Journal writes that failed since the plugin started, and the last failure ("" if none). */
extern uint64_t dls_stops_write_errors(void);
extern const char *dls_stops_last_error(void);

#endif
