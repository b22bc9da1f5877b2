/*****************************************************************************\
 *  dlsched_compat.h - what differs between the Slurm releases dlsched's
 *  plugins are built for: 22.05 (Debian 12), 24.11 (Debian 13) and 26.05.
 *
 *  configure reads the release from the source tree it is given
 *  (--with-slurm-source) and passes DLS_SLURM_RELEASE = major * 100 + minor
 *  (2205, 2411, 2605). Every difference the plugins meet lives here and in
 *  dlsched_compat.c (helpers), dlsched_compat_ctld.c (slurmctld calls of
 *  sched/dlsched), dlsched_compat_select.c (the select ops list
 *  and select_p_* entry points of the loader) and dlsched_compat_preempt.c
 *  (the preempt_p_* entry points); the plugins' own files carry no #if on
 *  the release. Read from SchedMD's tags (doc/admin-guide.md, "Slurm
 *  releases"); one build per Slurm point release (plugin_version).
\*****************************************************************************/

#ifndef _DLSCHED_COMPAT_H
#define _DLSCHED_COMPAT_H

#ifndef DLS_SLURM_RELEASE
#error "DLS_SLURM_RELEASE is not defined: build dlsched's plugins through its configure (--with-slurm-source=DIR)"
#endif
#if DLS_SLURM_RELEASE != 2205 && DLS_SLURM_RELEASE != 2411 && DLS_SLURM_RELEASE != 2605
#error "dlsched's plugins support Slurm 22.05, 24.11 and 26.05 (DLS_SLURM_RELEASE 2205, 2411, 2605)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "slurm/slurm.h"
#include "src/common/list.h"

/* 23.02 moved the plugin interfaces' headers to src/interfaces/. */
#if DLS_SLURM_RELEASE >= 2302
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#else
#include "src/common/gres.h"
#include "src/common/select.h"
#endif
#if DLS_SLURM_RELEASE >= 2605
#include "src/common/threadpool.h"
#endif
#include "src/slurmctld/slurmctld.h"

/* 23.02 dropped the List and ListIterator typedefs for list_t * and list_itr_t *: the plugins use the
 * new names; 22.05 gets them here. */
#if DLS_SLURM_RELEASE < 2302
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
#endif

/* A thread of the plugin's own; 26.05 names its threads (slurm_thread_create(name, ...)). */
#if DLS_SLURM_RELEASE >= 2605
#define dls_thread_create(name, id, func, arg) slurm_thread_create(name, id, func, arg)
#else
#define dls_thread_create(name, id, func, arg) slurm_thread_create(id, func, arg)
#endif
/* A detached one: slurm_thread_create_detached(id, func, arg) in 22.05 (id may be NULL), (func, arg)
 * in 24.11, (name, func, arg) in 26.05. */
#if DLS_SLURM_RELEASE >= 2605
#define dls_thread_create_detached(name, func, arg) slurm_thread_create_detached(name, func, arg)
#elif DLS_SLURM_RELEASE >= 2411
#define dls_thread_create_detached(name, func, arg) slurm_thread_create_detached(func, arg)
#else
#define dls_thread_create_detached(name, func, arg) slurm_thread_create_detached(NULL, func, arg)
#endif

/*
 * select/dlsched_cons_tres's plugin_id. From 25.05 slurmctld tests `*plugin_id == 109`
 * (running_cons_tres()) and behaves as select/linear otherwise, and loads only SelectType's select
 * plugin: a wrapper must carry cons_tres's own id. Before, every select plugin of PluginDir is loaded
 * and ids must be unique (>= 100).
 */
#if DLS_SLURM_RELEASE >= 2505
#define DLS_SELECT_PLUGIN_ID 109
#else
#define DLS_SELECT_PLUGIN_ID 190
#endif

/* The arguments of select_p_job_test() in this release (24.11: the reservation's excluded TRES and
 * the will-run data replace the excluded cores' bitmap). */
typedef struct {
	job_record_t *job_ptr;
	bitstr_t *bitmap;
	uint32_t min_nodes;
	uint32_t max_nodes;
	uint32_t req_nodes;
	uint16_t mode;
	list_t *preemptee_candidates;
	list_t **preemptee_job_list;
#if DLS_SLURM_RELEASE >= 2411
	resv_exc_t *resv_exc_ptr;
	will_run_data_t *will_run_ptr;
#else
	bitstr_t *exc_core_bitmap;
#endif
} dls_job_test_args_t;

/* select/cons_tres's job_test() with `a`'s arguments over `bitmap` (a's own, or another candidate
 * set): dls_cons_tres_job_test() in dlsched_compat_select.c, handed to the placement part. */
typedef int (*dls_job_test_fn)(const dls_job_test_args_t *a, bitstr_t *bitmap);

/* ---- dlsched_compat_select.c: linked into select_dlsched_cons_tres.so (loader.c) only ---- */

/* The select_p_* symbols of select/cons_tres in the order of this release's ops list. */
extern const char *const dls_select_syms[];
extern const size_t dls_select_sym_cnt;
/* The table dls_select_syms' addresses go into, in that order (filled by loader.c). */
extern void **dls_select_ops_slots(void);
extern int dls_cons_tres_job_test(const dls_job_test_args_t *a, bitstr_t *bitmap);
/* Defined by loader.c: where select_p_job_test() and select_p_reconfigure() go first. */
extern int dls_loader_job_test(const dls_job_test_args_t *a);
extern void dls_loader_reconfigure(void);

/* ---- dlsched_compat_preempt.c: linked into preempt_dlsched.so only ---- */

/* Defined by preempt/dlsched (preempt_dlsched.c); 22.05 and 24.11 reach them through
 * preempt_p_get_data(), 25.05 and later through preempt_p_get_{mode,prio,grace_time}(). */
extern uint16_t dls_preempt_mode(job_record_t *job_ptr);
extern uint32_t dls_preempt_prio(job_record_t *job_ptr);
extern uint32_t dls_preempt_grace_time(job_record_t *job_ptr);

/* ---- dlsched_compat.c: helpers over slurmctld's internals ---- */

/* The text of a job state reason (job_reason_string(), job_state_reason_string() from 24.05). */
extern const char *dls_job_reason_string(enum job_state_reason reason);
/* Whether the job's state reason is not an association or QOS limit (22.05's
 * acct_policy_job_runnable_state(); job_state_reason_check(JSR_QOS_ASSOC) from 24.05). */
extern bool dls_acct_policy_runnable_state(job_record_t *job_ptr);
/* Whether the select plugin still cleans up the job's previous run (22.05's
 * SELECT_JOBDATA_CLEANING; gone in 23.11, where prolog_running and step_list say it all). */
extern bool dls_select_job_cleaning(job_record_t *job_ptr);

/* A job's per-node GPU request as update_job() takes it in tres_per_node, [type:]count GPUs per node
 * (type NULL or empty: untyped), as a new xstring: "gres:gpu[:type]:N" in 22.05 ("gres/gpu" there
 * is accepted and changes nothing), "gres/gpu[:type]:N" from 24.11 ("gres:gpu" there is refused as
 * an invalid TRES). */
extern char *dls_tres_per_node_gpus(const char *type, int count);
/* A TRES entry that names GPUs, in either release's form ("gres:gpu[:TYPE][:N]", "gres/gpu..."):
 * true, with its type (xmalloc'ed, NULL when untyped) and its count (1 when it gives none) where
 * asked. The one reading of such an entry (resizes, job_submit/dlsched). */
extern bool dls_tres_gpu_entry(const char *entry, char **type, long *count);

/* ---- dlsched_compat_ctld.c: slurmctld calls whose form changed (sched/dlsched) ---- */

/* The job a job_desc_msg_t (an update request) names: job_id until 25.05, step_id.job_id from
 * 25.11. */
extern void dls_job_desc_set_job_id(job_desc_msg_t *desc, uint32_t job_id);
/* job_test_resv() for a start at *when, without moving it: SLURM_SUCCESS and in *avail (the caller
 * frees it) the nodes the job's reservations let it use. The excluded cores (22.05) or TRES
 * (resv_exc_t, from 23.02) are freed here. Locks: job write, node read. */
extern int dls_job_test_resv(job_record_t *job_ptr, time_t *when, bitstr_t **avail);
/* select_nodes() for a start now by a scheduler (not a test, not a submission): 24.11 takes a
 * job_node_select_t. Locks: job and node write, config and partition read. */
extern int dls_select_nodes(job_record_t *job_ptr);
/* What a scheduler does once select_nodes() started a job: power_g_job_start() (22.05; gone in
 * 23.02), then srun_allocate() (an salloc/srun allocation) or launch_job() (a batch job). */
extern void dls_job_launch(job_record_t *job_ptr);
/* Requeue a running or ended job as `uid` (not a preemption, no flags): job_requeue(uid, job_id,
 * ...) until 25.05, job_requeue_internal(uid, job_ptr, ...) from 25.11. On every release the ended
 * run's accounting record reads REQUEUED (26.05 no longer writes it for a job that had ended: the
 * compat layer does). Locks: job write. */
extern int dls_job_requeue(uid_t uid, job_record_t *job_ptr);
/* srun_allocate_abort(): the same call, declared in src/slurmctld/srun_comm.h until 23.11 and in
 * src/stepmgr/srun_comm.h from 24.05. */
extern void dls_srun_allocate_abort(job_record_t *job_ptr);

#endif /* _DLSCHED_COMPAT_H */
