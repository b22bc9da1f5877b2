/*****************************************************************************\
 *  dlsched_compat_preempt.c - preempt/dlsched's entry points for the
 *  preempt interface of each Slurm release (dlsched_compat.h): until 24.11
 *  one preempt_p_get_data(), from 25.05 preempt_p_get_mode(),
 *  preempt_p_get_prio() and preempt_p_get_grace_time(). The answers come
 *  from preempt_dlsched.c (dls_preempt_mode(), _prio(), _grace_time()).
 *  Linked into preempt_dlsched.so only.
\*****************************************************************************/

#include "dlsched_compat.h"

#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#if DLS_SLURM_RELEASE >= 2302
#include "src/interfaces/preempt.h"
#else
#include "src/slurmctld/preempt.h"
#endif

#if DLS_SLURM_RELEASE >= 2505

extern uint16_t preempt_p_get_mode(job_record_t *job_ptr);
extern uint16_t preempt_p_get_mode(job_record_t *job_ptr)
{
	return dls_preempt_mode(job_ptr);
}

extern uint32_t preempt_p_get_prio(job_record_t *job_ptr);
extern uint32_t preempt_p_get_prio(job_record_t *job_ptr)
{
	return dls_preempt_prio(job_ptr);
}

extern uint32_t preempt_p_get_grace_time(job_record_t *job_ptr);
extern uint32_t preempt_p_get_grace_time(job_record_t *job_ptr)
{
	return dls_preempt_grace_time(job_ptr);
}

#else

extern int preempt_p_get_data(job_record_t *job_ptr, slurm_preempt_data_type_t data_type, void *data);
extern int preempt_p_get_data(job_record_t *job_ptr, slurm_preempt_data_type_t data_type, void *data)
{
	switch (data_type) {
	case PREEMPT_DATA_ENABLED:
		*(bool *) data = slurm_conf.preempt_mode != PREEMPT_MODE_OFF;
		break;
	case PREEMPT_DATA_MODE:
		*(uint16_t *) data = dls_preempt_mode(job_ptr);
		break;
	case PREEMPT_DATA_PRIO:
		*(uint32_t *) data = dls_preempt_prio(job_ptr);
		break;
	case PREEMPT_DATA_GRACE_TIME:
		*(uint32_t *) data = dls_preempt_grace_time(job_ptr);
		break;
	default:
		error("preempt/dlsched: unknown data type %d", data_type);
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

#endif
