/*****************************************************************************\
 *  loader.c - the select/dlsched_cons_tres that Slurm loads everywhere.
 *
 *  Slurm loads every select plugin of PluginDir in slurmctld, slurmd and
 *  every client (sbatch, squeue, ...). Every select_p_* call is forwarded to
 *  select/cons_tres (the same loaded object slurmctld uses). Only the
 *  slurmctld whose SelectType is this plugin places jobs, so only there does
 *  this loader open the placement part (dlsched_cons_tres_ctld.so, beside it:
 *  select_dlsched_cons_tres.c, which links dlsched's C++ core), and send it
 *  job_test() and reconfigure(). Everywhere else nothing of dlsched is
 *  loaded: before, every sbatch loaded the core, libstdc++ and SQLite, which
 *  cost about 2 ms of CPU per submission (scripts/bench-slurm).
 *
 *  Plain C over libslurm symbols only; "cons_tres" must stay in the name:
 *  slurmctld and slurmd test for that substring.
\*****************************************************************************/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
/*
 * Clients linked with libslurm.so find Slurm's helpers only under their
 * slurm_ names: map them, as Slurm's own plugins do.
 */
#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

const char plugin_name[] = "dlsched placement over consumable TRES (cons_tres)";
/* The plugin's type, and the prefix of every line it logs (the loader's and the placement part's). */
#define DLS_PLUGIN_TYPE "select/dlsched_cons_tres"
#define DLS_LOG_PREFIX DLS_PLUGIN_TYPE ": "
const char plugin_type[] = DLS_PLUGIN_TYPE;
const uint32_t plugin_id = 190; /* unique, >= 100 */
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* The placement plugin, in the loader's own directory (installed with it). */
#define DLS_PLACEMENT_SO "dlsched_cons_tres_ctld.so"

/* In the order of slurm_select_ops_t (src/common/select.h). */
static const char *syms[] = {
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

/* select/cons_tres: where every call goes. */
static slurm_select_ops_t to;
static void *to_handle = NULL;
static bool we_inited = false;	/* we called its init(): we call its fini() */

/* The placement part (select_dlsched_cons_tres.c), in the slurmctld that places jobs only. */
typedef int (*dls_job_test_fn)(job_record_t *, bitstr_t *, uint32_t, uint32_t, uint32_t, uint16_t, List, List *,
			       bitstr_t *);
static struct {
	void *handle;
	int (*init)(const slurm_select_ops_t *cons_tres);
	void (*fini)(void);
	dls_job_test_fn job_test;
	void (*reconfigure)(void);
} placement;

/* The placement part beside this file, its entry points resolved; false (logged) when it cannot be. */
static bool _open_placement(void)
{
	Dl_info self;
	char *copy, *path;
	void *h;

	if (!dladdr((void *) &plugin_id, &self) || !self.dli_fname) {
		error(DLS_LOG_PREFIX "cannot tell where this plugin was loaded from; cons_tres decides alone");
		return false;
	}
	copy = xstrdup(self.dli_fname);
	path = xstrdup_printf("%s/%s", dirname(copy), DLS_PLACEMENT_SO);
	h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		error(DLS_LOG_PREFIX "%s; install it beside %s (make install, or make plugins-local for a build tree); cons_tres decides alone",
		      dlerror(), self.dli_fname);
	else if (!(placement.init = dlsym(h, "dls_placement_init")) ||
		 !(placement.fini = dlsym(h, "dls_placement_fini")) ||
		 !(placement.job_test = dlsym(h, "dls_placement_job_test")) ||
		 !(placement.reconfigure = dlsym(h, "dls_placement_reconfigure"))) {
		error(DLS_LOG_PREFIX "%s is not this release's placement part (%s); cons_tres decides alone",
		      path, dlerror());
		dlclose(h);
		h = NULL;
	}
	placement.handle = h;
	xfree(path);
	xfree(copy);
	return h != NULL;
}

/* select_cons_tres.so in PluginDir (a colon list), preferring the copy already loaded. */
static void *_open_cons_tres(bool *fresh)
{
	char *dirs = NULL, *save = NULL, *dir;
	void *h = NULL;

	*fresh = false;
	for (int pass = 0; pass < 2 && !h; pass++) {
		xfree(dirs);
		dirs = xstrdup(slurm_conf.plugindir ? slurm_conf.plugindir : "");
		for (dir = strtok_r(dirs, ":", &save); dir && !h; dir = strtok_r(NULL, ":", &save)) {
			char *path = xstrdup_printf("%s/select_cons_tres.so", dir);

			h = dlopen(path, pass == 0 ? (RTLD_LAZY | RTLD_NOLOAD) : RTLD_LAZY);
			if (h && pass == 1)
				*fresh = true;
			xfree(path);
		}
	}
	xfree(dirs);
	return h;
}

/*
 * Every daemon and client that loads select plugins calls this; no locks held.
 * The placement plugin's init() loads dlsched.conf and finds cons_tres itself.
 */
extern int init(void)
{
	void **ptrs = (void **) &to;
	bool fresh = true;
	int (*to_init)(void);

	if (to_handle)
		return SLURM_SUCCESS;
	if (!(to_handle = _open_cons_tres(&fresh))) {
		error(DLS_LOG_PREFIX "select_cons_tres.so not found in PluginDir=%s: %s",
		      slurm_conf.plugindir, dlerror());
		return SLURM_ERROR;
	}
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		if (!(ptrs[i] = dlsym(to_handle, syms[i]))) {
			error(DLS_LOG_PREFIX "select_cons_tres.so has no %s (not built for Slurm %s?)",
			      syms[i], SLURM_VERSION_STRING);
			return SLURM_ERROR;
		}
	}
	if (fresh) {
		if ((to_init = dlsym(to_handle, "init")) && to_init() != SLURM_SUCCESS)
			return SLURM_ERROR;
		we_inited = true;
	}
	/* running_in_slurmctld() compares the name the program was started under with "slurmctld"
	 * (dlsched-cluster starts Debian's slurmctld-wlm through a link of that name). */
	if (running_in_slurmctld() && !xstrcmp(slurm_conf.select_type, plugin_type) && _open_placement() &&
	    placement.init(&to) != SLURM_SUCCESS) {
		placement.fini();
		memset(&placement, 0, sizeof(placement));
	}
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	if (placement.handle)
		placement.fini();
	memset(&placement, 0, sizeof(placement));
	if (we_inited && to_handle) {
		int (*to_fini)(void) = dlsym(to_handle, "fini");

		if (to_fini)
			to_fini();
	}
	we_inited = false;
	return SLURM_SUCCESS;
}

/* ---- Every call forwarded (locks: as the caller holds them). ---- */

extern int select_p_state_save(char *dir_name) { return to.state_save(dir_name); }
extern int select_p_state_restore(char *dir_name) { return to.state_restore(dir_name); }
extern int select_p_job_init(List job_list) { return to.job_init(job_list); }
extern int select_p_node_init(void) { return to.node_init(); }
extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
			     uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
			     List preemptee_candidates, List *preemptee_job_list,
			     bitstr_t *exc_core_bitmap)
{
	dls_job_test_fn job_test = placement.job_test ? placement.job_test : to.job_test;

	return job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
			preemptee_job_list, exc_core_bitmap);
}
extern int select_p_job_begin(job_record_t *job_ptr) { return to.job_begin(job_ptr); }
extern int select_p_job_ready(job_record_t *job_ptr) { return to.job_ready(job_ptr); }
extern int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr)
{
	return to.job_expand(from_job_ptr, to_job_ptr);
}
extern int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr)
{
	return to.job_resized(job_ptr, node_ptr);
}
extern int select_p_job_signal(job_record_t *job_ptr, int signal) { return to.job_signal(job_ptr, signal); }
extern int select_p_job_fini(job_record_t *job_ptr) { return to.job_fini(job_ptr); }
extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp) { return to.job_suspend(job_ptr, indf_susp); }
extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp) { return to.job_resume(job_ptr, indf_susp); }
extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo,
					  uint32_t node_count, bitstr_t **avail_nodes)
{
	return to.step_pick_nodes(job_ptr, step_jobinfo, node_count, avail_nodes);
}
extern int select_p_step_start(step_record_t *step_ptr) { return to.step_start(step_ptr); }
extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
	return to.step_finish(step_ptr, killing_step);
}
extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version)
{
	return to.nodeinfo_pack(nodeinfo, buffer, protocol_version);
}
extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo, buf_t *buffer,
					   uint16_t protocol_version)
{
	return to.nodeinfo_unpack(nodeinfo, buffer, protocol_version);
}
extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void) { return to.nodeinfo_alloc(); }
extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo) { return to.nodeinfo_free(nodeinfo); }
extern int select_p_select_nodeinfo_set_all(void) { return to.nodeinfo_set_all(); }
extern int select_p_select_nodeinfo_set(job_record_t *job_ptr) { return to.nodeinfo_set(job_ptr); }
extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,
					enum node_states state, void *data)
{
	return to.nodeinfo_get(nodeinfo, dinfo, state, data);
}
extern select_jobinfo_t *select_p_select_jobinfo_alloc(void) { return to.jobinfo_alloc(); }
extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo) { return to.jobinfo_free(jobinfo); }
extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return to.jobinfo_set(jobinfo, data_type, data);
}
extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return to.jobinfo_get(jobinfo, data_type, data);
}
extern select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo) { return to.jobinfo_copy(jobinfo); }
extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version)
{
	return to.jobinfo_pack(jobinfo, buffer, protocol_version);
}
extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr, buf_t *buffer,
					  uint16_t protocol_version)
{
	return to.jobinfo_unpack(jobinfo_pptr, buffer, protocol_version);
}
extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode)
{
	return to.jobinfo_sprint(jobinfo, buf, size, mode);
}
extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode)
{
	return to.jobinfo_xstrdup(jobinfo, mode);
}
extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data)
{
	return to.get_info_from_plugin(dinfo, job_ptr, data);
}
extern int select_p_update_node_config(int index) { return to.update_node_config(index); }
/* scontrol reconfigure: the placement part reads dlsched.conf again first (the caller's locks). */
extern int select_p_reconfigure(void)
{
	if (placement.reconfigure)
		placement.reconfigure();
	return to.reconfigure();
}
extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt, bitstr_t *avail_bitmap,
				    bitstr_t **core_bitmap)
{
	return to.resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
