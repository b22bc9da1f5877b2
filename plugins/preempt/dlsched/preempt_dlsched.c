/*****************************************************************************\
 *  preempt_dlsched.c - preemption candidates chosen and ordered by dlsched's
 *  Preemption policy (PreemptionPolicy= in dlsched.conf).
 *
 *  A running job may be preempted only if the latest dlsched cycle chose it as
 *  a victim (advisor thread, dlsched_advisor.c), and only by a job that cycle
 *  ranked among those the victims make room for; candidates are offered to
 *  Slurm in the policy's order. A policy that never preempts (fifo, or
 *  PreemptionPolicy=none) therefore preempts nothing. With no dlsched.conf
 *  nothing is preemptable: Slurm's scheduling goes on without preemption.
\*****************************************************************************/

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/slurmctld.h"

#include "../../common/dlsched_advisor.h"
#include "../../common/dlsched_compat.h"
#include "../../common/dlsched_slurm.h"

const char plugin_name[] = "dlsched preemption: victims chosen by the dlsched Preemption policy";
/* The plugin's type, and the prefix of every line it logs. */
#define DLS_PLUGIN_TYPE "preempt/dlsched"
#define DLS_LOG_PREFIX DLS_PLUGIN_TYPE ": "
const char plugin_type[] = DLS_PLUGIN_TYPE;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern bool preempt_p_preemptable(job_record_t *preemptee, job_record_t *preemptor);

extern int init(void)
{
	verbose(DLS_LOG_PREFIX "init (dlsched %s)", dlsched_version());
	dls_advisor_start(plugin_type);
	return SLURM_SUCCESS;
}

/* Also at a reconfigure that changes PreemptType: slurmctld's write locks are held then. */
extern void fini(void)
{
	dls_advisor_stop(plugin_type);
}

/* Locks: job read at least (held by the scheduler calling it). */
extern bool preempt_p_job_preempt_check(job_queue_rec_t *preemptor, job_queue_rec_t *preemptee)
{
	return preempt_p_preemptable(preemptee->job_ptr, preemptor->job_ptr);
}

/*
 * The job's preemption mode as Slurm applies it: its QOS's PreemptMode, else its partition's, else
 * the cluster's (without GANG and WITHIN). Locks: job read.
 */
extern uint16_t dls_preempt_mode(job_record_t *job_ptr)
{
	uint16_t mode = slurm_conf.preempt_mode;

	if (job_ptr && job_ptr->qos_ptr && job_ptr->qos_ptr->preempt_mode)
		mode = job_ptr->qos_ptr->preempt_mode;
	else if (job_ptr && job_ptr->part_ptr && job_ptr->part_ptr->preempt_mode != NO_VAL16)
		mode = job_ptr->part_ptr->preempt_mode;
	return mode & ~(PREEMPT_MODE_GANG | PREEMPT_MODE_WITHIN);
}

/* Locks: job read at least. Only look-ups. */
extern bool preempt_p_preemptable(job_record_t *preemptee, job_record_t *preemptor)
{
	uint32_t pos;

	if (!preemptee || !preemptor || preemptee == preemptor)
		return false;
	/* The victim was chosen to make room for the plan's front jobs, not for any waiting job that
	 * backfill happens to try. */
	if (!IS_JOB_RUNNING(preemptee) || !dls_advisor_victim(preemptee->job_id, &pos) ||
	    !dls_advisor_front(preemptor->job_id))
		return false;
	/*
	 * The table is a cycle old: the victim may have lost what made it one since (scontrol update
	 * Requeue=0, a QOS or partition PreemptMode changed). Slurm kills a job it cannot requeue, and
	 * dlsched only ever checkpoints and requeues.
	 */
	return dls_job_requeueable(preemptee) && dls_preempt_mode(preemptee) == PREEMPT_MODE_REQUEUE;
}

/*
 * What Slurm asks of a preempt plugin besides the two checks above; its entry points for this
 * release are in dlsched_compat_preempt.c (preempt_p_get_data() until 24.11, preempt_p_get_mode(),
 * _get_prio() and _get_grace_time() from 25.05). Locks: job read at least.
 */

/* Slurm preempts the lowest value first: the policy's first victim. */
extern uint32_t dls_preempt_prio(job_record_t *job_ptr)
{
	uint32_t pos;

	return job_ptr && dls_advisor_victim(job_ptr->job_id, &pos) ? pos : UINT32_MAX;
}

extern uint32_t dls_preempt_grace_time(job_record_t *job_ptr)
{
	return job_ptr && job_ptr->qos_ptr ? job_ptr->qos_ptr->grace_time : 0;
}
