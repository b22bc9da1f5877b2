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
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "../../common/dlsched_compat.h"

const char plugin_name[] = "dlsched placement over consumable TRES (cons_tres)";
/* The plugin's type, and the prefix of every line it logs (the loader's and the placement part's). */
#define DLS_PLUGIN_TYPE "select/dlsched_cons_tres"
#define DLS_LOG_PREFIX DLS_PLUGIN_TYPE ": "
const char plugin_type[] = DLS_PLUGIN_TYPE;
/* 190 (unique, >= 100) until 24.11; cons_tres's own 109 from 25.05 (dlsched_compat.h). */
const uint32_t plugin_id = DLS_SELECT_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* The placement plugin, in the loader's own directory (installed with it). */
#define DLS_PLACEMENT_SO "dlsched_cons_tres_ctld.so"

/*
 * select/cons_tres: where every call goes. Its entry points are resolved in the order of this
 * release's select ops list (dls_select_syms) into the table the select_p_* entry points of
 * dlsched_compat_select.c forward through.
 */
static void *to_handle = NULL;
static bool we_inited = false; /* we called its init(): we call its fini() */

/* The placement part (select_dlsched_cons_tres.c), in the slurmctld that places jobs only. */
static struct {
	void *handle;
	int (*init)(dls_job_test_fn cons_tres_job_test);
	void (*fini)(void);
	int (*job_test)(const dls_job_test_args_t *a);
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
		error(DLS_LOG_PREFIX "%s; install it beside %s (make install, or make plugins-local for a build tree); "
				     "cons_tres decides alone",
		      dlerror(), self.dli_fname);
	else if (!(placement.init = dlsym(h, "dls_placement_init")) ||
		 !(placement.fini = dlsym(h, "dls_placement_fini")) ||
		 !(placement.job_test = dlsym(h, "dls_placement_job_test")) ||
		 !(placement.reconfigure = dlsym(h, "dls_placement_reconfigure"))) {
		error(DLS_LOG_PREFIX "%s is not this release's placement part (%s); cons_tres decides alone", path,
		      dlerror());
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
	void **ptrs = dls_select_ops_slots();
	bool fresh = true;
	int (*to_init)(void);

	if (to_handle)
		return SLURM_SUCCESS;
	if (!(to_handle = _open_cons_tres(&fresh))) {
		error(DLS_LOG_PREFIX "select_cons_tres.so not found in PluginDir=%s: %s", slurm_conf.plugindir,
		      dlerror());
		return SLURM_ERROR;
	}
	for (size_t i = 0; i < dls_select_sym_cnt; i++) {
		if (!(ptrs[i] = dlsym(to_handle, dls_select_syms[i]))) {
			error(DLS_LOG_PREFIX "select_cons_tres.so has no %s (not built for Slurm %s?)",
			      dls_select_syms[i], SLURM_VERSION_STRING);
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
	    placement.init(dls_cons_tres_job_test) != SLURM_SUCCESS) {
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

/* ---- select_p_job_test() and select_p_reconfigure() (dlsched_compat_select.c) come here first. ---- */

/* Locks: the caller's (select_nodes(): job and node write). */
extern int dls_loader_job_test(const dls_job_test_args_t *a)
{
	return placement.job_test ? placement.job_test(a) : dls_cons_tres_job_test(a, a->bitmap);
}

/* scontrol reconfigure: the placement part reads dlsched.conf again before cons_tres reconfigures. */
extern void dls_loader_reconfigure(void)
{
	if (placement.reconfigure)
		placement.reconfigure();
}
