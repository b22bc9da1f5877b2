/*****************************************************************************\
 *  dlsched_compat_select.c - the select interface of each Slurm release, for
 *  select/dlsched_cons_tres's loader (loader.c): the ops list (the symbols
 *  Slurm resolves, in its order) and the select_p_* entry points, each
 *  forwarded to select/cons_tres, except job_test() and reconfigure(), which
 *  go to the loader first (dls_loader_job_test(), dls_loader_reconfigure()).
 *
 *  Linked into select_dlsched_cons_tres.so only. A wrapper must carry the
 *  exact list of its release: 37 entries in 22.05 (src/common/select.h),
 *  32 in 24.11 and 14 in 26.05 (private to src/interfaces/select.c).
\*****************************************************************************/

#include "dlsched_compat.h"

#include "src/common/xmalloc.h"

/*
 * The entry points below take their types from Slurm's headers; Slurm declares none of them (they
 * are resolved by name), so each gets a prototype here for -Wmissing-prototypes.
 */
#define DLS_FWD(ret, name, params)                                                                                     \
	extern ret name params;                                                                                        \
	extern ret name params

#if DLS_SLURM_RELEASE == 2205

const char *const dls_select_syms[] = {
	"plugin_id",
	"select_p_state_save",
	"select_p_state_restore",
	"select_p_job_init",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
	"select_p_job_signal",
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_step_pick_nodes",
	"select_p_step_start",
	"select_p_step_finish",
	"select_p_select_nodeinfo_pack",
	"select_p_select_nodeinfo_unpack",
	"select_p_select_nodeinfo_alloc",
	"select_p_select_nodeinfo_free",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_select_nodeinfo_get",
	"select_p_select_jobinfo_alloc",
	"select_p_select_jobinfo_free",
	"select_p_select_jobinfo_set",
	"select_p_select_jobinfo_get",
	"select_p_select_jobinfo_copy",
	"select_p_select_jobinfo_pack",
	"select_p_select_jobinfo_unpack",
	"select_p_select_jobinfo_sprint",
	"select_p_select_jobinfo_xstrdup",
	"select_p_get_info_from_plugin",
	"select_p_update_node_config",
	"select_p_reconfigure",
	"select_p_resv_test",
};
/* 22.05 publishes its ops table (src/common/select.h). */
static slurm_select_ops_t to;

extern int dls_cons_tres_job_test(const dls_job_test_args_t *a, bitstr_t *bitmap)
{
	return to.job_test(a->job_ptr, bitmap, a->min_nodes, a->max_nodes, a->req_nodes, a->mode,
			   a->preemptee_candidates, a->preemptee_job_list, a->exc_core_bitmap);
}

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode, List preemptee_candidates, List *preemptee_job_list,
			     bitstr_t *exc_core_bitmap);
extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode, List preemptee_candidates, List *preemptee_job_list,
			     bitstr_t *exc_core_bitmap)
{
	dls_job_test_args_t a = {
		job_ptr,	bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates, preemptee_job_list,
		exc_core_bitmap};

	return dls_loader_job_test(&a);
}
DLS_FWD(int, select_p_state_save, (char *dir_name))
{
	return to.state_save(dir_name);
}
DLS_FWD(int, select_p_state_restore, (char *dir_name))
{
	return to.state_restore(dir_name);
}
DLS_FWD(int, select_p_job_init, (List job_list))
{
	return to.job_init(job_list);
}
DLS_FWD(int, select_p_job_signal, (job_record_t * job_ptr, int signal))
{
	return to.job_signal(job_ptr, signal);
}
DLS_FWD(char *, select_p_select_jobinfo_sprint, (select_jobinfo_t * jobinfo, char *buf, size_t size, int mode))
{
	return to.jobinfo_sprint(jobinfo, buf, size, mode);
}
DLS_FWD(char *, select_p_select_jobinfo_xstrdup, (select_jobinfo_t * jobinfo, int mode))
{
	return to.jobinfo_xstrdup(jobinfo, mode);
}
DLS_FWD(int, select_p_update_node_config, (int index))
{
	return to.update_node_config(index);
}
DLS_FWD(bitstr_t *, select_p_resv_test,
	(resv_desc_msg_t * resv_desc_ptr, uint32_t node_cnt, bitstr_t *avail_bitmap, bitstr_t **core_bitmap))
{
	return to.resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}

#elif DLS_SLURM_RELEASE == 2411

const char *const dls_select_syms[] = {
	"plugin_id",
	"select_p_state_save",
	"select_p_state_restore",
	"select_p_job_init",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_step_pick_nodes",
	"select_p_step_start",
	"select_p_step_finish",
	"select_p_select_nodeinfo_pack",
	"select_p_select_nodeinfo_unpack",
	"select_p_select_nodeinfo_alloc",
	"select_p_select_nodeinfo_free",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_select_nodeinfo_get",
	"select_p_select_jobinfo_alloc",
	"select_p_select_jobinfo_free",
	"select_p_select_jobinfo_set",
	"select_p_select_jobinfo_get",
	"select_p_select_jobinfo_copy",
	"select_p_select_jobinfo_pack",
	"select_p_select_jobinfo_unpack",
	"select_p_get_info_from_plugin",
	"select_p_reconfigure",
};
/* 24.11's ops list (private to src/interfaces/select.c), in that order. */
static struct {
	uint32_t *plugin_id;
	int (*state_save)(char *dir_name);
	int (*state_restore)(char *dir_name);
	int (*job_init)(list_t *job_list);
	int (*node_init)(void);
	int (*job_test)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode, list_t *preemptee_candidates, list_t **preemptee_job_list,
			resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr);
	int (*job_begin)(job_record_t *job_ptr);
	int (*job_ready)(job_record_t *job_ptr);
	int (*job_expand)(job_record_t *from_job_ptr, job_record_t *to_job_ptr);
	int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
	int (*job_fini)(job_record_t *job_ptr);
	int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
	int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
	bitstr_t *(*step_pick_nodes)(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo, uint32_t node_count,
				     bitstr_t **avail_nodes);
	int (*step_start)(step_record_t *step_ptr);
	int (*step_finish)(step_record_t *step_ptr, bool killing_step);
	int (*nodeinfo_pack)(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version);
	int (*nodeinfo_unpack)(select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version);
	select_nodeinfo_t *(*nodeinfo_alloc)(void);
	int (*nodeinfo_free)(select_nodeinfo_t *nodeinfo);
	int (*nodeinfo_set_all)(void);
	int (*nodeinfo_set)(job_record_t *job_ptr);
	int (*nodeinfo_get)(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo, enum node_states state,
			    void *data);
	select_jobinfo_t *(*jobinfo_alloc)(void);
	int (*jobinfo_free)(select_jobinfo_t *jobinfo);
	int (*jobinfo_set)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
	int (*jobinfo_get)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
	select_jobinfo_t *(*jobinfo_copy)(select_jobinfo_t *jobinfo);
	int (*jobinfo_pack)(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version);
	int (*jobinfo_unpack)(select_jobinfo_t **jobinfo_pptr, buf_t *buffer, uint16_t protocol_version);
	int (*get_info_from_plugin)(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data);
	int (*reconfigure)(void);
} to;

DLS_FWD(int, select_p_state_save, (char *dir_name))
{
	return to.state_save(dir_name);
}
DLS_FWD(int, select_p_state_restore, (char *dir_name))
{
	return to.state_restore(dir_name);
}
DLS_FWD(int, select_p_job_init, (list_t * job_list))
{
	return to.job_init(job_list);
}

#else /* 2605 */

const char *const dls_select_syms[] = {
	"plugin_id",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
	"select_p_job_mem_reduce",
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_reconfigure",
};
/* 26.05's ops list (private to src/interfaces/select.c), in that order. */
static struct {
	uint32_t *plugin_id;
	int (*node_init)(void);
	int (*job_test)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode, list_t *preemptee_candidates, list_t **preemptee_job_list,
			resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr);
	int (*job_begin)(job_record_t *job_ptr);
	int (*job_ready)(job_record_t *job_ptr);
	int (*job_expand)(job_record_t *from_job_ptr, job_record_t *to_job_ptr);
	int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
	void (*job_mem_reduce)(job_record_t *job_ptr);
	int (*job_fini)(job_record_t *job_ptr);
	int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
	int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
	int (*nodeinfo_set_all)(void);
	int (*nodeinfo_set)(job_record_t *job_ptr);
	int (*reconfigure)(void);
} to;

DLS_FWD(void, select_p_job_mem_reduce, (job_record_t * job_ptr))
{
	to.job_mem_reduce(job_ptr);
}

#endif

#if DLS_SLURM_RELEASE >= 2411
extern int dls_cons_tres_job_test(const dls_job_test_args_t *a, bitstr_t *bitmap)
{
	return to.job_test(a->job_ptr, bitmap, a->min_nodes, a->max_nodes, a->req_nodes, a->mode,
			   a->preemptee_candidates, a->preemptee_job_list, a->resv_exc_ptr, a->will_run_ptr);
}

DLS_FWD(int, select_p_job_test,
	(job_record_t * job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
	 uint16_t mode, list_t *preemptee_candidates, list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr,
	 will_run_data_t *will_run_ptr))
{
	dls_job_test_args_t a = {job_ptr,
				 bitmap,
				 min_nodes,
				 max_nodes,
				 req_nodes,
				 mode,
				 preemptee_candidates,
				 preemptee_job_list,
				 resv_exc_ptr,
				 will_run_ptr};

	return dls_loader_job_test(&a);
}
#endif

const size_t dls_select_sym_cnt = ARRAY_SIZE(dls_select_syms);

extern void **dls_select_ops_slots(void)
{
	/* One slot per symbol, nothing else: the loader fills them by index. */
	_Static_assert(sizeof(to) == ARRAY_SIZE(dls_select_syms) * sizeof(void *),
		       "the ops table and the symbol list must match");
	return (void **) &to;
}

/* ---- In every release (the caller's locks; see Slurm's select interface). ---- */

DLS_FWD(int, select_p_node_init, (void) )
{
	return to.node_init();
}
DLS_FWD(int, select_p_job_begin, (job_record_t * job_ptr))
{
	return to.job_begin(job_ptr);
}
DLS_FWD(int, select_p_job_ready, (job_record_t * job_ptr))
{
	return to.job_ready(job_ptr);
}
DLS_FWD(int, select_p_job_expand, (job_record_t * from_job_ptr, job_record_t *to_job_ptr))
{
	return to.job_expand(from_job_ptr, to_job_ptr);
}
DLS_FWD(int, select_p_job_resized, (job_record_t * job_ptr, node_record_t *node_ptr))
{
	return to.job_resized(job_ptr, node_ptr);
}
DLS_FWD(int, select_p_job_fini, (job_record_t * job_ptr))
{
	return to.job_fini(job_ptr);
}
DLS_FWD(int, select_p_job_suspend, (job_record_t * job_ptr, bool indf_susp))
{
	return to.job_suspend(job_ptr, indf_susp);
}
DLS_FWD(int, select_p_job_resume, (job_record_t * job_ptr, bool indf_susp))
{
	return to.job_resume(job_ptr, indf_susp);
}
DLS_FWD(int, select_p_select_nodeinfo_set_all, (void) )
{
	return to.nodeinfo_set_all();
}
DLS_FWD(int, select_p_select_nodeinfo_set, (job_record_t * job_ptr))
{
	return to.nodeinfo_set(job_ptr);
}
/* scontrol reconfigure: the loader's placement part reads dlsched.conf again first (the caller's locks). */
DLS_FWD(int, select_p_reconfigure, (void) )
{
	dls_loader_reconfigure();
	return to.reconfigure();
}

/* ---- Until 24.11 (step, node and job info through the select plugin; every daemon and client). ---- */
#if DLS_SLURM_RELEASE < 2505
DLS_FWD(bitstr_t *, select_p_step_pick_nodes,
	(job_record_t * job_ptr, select_jobinfo_t *step_jobinfo, uint32_t node_count, bitstr_t **avail_nodes))
{
	return to.step_pick_nodes(job_ptr, step_jobinfo, node_count, avail_nodes);
}
DLS_FWD(int, select_p_step_start, (step_record_t * step_ptr))
{
	return to.step_start(step_ptr);
}
DLS_FWD(int, select_p_step_finish, (step_record_t * step_ptr, bool killing_step))
{
	return to.step_finish(step_ptr, killing_step);
}
DLS_FWD(int, select_p_select_nodeinfo_pack, (select_nodeinfo_t * nodeinfo, buf_t *buffer, uint16_t protocol_version))
{
	return to.nodeinfo_pack(nodeinfo, buffer, protocol_version);
}
DLS_FWD(int, select_p_select_nodeinfo_unpack, (select_nodeinfo_t * *nodeinfo, buf_t *buffer, uint16_t protocol_version))
{
	return to.nodeinfo_unpack(nodeinfo, buffer, protocol_version);
}
DLS_FWD(select_nodeinfo_t *, select_p_select_nodeinfo_alloc, (void) )
{
	return to.nodeinfo_alloc();
}
DLS_FWD(int, select_p_select_nodeinfo_free, (select_nodeinfo_t * nodeinfo))
{
	return to.nodeinfo_free(nodeinfo);
}
DLS_FWD(int, select_p_select_nodeinfo_get,
	(select_nodeinfo_t * nodeinfo, enum select_nodedata_type dinfo, enum node_states state, void *data))
{
	return to.nodeinfo_get(nodeinfo, dinfo, state, data);
}
DLS_FWD(select_jobinfo_t *, select_p_select_jobinfo_alloc, (void) )
{
	return to.jobinfo_alloc();
}
DLS_FWD(int, select_p_select_jobinfo_free, (select_jobinfo_t * jobinfo))
{
	return to.jobinfo_free(jobinfo);
}
DLS_FWD(int, select_p_select_jobinfo_set, (select_jobinfo_t * jobinfo, enum select_jobdata_type data_type, void *data))
{
	return to.jobinfo_set(jobinfo, data_type, data);
}
DLS_FWD(int, select_p_select_jobinfo_get, (select_jobinfo_t * jobinfo, enum select_jobdata_type data_type, void *data))
{
	return to.jobinfo_get(jobinfo, data_type, data);
}
DLS_FWD(select_jobinfo_t *, select_p_select_jobinfo_copy, (select_jobinfo_t * jobinfo))
{
	return to.jobinfo_copy(jobinfo);
}
DLS_FWD(int, select_p_select_jobinfo_pack, (select_jobinfo_t * jobinfo, buf_t *buffer, uint16_t protocol_version))
{
	return to.jobinfo_pack(jobinfo, buffer, protocol_version);
}
DLS_FWD(int, select_p_select_jobinfo_unpack,
	(select_jobinfo_t * *jobinfo_pptr, buf_t *buffer, uint16_t protocol_version))
{
	return to.jobinfo_unpack(jobinfo_pptr, buffer, protocol_version);
}
DLS_FWD(int, select_p_get_info_from_plugin, (enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data))
{
	return to.get_info_from_plugin(dinfo, job_ptr, data);
}
#endif
