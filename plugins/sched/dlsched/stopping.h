/*****************************************************************************\
 *  stopping.h - sched/dlsched's jobs being preempted: asked to checkpoint,
 *  not requeued yet (two-step preemption, see stopping.c).
 *
 *  The table belongs to the scheduler thread: only it reads or changes it, so
 *  it needs no lock. It is kept in StateSaveLocation/dlsched-stopping.state so
 *  that a restarted slurmctld still requeues a job it asked to stop (which may
 *  have exited on its own in the meantime).
\*****************************************************************************/

#ifndef _DLSCHED_STOPPING_H
#define _DLSCHED_STOPPING_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef struct {
	uint32_t job_id;
	double requested;	/* the checkpoint request was sent (Unix seconds, sub-second) */
	double deadline;	/* requested + grace: requeued then at the latest */
	int gpus;		/* GPUs it held */
	int per_node, nodes;	/* a resize: its shape once pending again; 0: as it was */
	double predicted_suspend, predicted_resume;	/* what the policy expected */
	bool recorded;		/* its row is in the profile DB's preemptions table */
	double ended_seen;	/* when it was first seen ended without a checkpoint report (0: not) */
	char reason[128];
} dls_stop_t;

/* Reads the table back (init: after a slurmctld restart) from DIR/dlsched-stopping.state; a missing
 * file is an empty table, a malformed line is logged and skipped. */
extern void dls_stops_load(const char *state_dir);
/* Writes the table (through a temporary file and rename). */
extern void dls_stops_save(void);
extern void dls_stops_free(void);

extern int dls_stops_count(void);
extern dls_stop_t *dls_stops_at(int i);
extern dls_stop_t *dls_stops_find(uint32_t job_id);
/* Adds an entry (replacing one of the same job) and returns it. */
extern dls_stop_t *dls_stops_add(const dls_stop_t *stop);
extern void dls_stops_remove(uint32_t job_id);

#endif
