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
#include <sys/stat.h>

/* Slurm's headers for the release the plugins are built for (gres, select, slurmctld). */
#include "dlsched_compat.h"

#include "dlsched/api.h"
#include "dlsched/words.h"

/* A copy of the cluster as the core sees it: owns every string and array. */
typedef struct {
	dlsched_cluster_view_t view;
	dlsched_node_view_t *nodes;
	dlsched_job_view_t *jobs;
	dlsched_share_t *shares; /* all running jobs' shares, one block */
	size_t job_cap;
	int pending; /* pending jobs in the view */
	int running; /* running jobs in the view */
	/* runnable_only: jobs left out as not runnable that hold a dlsched
	 * priority (>= DLSCHED_PRIORITY_FLOOR, not set by an admin) */
	uint32_t *left_out;
	size_t left_out_cnt;
	/* The accounts of the jobs, from Slurm's associations (FairnessPolicy=). */
	dlsched_account_view_t *accounts;
} dls_snapshot_t;

/* ---- slurmctld only (dlsched_snapshot.c) ---- */

/*
 * Copy nodes and jobs into a snapshot. Pending jobs that are held
 * (priority 0), hetjobs, array meta records and jobs without GPUs are left
 * out.
 * runnable_only false - locks: the caller holds at least read locks on
 *	config, job, node and partition; it reads only. Pending jobs that are
 *	not eligible yet by their state reason (dependency, hold) or begin time
 *	are left out too.
 * runnable_only true - locks: the caller holds config read, job write, node
 *	write, partition read, federation read (as Slurm's schedulers do).
 *	Pending jobs that Slurm's own schedulers would not start now
 *	(dls_job_not_runnable()) are left out, so that they take no planned
 *	GPUs; Slurm's checks update their state reason, and may end a job
 *	whose dependency can never be satisfied (kill_invalid_depend).
 * Takes no lock itself and allocates only (xmalloc).
 */
extern dls_snapshot_t *dls_snapshot_take(time_t now, uint64_t cycle, bool runnable_only);
extern void dls_snapshot_free(dls_snapshot_t *snap);

/*
 * Why Slurm's own schedulers would not start pending job `job_ptr` now, or
 * NULL if they would: the checks of the main scheduler (job_scheduler.c:
 * _job_runnable_test1/2, _schedule) and of sched/backfill before
 * select_nodes(), through Slurm's own functions: job_independent()
 * (dependencies, including never satisfiable ones, begin time, holds,
 * FAIL_ACCOUNT, FAIL_QOS, WAIT_RESV_DELETED, reservation not active),
 * partition state (PARTITION_SCHED), job_limits_check(), licences,
 * accounting policy limits, the association. Reservations on the planned
 * nodes and the federation lock are the caller's, at start time.
 * Locks: config read, job write, node write, partition read, federation
 * read (the checks update the job's state reason and begin time).
 */
extern const char *dls_job_not_runnable(job_record_t *job_ptr, time_t now);

/*
 * Whether Slurm can requeue the job (job_requeue()), as _job_requeue_op()
 * decides: a batch job with a partition whose requeue is allowed
 * (--requeue, or JobRequeue=1 and no --no-requeue). dlsched never
 * checkpoints, preempts or resizes any other running job.
 * Locks: job read.
 */
extern bool dls_job_requeueable(job_record_t *job_ptr);

/* The absolute time `seconds` (>= 0, fractions kept) from now, for pthread_cond_timedwait. */
extern struct timespec dls_time_in(double seconds);

/* GPUs a running job holds over all its nodes (its gres/gpu allocation). Locks: job read. */
extern int dls_job_gpus_allocated(job_record_t *job_ptr);

/* The gres/gpu record of a gres list (node, job request or allocation), or NULL. */
extern gres_state_t *dls_find_gpu_state(list_t *gres_list);

/* A job's GPU request above this counts as this (it never fits); the core's sums stay in int. */
#define DLS_MAX_JOB_GPUS (1 << 24)

/*
 * All of a job's dlsched metadata in one reading, by the core's one parser
 * (dlsched_parse_job_metadata, common/model/job_metadata.h): the comment's words
 * ("model=imagenet epochs=12 epoch_time_1gpu=456.7 gpus_min=2 gpus_max=8
 * deadline=<epoch s>"), then what spank/dlsched put in the job's environment
 * (DL_MODEL, DL_EPOCHS, DL_ELASTIC; sbatch --dl-*) over them. These come from
 * users: values outside spank/dlsched's submit-time limits (kMaxEpochs, ... in
 * job_metadata.h; a client can skip that check) are ignored. The deadline=
 * word counts only as Slurm's --deadline would have (after the begin time +
 * time-min), and once dlsched recorded a deadline for the job (the admin
 * comment's deadline=) that one counts, whatever the comment says later.
 * Returns false (and *m all zero) if the core could not be asked.
 * Locks: job read.
 */
extern bool dls_job_metadata(job_record_t *job_ptr, dlsched_job_metadata_t *m);

/* GPUs a job asked for in total (gres/gpu per node x nodes, or per job), at most DLS_MAX_JOB_GPUS. */
extern int dls_job_gpus_requested(job_record_t *job_ptr);
/* GPUs configured on / allocated on a node (gres/gpu). */
extern void dls_node_gpus(node_record_t *node_ptr, int *total, int *used);
/*
 * The type of a node's GPUs (gres.conf Type=, slurm.conf Gres=gpu:TYPE:N) in
 * lower case, as the model profiles name them ("v100"), xmalloc'ed; NULL when
 * they have none (the reference type). A node with several types: the first
 * with GPUs. Locks: node read.
 */
extern char *dls_node_gpu_type(node_record_t *node_ptr);
/*
 * True while a node's typed GRES (Gres=gpu:v100:4) are not known to this slurmctld yet: it has
 * (re)started and the node's slurmd has not registered since (gres_cnt_found still NO_VAL64, so no
 * topology: which device index is which type). Slurm 22.05 must not allocate such GRES to a job:
 * gres_ctld_job_alloc() then gives an untyped request (--gres=gpu:4) a typed allocation record
 * with no count and no devices, so gres_ctld_job_dealloc() at the job's end frees nothing and the
 * node keeps the GPUs counted as allocated (AllocTRES=gres/gpu=4 on an idle node) until the next
 * scontrol reconfigure. A node that ran a job is made IDLE by that job's end without a
 * registration, and a scheduler that starts jobs right after slurmctld starts or reconfigures
 * (sched/dlsched does) can place one there in that window. Locks: node read.
 */
extern bool dls_node_gres_unregistered(node_record_t *node_ptr);
/* Whether the job's GPUs are asked per node (--gres, --gpus-per-node), the only shape sched/dlsched
 * can resize: Slurm refuses a per-node count beside GPUs per job or per task (--gpus,
 * --gpus-per-task), so such a job is rigid. Locks: job read. */
extern bool dls_job_gpus_per_node(job_record_t *job_ptr);

/*
 * A node view for a slot of Slurm's node table that holds no node (dynamic
 * nodes: MaxNodeCount=, scontrol create/delete NodeName=; next_node() skips
 * it): no name, no GPUs, not up. Views keep Slurm's node indices, so every
 * slot below node_record_count gets a view.
 */
extern void dls_node_placeholder(dlsched_node_view_t *n);

/*
 * Record the job's deadline in its admin comment as "deadline=<epoch s>", so
 * that sacct (AdminComment) can compute deadline completion rates: Slurm does
 * not store deadlines in accounting. Locks: job write lock held by the caller.
 * Returns true if the comment changed.
 */
extern bool dls_record_deadline(job_record_t *job_ptr);

/*
 * The job's deadline: Slurm's (--deadline), else the comment word
 * "deadline=<epoch s>" (dlsched-replay's, for deadlines seconds away at
 * compressed time, which Slurm's minute-granular time limits cannot express);
 * 0 when none. Locks: job read.
 */
extern time_t dls_job_deadline(job_record_t *job_ptr);
/* Whether the job is held by sched/dlsched's deadline admission (admin comment dl_held=, not
 * released since: dl_released=): such a job stays in the view and is judged again every cycle. */
extern bool dls_job_held_by_dlsched(job_record_t *job_ptr);

/*
 * Add "KEY=<value>" to the job's admin comment unless a KEY= token is there
 * already (the first one stays). Locks: job write lock held by the caller.
 * Returns true if the comment changed.
 */
extern bool dls_admin_comment_once(job_record_t *job_ptr, const char *key, long value);
/* The value of the admin comment's word `key`=N, or -1 when it has none. Locks: job read. */
extern long dls_admin_comment_value(job_record_t *job_ptr, const char *key);
/* Sets the admin comment's word `key`=value (replacing it, the other words kept). Locks: job write. */
extern void dls_admin_comment_set(job_record_t *job_ptr, const char *key, long value);

/* ---- any daemon (dlsched_slurm.c) ---- */

/*
 * Create the dlsched scheduler from dlsched.conf next to slurm.conf, set
 * its cluster name (ClusterName) and log its description. A plugin that only
 * places jobs (placement_only: select/dlsched_cons_tres) gets the preset's
 * placement even for a learned preset (dlsched_scheduler_create_placement()),
 * and the notes saying what stands in for the learned policies are logged.
 * On failure logs why (naming the file) and returns NULL: the caller then
 * leaves the decision to Slurm.
 */
extern dlsched_scheduler_t *dls_scheduler_load(const char *plugin, bool placement_only, char **conf_path_out);

/*
 * (Re)load dlsched.conf for a plugin that keeps the safety rules (two-step
 * preemptions in progress, the loan fence, reclaims) going whatever the
 * policy. *sched is the scheduler that decides: NULL when the file is missing
 * or does not load (Slurm decides alone). *safety is the object the safety
 * rules read their settings from: the new scheduler when it loads; else the
 * last one that loaded, kept as it was (a typo does not change ProfileDB= or
 * the inference partition under the jobs); else, when none ever loaded since
 * the plugin started, the file's safety keys read leniently
 * (dlsched_scheduler_create_safety()). Either pointer may be NULL on entry;
 * objects replaced are destroyed. Returns *sched.
 */
extern dlsched_scheduler_t *dls_scheduler_reload(const char *plugin, bool placement_only, dlsched_scheduler_t **sched,
						 dlsched_scheduler_t **safety);
/* Destroys both (each once; they may be the same object) and sets them NULL. */
extern void dls_scheduler_unload(dlsched_scheduler_t **sched, dlsched_scheduler_t **safety);

/*
 * Seconds Slurm holds a requeued job back before it may start again: the
 * credential lifetime + 1 (job_requeue() sets its begin time so), from
 * slurm.conf's AuthInfo=cred_expire= (Slurm's default 120, values under 5
 * refused as Slurm refuses them). Every restart and resize costs it.
 */
extern double dls_requeue_delay(void);

/* A dlsched.conf number key as `sched` has it (NULL: dlsched.conf does not load), defaults included:
 * the default is read from the core's table of keys (dlsched_config_get_double), never restated. An
 * unknown or non-number key (a bug) is logged and reads 0. */
extern double dls_config_double(dlsched_scheduler_t *sched, const char *key);

/* ---- Capacity loaning (dlsched_loans.c; any daemon: only node and partition records) ---- */

/* Whether a file that declares dlsched state (InferenceDemandFile=, GuardVerdictFile=) may be
 * trusted: a regular file (not a FIFO, a device, a link) owned by root or SlurmUser and writable by
 * nobody else. `why` says why not. `st` from lstat() or fstat(). */
extern bool dls_file_trusted(const struct stat *st, char *why, size_t len);

/* InferencePartition=, InferenceDemandFile=, LoanStateFile= from dlsched.conf (NULL sched: loaning off). */
extern void dls_loans_configure(dlsched_scheduler_t *sched);
/* The inference partition's name, or NULL when loaning is off. */
extern const char *dls_inference_partition(void);
extern const char *dls_inference_demand_path(void);
/* Whether the node belongs to the inference partition. Locks: node read (partition pointers). */
extern bool dls_node_in_inference(node_record_t *node_ptr);
/* Whether the inference node is lent to training (the loan state file; re-read when it changes). */
extern bool dls_node_loaned(const char *node_name);
extern int dls_loans_count(void);
/*
 * Lends (true) or takes back a node, in memory at once; a writer thread writes the loan state file
 * (atomically, with fsync) with no lock held, and retries a failed write every few seconds, logging
 * each failure. No I/O here: any lock may be held. sched/dlsched only. Taking a node back with
 * `since` != 0 records a reclaim under way since then (kept in the same file, so that it survives a
 * restart) until dls_loans_reclaim_done(); lending it again ends its reclaim.
 */
extern int dls_loans_set(const char *node_name, bool loaned, time_t since);
/* A reclaim under way: the node was taken back at `since`; `late` once it was found late (memory
 * only: logged again after a restart). */
typedef struct {
	char *node;
	time_t since;
	bool late;
} dls_reclaim_t;
/* The reclaims under way (a copy in *out, freed with dls_loans_reclaims_free()), as memory or,
 * after a restart, the loan state file has them; 0 when loaning is off. */
extern int dls_loans_reclaims(dls_reclaim_t **out);
extern void dls_loans_reclaims_free(dls_reclaim_t *r, int cnt);
/* The node's reclaim is over (it is free of training, or gone): removed, file written as for
 * dls_loans_set(). */
extern void dls_loans_reclaim_done(const char *node_name);
/* Marks the node's reclaim late (in memory). */
extern void dls_loans_reclaim_late(const char *node_name);
/* Waits (at most timeout_s) until the loan state file holds what memory does; false if it does
 * not. No slurmctld lock may be held. */
extern bool dls_loans_flush(double timeout_s);
/* Flushes the loan state and ends the writer thread (also run when the plugin is unloaded). No
 * slurmctld lock may be held. */
extern void dls_loans_fini(void);
/*
 * The declared inference demand in [0, 1]; 1 (nothing lent) when none is declared or the file is
 * refused (not a regular file - a FIFO, a device -, not owned by root or SlurmUser, writable by
 * others, larger than 4 KiB), and `why` (when not NULL) says why, in printable ASCII. 0 when
 * loaning is off. Reads the file: no slurmctld lock may be held (a hung file system would stall
 * them). The value is kept for dls_inference_demand_cached().
 */
extern double dls_inference_demand(char *why, size_t len);
/* The demand dls_inference_demand() read last (0 when loaning is off): what the snapshot uses under
 * the locks. No I/O, except once when the file was never read (slurmctld started, or the path
 * changed): then a non-blocking read as dls_inference_demand()'s, so that the first cycle does
 * not take back every lent node. */
extern double dls_inference_demand_cached(void);
/* Whether `job_ptr` may run on `node_ptr` as loaning stands: an inference job only on inference
 * nodes not lent, a training job on an inference node only when it is lent and the job can be
 * requeued. Any node when loaning is off or the node is not an inference node. Locks: job and
 * node read. */
extern bool dls_loans_allow(job_record_t *job_ptr, node_record_t *node_ptr);

/* ---- Speed observations (dlsched_speeds.c; any daemon: no Slurm record is read) ---- */

/* The most runs a view carries: dlsched-sim's default observation history. */
#define DLS_SPEED_SAMPLES 512

/* ProfileDB= and ProfileRefresh= of a (re)loaded dlsched.conf (NULL sched: none); the next
 * dls_speeds_refresh() reads. No I/O: any lock may be held. */
extern void dls_speeds_configure(dlsched_scheduler_t *sched);
/* Reads the profile DB's latest runs per node when ProfileRefresh= seconds have passed since the
 * last read (or after dls_speeds_configure()); logs why when it cannot (once per reason; the last
 * samples stay). Returns the runs read, -1 when no read was due (or none is configured) or it
 * failed. From one thread, with no slurmctld lock held: it reads SQLite. */
extern int dls_speeds_refresh(const char *plugin);
/* The samples' mutex: hold it from dls_speeds_attach() until the core has read the view. */
extern void dls_speeds_lock(void);
extern void dls_speeds_unlock(void);
/* Points the view at the current samples (a C ABI 6 view); returns how many. */
extern size_t dls_speeds_attach(dlsched_cluster_view_t *view);
extern void dls_speeds_fini(void);

#endif
