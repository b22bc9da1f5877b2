/*****************************************************************************\
 *  job_submit_dlsched.c - dlsched's checks at submission and update
 *  (JobSubmitPlugins=dlsched).
 *
 *  At submission: an elastic range (--dl-elastic=MIN:MAX, or the comment's
 *  gpus_min=/gpus_max=) must contain the GPUs per node the job asks for
 *  (--gres=gpu:N), and needs a per-node count: Slurm cannot resize a job whose
 *  GPUs are per job or per task (--gpus, --gpus-per-task), so such a range
 *  would be ignored. The job is refused with the reason instead.
 *
 *  At update: the comment's deadline= word is fixed once the job is submitted
 *  (Slurm's own --deadline is checked by Slurm; the word is not): a user's
 *  `scontrol update Comment=` that adds, changes or removes it is refused;
 *  operators may. The elastic range is checked again when the comment changes.
 *
 *  Runs with slurmctld's job write lock held: no I/O, no dlsched.conf, only
 *  the parser of the comment words (the C ABI, pure and allocation-bounded).
\*****************************************************************************/

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched/api.h"

#include "../../common/dlsched_compat.h"

const char plugin_name[] = "dlsched job submit checks: elastic ranges and the deadline word";
const char plugin_type[] = "job_submit/dlsched";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init(void)
{
	verbose("%s: init (dlsched %s)", plugin_type, dlsched_version());
	return SLURM_SUCCESS;
}

extern void fini(void)
{
}

/* GPUs per node in a TRES list such as "gres:gpu:2", "gres/gpu:v100:4,gres:nic:1": the count of its
 * gpu entry (dls_tres_gpu_entry), 0 without one. */
static long _gpus_in(const char *tres)
{
	char *copy, *save = NULL, *tok;
	long gpus = 0;

	if (!tres || !*tres)
		return 0;
	copy = xstrdup(tres);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long n;

		if (dls_tres_gpu_entry(tok, NULL, &n)) {
			gpus = n;
			break;
		}
	}
	xfree(copy);
	return gpus;
}

static bool _metadata(const char *comment, char **env, uint32_t env_size, dlsched_job_metadata_t *m)
{
	memset(m, 0, sizeof(*m));
	m->struct_size = sizeof(*m);
	return dlsched_parse_job_metadata(comment, (const char *const *) env, env ? env_size : 0, m, NULL) ==
		DLSCHED_OK;
}

/* NULL when the range fits the job's GPUs, else why not (xmalloc'ed). */
static char *_check_range(const dlsched_job_metadata_t *m, const char *per_node, const char *per_job,
			  const char *per_task)
{
	long gpus;

	if (m->gpus_min <= 0 && m->gpus_max <= 0)
		return NULL;
	if (_gpus_in(per_job) || _gpus_in(per_task))
		return xstrdup_printf("dlsched: an elastic range (--dl-elastic=%d:%d) needs the job's GPUs per node "
				      "(--gres=gpu:N): Slurm cannot resize GPUs given per job or per task (--gpus, "
				      "--gpus-per-task); ask with --gres=gpu:N, or leave --dl-elastic out",
				      m->gpus_min, m->gpus_max);
	gpus = _gpus_in(per_node);
	if (!gpus)
		return xstrdup_printf("dlsched: an elastic range (--dl-elastic=%d:%d) needs GPUs: ask for where the "
				      "job starts with --gres=gpu:N (N in %d..%d)",
				      m->gpus_min, m->gpus_max, m->gpus_min, m->gpus_max);
	if (gpus < m->gpus_min || gpus > m->gpus_max)
		return xstrdup_printf("dlsched: --dl-elastic=%d:%d does not contain the %ld GPUs per node the job asks "
				      "for (--gres=gpu:%ld): ask for a count in %d..%d, or widen the range",
				      m->gpus_min, m->gpus_max, gpus, gpus, m->gpus_min, m->gpus_max);
	return NULL;
}

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
	dlsched_job_metadata_t m;
	char *why;

	if (!_metadata(job_desc->comment, job_desc->spank_job_env, job_desc->spank_job_env_size, &m))
		return SLURM_SUCCESS; /* words that do not parse are ignored downstream, as documented */
	why = _check_range(&m, job_desc->tres_per_node, job_desc->tres_per_job, job_desc->tres_per_task);
	if (!why)
		return SLURM_SUCCESS;
	info("%s: refused a job of uid %u (%s)", plugin_type, submit_uid, why);
	if (err_msg)
		*err_msg = why;
	else
		xfree(why);
	return ESLURM_INVALID_GRES;
}

/* Slurm 22.05 calls job_modify without an error message for the user (23.02 added one): the user
 * gets ESLURM_ACCESS_DENIED's text, slurmctld's log the reason. Locks: job, node, partition and
 * config read (held by the caller). */
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid)
{
	dlsched_job_metadata_t before, after;
	char *why = NULL;

	if (!job_desc->comment && !job_desc->tres_per_node)
		return SLURM_SUCCESS; /* neither the words nor the GPUs change */
	(void) _metadata(job_ptr->comment, job_ptr->spank_job_env, job_ptr->spank_job_env_size, &before);
	(void) _metadata(job_desc->comment ? job_desc->comment : job_ptr->comment, job_ptr->spank_job_env,
			 job_ptr->spank_job_env_size, &after);
	if (job_desc->comment && before.deadline != after.deadline && !validate_operator(submit_uid)) {
		why = xstrdup_printf("the comment's deadline= word is fixed at submission (it was %s): keep it as it "
				     "is, or ask an operator; Slurm's own --deadline is changed with scontrol update "
				     "JobId=%u Deadline=...",
				     before.deadline > 0 ? "set" : "not given", job_ptr->job_id);
	} else if (IS_JOB_PENDING(job_ptr)) {
		/* Only a pending job's request can still change; a running one keeps its GPUs. */
		why = _check_range(&after, job_desc->tres_per_node ? job_desc->tres_per_node : job_ptr->tres_per_node,
				   job_desc->tres_per_node ? NULL : job_ptr->tres_per_job,
				   job_desc->tres_per_node ? NULL : job_ptr->tres_per_task);
	}
	if (!why)
		return SLURM_SUCCESS;
	info("%s: refused uid %u's update of %pJ: %s", plugin_type, submit_uid, job_ptr, why);
	xfree(why);
	return ESLURM_ACCESS_DENIED;
}
