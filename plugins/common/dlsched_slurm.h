/*****************************************************************************\
 *  dlsched_slurm.h - what every dlsched controller plugin shares: reading
 *  slurmctld's job and node records into the plain views of the dlsched C ABI
 *  (common/include/dlsched/api.h), and loading dlsched.conf.
 *
 *  The only code in dlsched that includes Slurm's internal headers is under
 *  plugins/. The core never calls back into Slurm.
\*****************************************************************************/

#ifndef _DLSCHED_SLURM_H
#define _DLSCHED_SLURM_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "src/common/gres.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched/api.h"

/* A copy of the cluster as the core sees it: owns every string and array. */
typedef struct {
	dlsched_cluster_view_t view;
	dlsched_node_view_t *nodes;
	dlsched_job_view_t *jobs;
	dlsched_share_t *shares;	/* all running jobs' shares, one block */
	size_t job_cap;
	int pending;			/* pending jobs in the view */
	int running;			/* running jobs in the view */
} dls_snapshot_t;

/* ---- slurmctld only (dlsched_snapshot.c) ---- */

/*
 * Copy nodes and jobs into a snapshot.
 * Locks: the caller holds at least read locks on config, job, node and
 * partition. Takes nothing else and allocates only (xmalloc).
 * Pending jobs that are held (priority 0) or not eligible yet (begin time in
 * the future, dependency) are left out: Slurm would not start them either.
 */
extern dls_snapshot_t *dls_snapshot_take(time_t now, uint64_t cycle);
extern void dls_snapshot_free(dls_snapshot_t *snap);

/* The gres/gpu record of a gres list (node, job request or allocation), or NULL. */
extern gres_state_t *dls_find_gpu_state(List gres_list);

/* GPUs a job asked for in total (gres/gpu per node x nodes, or per job). */
extern int dls_job_gpus_requested(job_record_t *job_ptr);
/* GPUs configured on / allocated on a node (gres/gpu). */
extern void dls_node_gpus(node_record_t *node_ptr, int *total, int *used);

/*
 * A node view for a slot of Slurm's node table that holds no node (dynamic
 * nodes: MaxNodeCount=, scontrol create/delete NodeName=; next_node() skips
 * it): no name, no GPUs, not up. Views keep Slurm's node indices, so every
 * slot below node_record_count gets a view.
 */
extern void dls_node_placeholder(dlsched_node_view_t *n);

/*
 * Parse the dlsched job metadata ("model=resnet50 epochs=12
 * epoch_time_1gpu=456.7 gpus_min=2 gpus_max=8", anywhere in the job's comment;
 * see plugins/sched/dlsched/README.md). gpus_min/gpus_max make a job elastic.
 * Unknown or absent fields stay as they are. Returns true if any was found.
 */
extern bool dls_parse_job_comment(const char *comment, char *model, size_t model_len, double *epochs,
				  double *epoch_time_1gpu, int *gpus_min, int *gpus_max);

/*
 * What spank/dlsched put in the job's SPANK job-control environment (sbatch --dl-model=NAME
 * --dl-epochs=N --dl-elastic=MIN:MAX): DL_MODEL, DL_EPOCHS, DL_ELASTIC (job_ptr->spank_job_env;
 * a SPANK_ prefix, as prolog and epilog see them, is accepted too). Sets
 * only what is there and valid; these override the comment's values. Returns true if any was found.
 */
extern bool dls_parse_spank_env(char **env, uint32_t env_size, char *model, size_t model_len, double *epochs,
				int *gpus_min, int *gpus_max);

/*
 * Record the job's deadline in its admin comment as "deadline=<epoch s>", so
 * that sacct (AdminComment) can compute deadline completion rates: Slurm does
 * not store deadlines in accounting. Locks: job write lock held by the caller.
 * Returns true if the comment changed.
 */
extern bool dls_record_deadline(job_record_t *job_ptr);

/* ---- any daemon (dlsched_slurm.c) ---- */

/*
 * Create the dlsched scheduler from dlsched.conf next to slurm.conf, set
 * its cluster name (ClusterName) and log its description.
 * On failure logs why (naming the file) and returns NULL: the caller then
 * leaves the decision to Slurm.
 */
extern dlsched_scheduler_t *dls_scheduler_load(const char *plugin, char **conf_path_out);

/* A dlsched.conf value (defaults included) as a double; `def` if unreadable. */
extern double dls_config_double(dlsched_scheduler_t *sched, const char *key, double def);

#endif
