/*****************************************************************************\
 *  site_factor_dlsched.c - dlsched's queue order as priority/multifactor's
 *  site factor (the SITE column of sprio).
 *
 *  The order is computed off-lock by the advisor thread (dlsched_advisor.c)
 *  with the Ordering policy of dlsched.conf; the hooks below run with the job
 *  write lock held and only look it up. Jobs dlsched has not ranked (yet) get
 *  no site factor, so Slurm's other factors decide for them.
\*****************************************************************************/

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "../../common/dlsched_advisor.h"
#include "../../common/dlsched_slurm.h"

const char plugin_name[] = "dlsched site factor: queue order from the dlsched Ordering policy";
/* The plugin's type, and the prefix of every line it logs. */
#define DLS_PLUGIN_TYPE "site_factor/dlsched"
#define DLS_LOG_PREFIX DLS_PLUGIN_TYPE ": "
const char plugin_type[] = DLS_PLUGIN_TYPE;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* The most urgent job gets DLS_SITE_MAX, each next one a step less. */
#define DLS_SITE_MAX 1000000u
#define DLS_SITE_STEP 10u

static uint32_t _factor(job_record_t *job_ptr)
{
	uint32_t rank;

	if (!IS_JOB_PENDING(job_ptr) || !dls_advisor_rank(job_ptr->job_id, &rank))
		return NICE_OFFSET;
	if (rank >= DLS_SITE_MAX / DLS_SITE_STEP)
		return NICE_OFFSET;
	return NICE_OFFSET + DLS_SITE_MAX - rank * DLS_SITE_STEP;
}

/* slurmctld start; no locks held. */
extern int init(void)
{
	verbose(DLS_LOG_PREFIX "init (dlsched %s)", dlsched_version());
	dls_advisor_start(plugin_type);
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	dls_advisor_stop(plugin_type);
}

extern void site_factor_p_reconfig(void)
{
	dls_advisor_reconfig();
}

/* A job's priority is (re)computed. Locks: job write (held by the caller). Also records the
 * deadline in the admin comment, where sacct can read it. */
extern void site_factor_p_set(job_record_t *job_ptr)
{
	(void) dls_record_deadline(job_ptr);
	job_ptr->site_factor = _factor(job_ptr);
}

/* Every PriorityCalcPeriod. Locks: job write (held by the caller); only look-ups. */
extern void site_factor_p_update(void)
{
	list_itr_t *it;
	job_record_t *job_ptr;

	if (!job_list)
		return;
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (IS_JOB_PENDING(job_ptr)) {
			(void) dls_record_deadline(job_ptr);
			job_ptr->site_factor = _factor(job_ptr);
		}
	}
	list_iterator_destroy(it);
}
