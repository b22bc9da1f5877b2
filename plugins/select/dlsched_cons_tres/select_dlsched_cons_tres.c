/*****************************************************************************\
 *  select_dlsched_cons_tres.c - dlsched's placement over Slurm's cons_tres.
 *
 *  Built as dlsched_cons_tres_ctld.so, which Slurm never loads itself: the
 *  select_dlsched_cons_tres.so every daemon and client loads is loader.c,
 *  which forwards every select_p_* call to select/cons_tres and opens this
 *  file only in the slurmctld whose SelectType it is (so that sbatch and the
 *  others never load dlsched's C++ core). There job_test() comes here
 *  (dls_placement_job_test()): in SELECT_MODE_RUN_NOW it asks the dlsched
 *  Placement policy (PlacementPolicy= in dlsched.conf) where a GPU job should
 *  go, lets cons_tres try those nodes first, and falls back to cons_tres's own
 *  choice over all candidate nodes when that fails or dlsched cannot decide;
 *  reconfigure() reads dlsched.conf again (dls_placement_reconfigure()).
\*****************************************************************************/

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
/*
 * Select plugins are also loaded by Slurm clients linked with libslurm.so
 * (slurm_load_job() unpacks per-plugin job data), which exports Slurm's
 * helpers only under their slurm_ names: map them, as Slurm's own plugins do.
 */
#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "../../common/dlsched_compat.h"
#include "../../common/dlsched_slurm.h"

/* The name in this part's messages (log.h declares it): the plugin Slurm knows (loader.c). */
/* The plugin's type, and the prefix of every line it logs (the loader's and the placement part's). */
#define DLS_PLUGIN_TYPE "select/dlsched_cons_tres"
#define DLS_LOG_PREFIX DLS_PLUGIN_TYPE ": "
const char plugin_type[] = DLS_PLUGIN_TYPE;

/* select/cons_tres's job_test(), loaded and initialised by the loader (dls_placement_init()). */
static dls_job_test_fn cons_tres_job_test = NULL;
/*
 * dlsched.conf, loaded in init() and select_p_reconfigure() inside slurmctld
 * only (never in select_p_job_test(), where slurmctld's write locks are held);
 * NULL when there is none or it is invalid: cons_tres decides alone. slurmd and
 * the clients never load it (they never place jobs), nor does a slurmctld that
 * loads this plugin only because it is in PluginDir (Slurm loads every select
 * plugin there and calls its init(); only SelectType's places jobs).
 */
static dlsched_scheduler_t *sched = NULL;
/* What the loan fence follows (dls_scheduler_reload()): sched, or while dlsched.conf does not load,
 * the last one that did (or the file's safety keys): a typo never opens lent-out inference nodes'
 * fence. */
static dlsched_scheduler_t *safety = NULL;
static bool places_jobs = false;
static uint64_t placed_cnt = 0, fallback_cnt = 0, deferred_cnt = 0;

/*
 * The speed observations' reader (dlsched_speeds.c): a thread of this plugin's
 * own, in the slurmctld that places jobs, that reads the profile DB's epochs
 * per node every ProfileRefresh= seconds with no slurmctld lock held; every
 * placement's view carries what it read last.
 */
static pthread_t speeds_thread;
static pthread_mutex_t speeds_thread_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t speeds_thread_cond = PTHREAD_COND_INITIALIZER;
static bool speeds_thread_stop = false;

/*
 * (Re)loads dlsched.conf and the model profiles it names, in slurmctld only. A
 * missing or invalid file is logged (dls_scheduler_load() names it and the
 * error) and leaves sched NULL: cons_tres alone, until the next reconfigure;
 * the loan fence keeps the last settings that loaded.
 * Locks: none (init) or the caller's slurmctld locks (select_p_reconfigure);
 * select_p_job_test() never runs meanwhile (it needs the job write lock).
 */
static void _load_config(void)
{
	if (!places_jobs)
		return;
	(void) dls_scheduler_reload(plugin_type, true, &sched, &safety);
	dls_loans_configure(safety);
	dls_speeds_configure(sched); /* no I/O: the speeds thread reads */
	slurm_mutex_lock(&speeds_thread_mutex);
	slurm_cond_signal(&speeds_thread_cond);
	slurm_mutex_unlock(&speeds_thread_mutex);
}

/* The speeds thread: a read when one is due (checked every second). Takes no slurmctld lock. */
static void *_speeds_agent(void *arg)
{
	struct timespec ts;

	(void) arg;
	slurm_mutex_lock(&speeds_thread_mutex);
	while (!speeds_thread_stop) {
		slurm_mutex_unlock(&speeds_thread_mutex);
		(void) dls_speeds_refresh(plugin_type);
		slurm_mutex_lock(&speeds_thread_mutex);
		if (speeds_thread_stop)
			break;
		ts = dls_time_in(1.0);
		pthread_cond_timedwait(&speeds_thread_cond, &speeds_thread_mutex, &ts);
	}
	slurm_mutex_unlock(&speeds_thread_mutex);
	return NULL;
}

/*
 * Called by the loader (loader.c) in the slurmctld whose SelectType this is, once select/cons_tres
 * is loaded and initialised: loads dlsched.conf and starts the speeds thread. No locks held.
 */
extern int dls_placement_init(dls_job_test_fn job_test)
{
	cons_tres_job_test = job_test;
	places_jobs = true;
	_load_config();
	speeds_thread_stop = false;
	dls_thread_create("dlsched_speeds", &speeds_thread, _speeds_agent, NULL);
	return SLURM_SUCCESS;
}

/* Before the loader finalises cons_tres. */
extern void dls_placement_fini(void)
{
	if (speeds_thread) {
		slurm_mutex_lock(&speeds_thread_mutex);
		speeds_thread_stop = true;
		slurm_cond_signal(&speeds_thread_cond);
		slurm_mutex_unlock(&speeds_thread_mutex);
		pthread_join(speeds_thread, NULL);
		speeds_thread = 0;
		dls_speeds_fini();
	}
	dls_scheduler_unload(&sched, &safety);
	places_jobs = false;
	if (placed_cnt || fallback_cnt || deferred_cnt)
		info(DLS_LOG_PREFIX "%" PRIu64 " jobs placed on dlsched's nodes, %" PRIu64
				    " left to cons_tres, %" PRIu64 " elastic starts deferred to sched/dlsched's sizing",
		     placed_cnt, fallback_cnt, deferred_cnt);
}

/*
 * Nodes the Placement policy picks for `job_ptr` among `bitmap`, as a new bitmap; NULL when dlsched
 * has no opinion. The view carries each node's GPU type and the speed observations the speeds
 * thread read last (no I/O here). Locks: called from select_nodes() with job and node write locks
 * held; takes the speeds mutex for the placement (a refresh waits for it, never the other way).
 */
static bitstr_t *_preferred(job_record_t *job_ptr, bitstr_t *bitmap)
{
	dlsched_node_view_t *nodes;
	dlsched_job_view_t job;
	dlsched_job_metadata_t meta;
	dlsched_cluster_view_t view;
	dlsched_share_t shares[64];
	dlsched_error_t err;
	size_t cnt = 0;
	node_record_t *node_ptr;
	bitstr_t *pref = NULL;
	int gpus, i, rc;

	if (!sched || (gpus = dls_job_gpus_requested(job_ptr)) <= 0)
		return NULL;

	nodes = xcalloc(node_record_count ? node_record_count : 1, sizeof(*nodes));
	for (i = 0; i < node_record_count; i++)
		dls_node_placeholder(&nodes[i]); /* slots next_node() skips */
	for (i = 0; (node_ptr = next_node(&i)); i++) {
		int total, used;

		dls_node_gpus(node_ptr, &total, &used);
		nodes[i].name = node_ptr->name;
		nodes[i].gpus_total = total;
		nodes[i].gpus_free = total - used;
		nodes[i].gpu_type = dls_node_gpu_type(node_ptr);
		nodes[i].partition = "";
		nodes[i].up = bit_test(bitmap, i) ? 1 : 0; /* candidates only */
	}
	memset(&job, 0, sizeof(job));
	job.struct_size = sizeof(job);
	job.job_id = job_ptr->job_id;
	job.user = job_ptr->user_name;
	job.gpus_requested = gpus;
	job.epochs_total = 1;
	job.last_stop_time = -1;
	/* Its model (and what it says of its length): a speed-aware placement ranks nodes by the
	 * speed of this model on each. */
	if (dls_job_metadata(job_ptr, &meta)) {
		if (meta.model[0])
			job.model = meta.model;
		if (meta.epochs > 0)
			job.epochs_total = meta.epochs;
		job.epoch_time_1gpu = meta.epoch_time_1gpu;
	}
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.now = (double) time(NULL);
	view.nodes = nodes;
	view.node_count = node_record_count;
	view.jobs = &job;
	view.job_count = 1;
	dls_speeds_lock();
	(void) dls_speeds_attach(&view);
	rc = dlsched_scheduler_place(sched, &view, job.job_id, gpus, shares, ARRAY_SIZE(shares), &cnt, &err);
	dls_speeds_unlock();
	if (rc == DLSCHED_OK && cnt > 0) {
		pref = bit_alloc(node_record_count);
		for (size_t k = 0; k < cnt; k++)
			bit_set(pref, shares[k].node_index);
	} else {
		debug2(DLS_LOG_PREFIX "%pJ: %s", job_ptr, err.message);
	}
	for (i = 0; i < node_record_count; i++)
		xfree(nodes[i].gpu_type);
	xfree(nodes);
	return pref;
}

/*
 * A job that no sched/dlsched cycle has judged yet, where starting it before would be undone or
 * would skip a decision: an elastic job (--dl-elastic, gpus_min/gpus_max words), which Slurm's main
 * scheduler would start at the size it was submitted with, between two cycles, and the next cycle
 * would resize at once by checkpoint and requeue; a job with a deadline (--deadline or the deadline
 * word) while DeadlineInfeasible= is hold or cancel, which the main scheduler would start before
 * the deadline admission could hold or cancel it (from Slurm 23.11 every scontrol reconfigure starts
 * a new slurmctld, whose main scheduler runs at the first submission, before the new sched/dlsched's
 * first cycle). A cycle sizes, judges and orders every pending job within SchedInterval, which gives
 * it a dlsched priority (sched/dlsched gives one to the jobs it starts itself before it starts
 * them; a held job has priority 0 and is not started anyway). Bounded: 2 x SchedInterval + 5 s after
 * its submission (sched/dlsched not running, or falling back), Slurm starts it as it would. Only
 * with SchedulerType=sched/dlsched. Locks: as select_p_job_test.
 */
static bool _awaits_dlsched(job_record_t *job_ptr)
{
	dlsched_job_metadata_t m;
	bool has_meta, elastic, deadline = false;
	char how[32] = "";
	double wait;

	if (!sched || xstrcmp(slurm_conf.schedtype, "sched/dlsched") || !job_ptr->details || job_ptr->direct_set_prio ||
	    job_ptr->priority >= DLSCHED_PRIORITY_FLOOR)
		return false;
	wait = 2 * dls_config_double(sched, "SchedInterval") + 5;
	if (difftime(time(NULL), job_ptr->details->submit_time) >= wait)
		return false;
	has_meta = dls_job_metadata(job_ptr, &m);
	elastic = has_meta && m.gpus_min > 0 && m.gpus_max > m.gpus_min;
	if (!elastic && (job_ptr->deadline > 0 || (has_meta && m.deadline > 0)))
		deadline = dlsched_config_get_text(sched, "DeadlineInfeasible", how, sizeof(how)) == DLSCHED_OK &&
			(!xstrcasecmp(how, "hold") || !xstrcasecmp(how, "cancel"));
	if (!elastic && !deadline)
		return false;
	deferred_cnt++;
	debug2(DLS_LOG_PREFIX "%pJ is %s and not %s by sched/dlsched yet: not started now", job_ptr,
	       elastic ? "elastic" : "a deadline job", elastic ? "sized" : "judged");
	return true;
}

/* select_p_job_test() with `a`'s arguments (the loader's, dlsched_compat.h); a->bitmap in and out. */
extern int dls_placement_job_test(const dls_job_test_args_t *a)
{
	job_record_t *job_ptr = a->job_ptr;
	bitstr_t *bitmap = a->bitmap, *pref;
	uint16_t mode = a->mode;
	int rc;

	/* dlsched.conf was loaded in init() or select_p_reconfigure(), never here: this runs under
	 * slurmctld's job and node write locks. */
	if (mode == SELECT_MODE_RUN_NOW && _awaits_dlsched(job_ptr))
		return ESLURM_NODES_BUSY;
	/* Capacity loaning, for every scheduler in slurmctld: training jobs on lent inference nodes
	 * only (and only jobs that can be requeued), inference jobs on the others. Not in
	 * SELECT_MODE_TEST_ONLY: whether a job could ever run (at submission) does not depend on
	 * what is lent now. */
	if (mode != SELECT_MODE_TEST_ONLY && dls_inference_partition() && bitmap) {
		node_record_t *node_ptr;

		for (int i = 0; (node_ptr = next_node(&i)); i++)
			if (bit_test(bitmap, i) && !dls_loans_allow(job_ptr, node_ptr))
				bit_clear(bitmap, i);
	}
	/* A GRES job is not started on a node whose typed GRES slurmctld does not know yet (restarted,
	 * and the node not registered since: dls_node_gres_unregistered()): Slurm 22.05 would keep
	 * them allocated after the job. It waits for the registration (at the latest MIN_CHECKIN_TIME
	 * after the start, at once after a reconfigure); planning (WILL_RUN, TEST_ONLY) still counts
	 * the node. */
	if (mode == SELECT_MODE_RUN_NOW && bitmap && job_ptr->gres_list_req && list_count(job_ptr->gres_list_req) > 0) {
		node_record_t *node_ptr;

		for (int i = 0; (node_ptr = next_node(&i)); i++)
			if (bit_test(bitmap, i) && dls_node_gres_unregistered(node_ptr)) {
				bit_clear(bitmap, i);
				debug2(DLS_LOG_PREFIX
				       "%pJ: not on %s before it registers (GRES unknown since slurmctld started)",
				       job_ptr, node_ptr->name);
			}
	}
	if (mode == SELECT_MODE_RUN_NOW && (pref = _preferred(job_ptr, bitmap))) {
		rc = cons_tres_job_test(a, pref);
		if (rc == SLURM_SUCCESS) {
			bit_copybits(bitmap, pref); /* the nodes cons_tres selected */
			FREE_NULL_BITMAP(pref);
			placed_cnt++;
			return rc;
		}
		FREE_NULL_BITMAP(pref);
		fallback_cnt++;
		debug2(DLS_LOG_PREFIX "%pJ does not fit on dlsched's nodes; cons_tres chooses", job_ptr);
	}
	return cons_tres_job_test(a, bitmap);
}

/*
 * scontrol reconfigure (and Slurm's other calls after partition, node or
 * DebugFlags changes): dlsched.conf and the model profiles are read again now;
 * the loader then calls cons_tres's. Locks: the caller's (read_slurm_conf():
 * config, job, node and partition write); a few milliseconds for the file and
 * the profiles.
 */
extern void dls_placement_reconfigure(void)
{
	_load_config();
}
