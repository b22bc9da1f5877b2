/*****************************************************************************\
 *  dlsched_slurm.c - what every daemon that loads a dlsched plugin may call:
 *  GPU counts from gres records, job metadata, dlsched.conf (dlsched_slurm.h).
 *  Only libslurmfull symbols: select plugins are loaded by slurmd and the
 *  clients too, where slurmctld's globals (job_list, ...) do not exist.
\*****************************************************************************/

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched_slurm.h"

static int _is_gpu_state(void *x, void *key)
{
	gres_state_t *gs = x;

	(void) key;
	return gs->gres_name && !xstrcmp(gs->gres_name, "gpu");
}

/*
 * One read lock per call: from 23.02 a list_t is guarded by a rwlock and an
 * iterator takes its write lock twice (create and destroy); the snapshot calls
 * this for every job and node each cycle (bench-slurm --perf on 26.05).
 */
extern gres_state_t *dls_find_gpu_state(list_t *gres_list)
{
	if (!gres_list)
		return NULL;
	return list_find_first_ro(gres_list, _is_gpu_state, NULL);
}

extern void dls_node_gpus(node_record_t *node_ptr, int *total, int *used)
{
	gres_state_t *gs = dls_find_gpu_state(node_ptr->gres_list);
	gres_node_state_t *ns;

	*total = *used = 0;
	if (!gs || !gs->gres_data)
		return;
	ns = gs->gres_data;
	*total = (int) ns->gres_cnt_avail;
	*used = (int) ns->gres_cnt_alloc;
	if (*used > *total)
		*used = *total;
}

extern char *dls_node_gpu_type(node_record_t *node_ptr)
{
	gres_state_t *gs = dls_find_gpu_state(node_ptr->gres_list);
	gres_node_state_t *ns = gs ? gs->gres_data : NULL;
	char *type = NULL;

	if (!ns)
		return NULL;
	for (int i = 0; i < ns->type_cnt && !type; i++)
		if (ns->type_name && ns->type_name[i] && ns->type_name[i][0] &&
		    (!ns->type_cnt_avail || ns->type_cnt_avail[i] > 0))
			type = xstrdup(ns->type_name[i]);
	for (char *p = type; p && *p; p++)
		*p = tolower((unsigned char) *p);
	return type;
}

extern bool dls_job_gpus_per_node(job_record_t *job_ptr)
{
	return !xstrstr(job_ptr->tres_per_job, "gpu") && !xstrstr(job_ptr->tres_per_task, "gpu");
}

extern bool dls_node_gres_unregistered(node_record_t *node_ptr)
{
	list_itr_t *it;
	gres_state_t *gs;
	bool unregistered = false;

	/* A powered-down node registers only once a job's allocation resumes it: never hold that back. */
	if (!node_ptr || !node_ptr->gres_list || IS_NODE_POWERED_DOWN(node_ptr) || IS_NODE_POWERING_UP(node_ptr))
		return false;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		gres_node_state_t *ns = gs->gres_data;

		if (ns && !ns->no_consume && ns->type_cnt > 0 && ns->gres_cnt_config > 0 &&
		    ns->gres_cnt_found == NO_VAL64) {
			unregistered = true;
			break;
		}
	}
	list_iterator_destroy(it);
	return unregistered;
}

extern void dls_node_placeholder(dlsched_node_view_t *n)
{
	memset(n, 0, sizeof(*n));
	n->struct_size = sizeof(*n);
	n->kind = DLSCHED_TRAINING;
	n->up = 0;
}

extern int dls_job_gpus_requested(job_record_t *job_ptr)
{
	gres_state_t *gs = dls_find_gpu_state(job_ptr->gres_list_req);
	gres_job_state_t *js;
	uint32_t nodes = 1;
	uint64_t n;

	if (!gs || !gs->gres_data)
		return 0;
	js = gs->gres_data;
	if (js->gres_per_job)
		n = js->gres_per_job;
	else {
		if (job_ptr->details && job_ptr->details->min_nodes > 1)
			nodes = job_ptr->details->min_nodes;
		/* Slurm accepts any count (even one no node has): no wrap into a small or negative int. */
		if (js->gres_per_node)
			n = js->gres_per_node > DLS_MAX_JOB_GPUS / nodes ? DLS_MAX_JOB_GPUS : js->gres_per_node * nodes;
		else
			n = js->total_gres;
	}
	return n > DLS_MAX_JOB_GPUS ? DLS_MAX_JOB_GPUS : (int) n;
}

/*
 * The comment word deadline= as Slurm would have judged it for --deadline (at
 * submission: after the begin time + time-min), and held to the deadline
 * dlsched first saw (recorded in the admin comment, which users cannot change):
 * a later `scontrol update Comment=` does not move it. What did not count is
 * logged at debug level (this runs for every queued job every cycle).
 */
static void _judge_deadline_word(job_record_t *job_ptr, dlsched_job_metadata_t *m)
{
	dlsched_job_metadata_t recorded;
	double first_seen = 0, earliest = 0, time_min_s = 0, deadline = 0;
	char problem[256];

	/* The admin comment's deadline= word, read by the same parser. */
	memset(&recorded, 0, sizeof(recorded));
	recorded.struct_size = sizeof(recorded);
	if (job_ptr->admin_comment &&
	    dlsched_parse_job_metadata(job_ptr->admin_comment, NULL, 0, &recorded, NULL) == DLSCHED_OK)
		first_seen = recorded.deadline;

	if (job_ptr->details)
		earliest = (double) MAX(job_ptr->details->submit_time, job_ptr->details->begin_time);
	if (job_ptr->time_min && job_ptr->time_min != NO_VAL)
		time_min_s = 60.0 * job_ptr->time_min;
	if (dlsched_judge_deadline_word(m->deadline, first_seen, earliest, time_min_s, &deadline, problem,
					sizeof(problem), NULL) != DLSCHED_OK) {
		m->deadline = 0;
		return;
	}
	if (problem[0])
		debug("%pJ: %s", job_ptr, problem);
	m->deadline = deadline;
}

extern bool dls_job_metadata(job_record_t *job_ptr, dlsched_job_metadata_t *m)
{
	memset(m, 0, sizeof(*m));
	m->struct_size = sizeof(*m);
	if (dlsched_parse_job_metadata(job_ptr->comment, (const char *const *) job_ptr->spank_job_env,
				       job_ptr->spank_job_env ? job_ptr->spank_job_env_size : 0, m,
				       NULL) == DLSCHED_OK) {
		if (m->deadline > 0)
			_judge_deadline_word(job_ptr, m);
		return true;
	}
	memset(m, 0, sizeof(*m));
	m->struct_size = sizeof(*m);
	return false;
}

/* The last error dls_scheduler_load() logged (each plugin has its own copy of this file). */
static char *last_error = NULL;

extern dlsched_scheduler_t *dls_scheduler_load(const char *plugin, bool placement_only, char **conf_path_out)
{
	char *path = get_extra_conf_path("dlsched.conf");
	dlsched_scheduler_t *sched = NULL;
	dlsched_error_t err;
	char desc[512], notes[1024];
	struct stat st;

	/* slurmctld serves every user: a model file or profile DB that a user could write is refused
	 * (as a missing one), whichever plugin builds the first scheduler. */
	(void) dlsched_files_trust_owner(slurm_conf.slurm_user_id);
	if (stat(path, &st) != 0) {
		if (xstrcmp(last_error, "not found"))
			error("%s: %s not found: create it (see dlsched.conf(5) and etc/dlsched.conf.example); until "
			      "then Slurm decides alone",
			      plugin, path);
		xfree(last_error);
		last_error = xstrdup("not found");
	} else if ((placement_only ? dlsched_scheduler_create_placement(path, &sched, &err)
				   : dlsched_scheduler_create(path, &sched, &err)) != DLSCHED_OK) {
		/* Tried again every cycle until it loads: the same error is logged once. */
		if (xstrcmp(last_error, err.message))
			error("%s: %s: %s; until it is fixed (scontrol reconfigure) Slurm decides alone", plugin, path,
			      err.message);
		else
			debug("%s: %s still does not load (%s)", plugin, path, err.message);
		xfree(last_error);
		last_error = xstrdup(err.message);
		sched = NULL;
	} else {
		xfree(last_error);
		if (dlsched_scheduler_describe(sched, desc, sizeof(desc)) == DLSCHED_OK)
			info("%s: loaded %s: %s", plugin, path, desc);
		/* sched/dlsched logs its notes itself, at every (re)load. */
		if (placement_only && dlsched_scheduler_notes(sched, notes, sizeof(notes)) == DLSCHED_OK) {
			char *save = NULL;
			for (char *l = strtok_r(notes, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
				info("%s: note: %s", plugin, l);
		}
		/* Experience rows carry the cluster's name. */
		(void) dlsched_scheduler_set_cluster(sched, slurm_conf.cluster_name);
	}
	if (conf_path_out)
		*conf_path_out = path;
	else
		xfree(path);
	return sched;
}

extern void dls_scheduler_unload(dlsched_scheduler_t **sched, dlsched_scheduler_t **safety)
{
	if (*safety && *safety != *sched)
		dlsched_scheduler_destroy(*safety);
	if (*sched)
		dlsched_scheduler_destroy(*sched);
	*sched = NULL;
	*safety = NULL;
}

extern dlsched_scheduler_t *dls_scheduler_reload(const char *plugin, bool placement_only, dlsched_scheduler_t **sched,
						 dlsched_scheduler_t **safety)
{
	char *path = NULL;
	dlsched_scheduler_t *loaded = dls_scheduler_load(plugin, placement_only, &path);
	dlsched_error_t err;
	char desc[512], notes[2048];

	if (loaded) {
		dls_scheduler_unload(sched, safety);
		*sched = *safety = loaded;
		xfree(path);
		return loaded;
	}
	if (*sched) {
		/* The last dlsched.conf that loaded: its safety settings stand until one loads again. */
		*safety = *sched;
		*sched = NULL;
		info("%s: preemptions in progress, the loan fence and reclaims keep the settings of the last "
		     "dlsched.conf that loaded",
		     plugin);
	} else if (!*safety || dlsched_scheduler_is_safety(*safety)) {
		dlsched_scheduler_t *s = NULL;

		if (dlsched_scheduler_create_safety(path, &s, &err) != DLSCHED_OK) {
			error("%s: %s: cannot read even its safety settings (%s)", plugin, path, err.message);
		} else {
			bool first = !*safety;

			if (*safety)
				dlsched_scheduler_destroy(*safety);
			*safety = s;
			(void) dlsched_scheduler_set_cluster(s, slurm_conf.cluster_name);
			/* Logged once; read again at every retry while the file does not load. */
			if (dlsched_scheduler_describe(s, desc, sizeof(desc)) == DLSCHED_OK) {
				if (first)
					info("%s: preemptions in progress, the loan fence and reclaims follow %s's %s",
					     plugin, path, desc);
				else
					debug("%s: safety settings read again from %s: %s", plugin, path, desc);
			}
			if (first && dlsched_scheduler_notes(s, notes, sizeof(notes)) == DLSCHED_OK && notes[0]) {
				char *save = NULL;

				for (char *l = strtok_r(notes, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
					verbose("%s: %s", plugin, l);
			}
		}
	}
	xfree(path);
	return NULL;
}

extern double dls_requeue_delay(void)
{
	const char *tok = xstrstr(slurm_conf.authinfo, "cred_expire=");
	long expire = 120;

	if (tok) {
		char *end = NULL;
		long v = strtol(tok + strlen("cred_expire="), &end, 10);

		if (end != tok + strlen("cred_expire=") && v >= 5)
			expire = v;
	}
	return (double) expire + 1;
}

extern double dls_config_double(dlsched_scheduler_t *sched, const char *key)
{
	double v = 0;

	if (dlsched_config_get_double(sched, key, &v) != DLSCHED_OK)
		error("dlsched: %s is no number key of dlsched.conf (a bug in the plugin: see dlsched.conf(5) for the "
		      "keys)",
		      key);
	return v;
}

extern struct timespec dls_time_in(double seconds)
{
	struct timeval now;
	struct timespec ts;

	if (seconds < 0)
		seconds = 0;
	gettimeofday(&now, NULL);
	ts.tv_sec = now.tv_sec + (time_t) seconds;
	ts.tv_nsec = now.tv_usec * 1000 + (long) ((seconds - (time_t) seconds) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

extern bool dls_job_requeueable(job_record_t *job_ptr)
{
	/* _job_requeue_op() refuses a job without a partition or details, one
	 * whose requeue is off (--no-requeue, or JobRequeue=0 and no --requeue),
	 * and a job that is not a batch job (salloc, srun allocations). */
	return job_ptr->part_ptr && job_ptr->details && job_ptr->details->requeue && job_ptr->batch_flag;
}
