/*****************************************************************************\
 *  dlsched_compat_ctld.c - slurmctld calls whose form differs between the
 *  Slurm releases the plugins are built for (dlsched_compat.h), for the
 *  code that runs inside slurmctld only (libdlsched_ctld: sched/dlsched).
\*****************************************************************************/

#include "dlsched_compat.h"

#include "src/common/bitstring.h"
#include "src/slurmctld/job_scheduler.h"
#if DLS_SLURM_RELEASE >= 2511
#include "src/interfaces/accounting_storage.h" /* jobacct_storage_g_job_complete() */
#endif
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"
#if DLS_SLURM_RELEASE >= 2411
#include "src/slurmctld/proc_req.h" /* srun_allocate() */
#include "src/stepmgr/srun_comm.h"
#else
#include "src/common/power.h"
#include "src/slurmctld/srun_comm.h"
#endif

extern void dls_job_desc_set_job_id(job_desc_msg_t *desc, uint32_t job_id)
{
#if DLS_SLURM_RELEASE >= 2511
	desc->step_id.job_id = job_id;
#else
	desc->job_id = job_id;
#endif
}

extern int dls_job_test_resv(job_record_t *job_ptr, time_t *when, bitstr_t **avail)
{
	bool overlap = false;
	int rc;
#if DLS_SLURM_RELEASE >= 2411
	resv_exc_t exc = {0};

	rc = job_test_resv(job_ptr, when, false, avail, &exc, &overlap, false);
	reservation_delete_resv_exc_parts(&exc);
#else
	bitstr_t *exc_core = NULL;

	rc = job_test_resv(job_ptr, when, false, avail, &exc_core, &overlap, false);
	FREE_NULL_BITMAP(exc_core);
#endif
	return rc;
}

extern int dls_select_nodes(job_record_t *job_ptr)
{
#if DLS_SLURM_RELEASE >= 2411
	job_node_select_t sel = {.job_ptr = job_ptr};

	return select_nodes(&sel, false, false, SLURMDB_JOB_FLAG_SCHED);
#else
	return select_nodes(job_ptr, false, NULL, NULL, false, SLURMDB_JOB_FLAG_SCHED);
#endif
}

extern void dls_job_launch(job_record_t *job_ptr)
{
#if DLS_SLURM_RELEASE < 2302
	power_g_job_start(job_ptr);
#endif
	if (job_ptr->batch_flag == 0)
		srun_allocate(job_ptr);
	else if (!IS_JOB_CONFIGURING(job_ptr))
		launch_job(job_ptr);
}

#if DLS_SLURM_RELEASE >= 2511
/* The accounting record of the job's run that ended, written again as `state` (the run's own
 * row: same db index, start and end). Locks: job write. */
static void _log_run_as(job_record_t *job_ptr, uint32_t state)
{
	uint32_t was = job_ptr->job_state;

	job_state_set(job_ptr, state);
	(void) jobacct_storage_g_job_complete(acct_db_conn, job_ptr);
	job_state_set(job_ptr, was);
}
#endif

extern int dls_job_requeue(uid_t uid, job_record_t *job_ptr)
{
#if DLS_SLURM_RELEASE >= 2511
	/* Until 24.11 _job_requeue_op() writes every requeued run's record as REQUEUED; from 25.x
	 * only a running one's: a job that ended on the checkpoint request would keep FAILED (its
	 * exit on the signal) in sacct. Its record is written as REQUEUED here, as the older
	 * releases do, and put back if the requeue is refused. */
	bool ended = IS_JOB_COMPLETED(job_ptr) || IS_JOB_COMPLETING(job_ptr);
	uint32_t was = job_ptr->job_state;
	int rc;

	if (ended)
		_log_run_as(job_ptr, JOB_REQUEUE);
	rc = job_requeue_internal(uid, job_ptr, false, 0);
	if (ended && rc != SLURM_SUCCESS)
		_log_run_as(job_ptr, was);
	return rc;
#else
	return job_requeue(uid, job_ptr->job_id, NULL, false, 0);
#endif
}

extern void dls_srun_allocate_abort(job_record_t *job_ptr)
{
	srun_allocate_abort(job_ptr);
}
