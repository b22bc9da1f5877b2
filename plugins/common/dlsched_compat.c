/*****************************************************************************\
 *  dlsched_compat.c - helpers over slurmctld internals that differ between
 *  the Slurm releases the plugins are built for (dlsched_compat.h).
\*****************************************************************************/

#include "dlsched_compat.h"

#include "src/common/xstring.h"

#if DLS_SLURM_RELEASE >= 2405
#include "src/common/job_state_reason.h"
#else
#include "src/slurmctld/acct_policy.h"
#endif

extern const char *dls_job_reason_string(enum job_state_reason reason)
{
#if DLS_SLURM_RELEASE >= 2405
	return job_state_reason_string(reason);
#else
	return job_reason_string(reason);
#endif
}

extern bool dls_acct_policy_runnable_state(job_record_t *job_ptr)
{
#if DLS_SLURM_RELEASE >= 2405
	return !job_state_reason_check(job_ptr->state_reason, JSR_QOS_ASSOC);
#else
	return acct_policy_job_runnable_state(job_ptr);
#endif
}

extern bool dls_select_job_cleaning(job_record_t *job_ptr)
{
#if DLS_SLURM_RELEASE >= 2311
	(void) job_ptr;
	return false;
#else
	uint16_t cleaning = 0;

	(void) select_g_select_jobinfo_get(job_ptr->select_jobinfo, SELECT_JOBDATA_CLEANING, &cleaning);
	return cleaning != 0;
#endif
}

extern bool dls_tres_gpu_entry(const char *entry, char **type, long *count)
{
	const char *rest, *last;
	char *end = NULL;
	long n;

	if (type)
		*type = NULL;
	if (count)
		*count = 1;
	if (!entry || (xstrncmp(entry, "gres:gpu", 8) && xstrncmp(entry, "gres/gpu", 8)) ||
	    (entry[8] != '\0' && entry[8] != ':'))
		return false;
	if (entry[8] == '\0')
		return true;
	rest = entry + 9; /* TYPE[:N] or N */
	last = strrchr(rest, ':');
	n = strtol(last ? last + 1 : rest, &end, 10);
	if (end && end != (last ? last + 1 : rest) && *end == '\0') {
		/* the last field is the count; a type before it, if any */
		if (count)
			*count = n;
		if (type && last)
			*type = xstrndup(rest, last - rest);
	} else if (type) {
		*type = xstrdup(rest); /* gpu:TYPE, no count */
	}
	return true;
}

extern char *dls_tres_per_node_gpus(const char *type, int count)
{
#if DLS_SLURM_RELEASE >= 2411
	const char *prefix = "gres/gpu";
#else
	const char *prefix = "gres:gpu";
#endif
	bool typed = type && type[0];

	return xstrdup_printf("%s%s%s:%d", prefix, typed ? ":" : "", typed ? type : "", count);
}
