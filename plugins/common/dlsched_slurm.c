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
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched_slurm.h"

extern gres_state_t *dls_find_gpu_state(List gres_list)
{
	ListIterator it;
	gres_state_t *gs, *found = NULL;

	if (!gres_list)
		return NULL;
	it = list_iterator_create(gres_list);
	while ((gs = list_next(it))) {
		if (gs->gres_name && !xstrcmp(gs->gres_name, "gpu")) {
			found = gs;
			break;
		}
	}
	list_iterator_destroy(it);
	return found;
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
		/* Slurm accepts any count (SLURM-NOTES.md): no wrap into a small or negative int. */
		if (js->gres_per_node)
			n = js->gres_per_node > DLS_MAX_JOB_GPUS / nodes ? DLS_MAX_JOB_GPUS :
			    js->gres_per_node * nodes;
		else
			n = js->total_gres;
	}
	return n > DLS_MAX_JOB_GPUS ? DLS_MAX_JOB_GPUS : (int) n;
}

/* Length of the word at v (up to white space, ',' or the end). */
static size_t _word_len(const char *v)
{
	size_t n = 0;

	while (v[n] && !isspace((unsigned char) v[n]) && v[n] != ',')
		n++;
	return n;
}

/*
 * The number that is the whole word at v, if it lies in (0, max]: decimal
 * digits, a point and an exponent only (no hex, inf or nan), finite, no
 * overflow. `integer` allows digits only.
 */
static bool _number(const char *v, double max, bool integer, double *out)
{
	size_t n = _word_len(v);
	char buf[32], *end = NULL;
	double d;

	if (n == 0 || n >= sizeof(buf))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char) v[i]) &&
		    (integer || !strchr(".eE+-", v[i])))
			return false;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	d = strtod(buf, &end);
	if (*end || errno || !isfinite(d) || !(d > 0 && d <= max))
		return false;
	*out = d;
	return true;
}

/* A model name as spank/dlsched accepts it: 1 to 64 of letters, digits, '-', '_', '.'. */
static bool _model_name(const char *v, char *out, size_t len)
{
	size_t n = _word_len(v);

	if (n == 0 || n > DLS_MAX_MODEL_NAME || n >= len)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char) v[i]) && !strchr("-_.", v[i]))
			return false;
	memcpy(out, v, n);
	out[n] = '\0';
	return true;
}

extern bool dls_parse_job_comment(const char *comment, char *model, size_t model_len, double *epochs,
				  double *epoch_time_1gpu, int *gpus_min, int *gpus_max)
{
	const char *p = comment;
	bool found = false;

	if (!comment)
		return false;
	while (*p) {
		double v;

		while (*p && (isspace((unsigned char) *p) || *p == ','))
			p++;
		if (!strncmp(p, "model=", 6)) {
			if (_model_name(p + 6, model, model_len))
				found = true;
		} else if (!strncmp(p, "epochs=", 7)) {
			if (_number(p + 7, DLS_MAX_EPOCHS, false, &v)) {
				*epochs = v;
				found = true;
			}
		} else if (!strncmp(p, "gpus_min=", 9) || !strncmp(p, "gpus_max=", 9)) {
			if (_number(p + 9, DLS_MAX_GPUS, true, &v)) {
				*(p[6] == 'i' ? gpus_min : gpus_max) = (int) v;
				found = true;
			}
		} else if (!strncmp(p, "epoch_time_1gpu=", 16)) {
			if (_number(p + 16, DLS_MAX_EPOCH_TIME, false, &v)) {
				*epoch_time_1gpu = v;
				found = true;
			}
		}
		p += _word_len(p);
	}
	return found;
}

extern dlsched_scheduler_t *dls_scheduler_load(const char *plugin, char **conf_path_out)
{
	char *path = get_extra_conf_path("dlsched.conf");
	dlsched_scheduler_t *sched = NULL;
	dlsched_error_t err;
	char desc[512];
	struct stat st;

	if (stat(path, &st) != 0) {
		error("%s: %s not found: create it (see dlsched.conf(5) and etc/dlsched.conf.example); until then Slurm decides alone",
		      plugin, path);
	} else if (dlsched_scheduler_create(path, &sched, &err) != DLSCHED_OK) {
		error("%s: %s: %s; until it is fixed (scontrol reconfigure) Slurm decides alone", plugin, path,
		      err.message);
		sched = NULL;
	} else {
		if (dlsched_scheduler_describe(sched, desc, sizeof(desc)) == DLSCHED_OK)
			info("%s: loaded %s: %s", plugin, path, desc);
		/* Experience rows carry the cluster's name. */
		(void) dlsched_scheduler_set_cluster(sched, slurm_conf.cluster_name);
	}
	if (conf_path_out)
		*conf_path_out = path;
	else
		xfree(path);
	return sched;
}

extern double dls_config_double(dlsched_scheduler_t *sched, const char *key, double def)
{
	char buf[64];
	char *end = NULL;
	double v;

	if (!sched || dlsched_scheduler_config(sched, key, buf, sizeof(buf)) != DLSCHED_OK)
		return def;
	v = strtod(buf, &end);
	return end != buf ? v : def;
}

extern bool dls_parse_spank_env(char **env, uint32_t env_size, char *model, size_t model_len, double *epochs,
				int *gpus_min, int *gpus_max)
{
	bool found = false;

	/* Each entry is put in the comment's words and read by the one metadata parser. */
	for (uint32_t i = 0; env && i < env_size; i++) {
		const char *e = env[i];
		char words[256];
		double unused = 0;
		int lo = 0, hi = 0;

		if (!e)
			continue;
		/* slurmctld keeps them as set (DL_MODEL=...); prolog and epilog see SPANK_DL_MODEL. */
		if (!strncmp(e, "SPANK_", 6))
			e += 6;
		if (!strncmp(e, "DL_MODEL=", 9))
			snprintf(words, sizeof(words), "model=%s", e + 9);
		else if (!strncmp(e, "DL_EPOCHS=", 10))
			snprintf(words, sizeof(words), "epochs=%s", e + 10);
		else if (!strncmp(e, "DL_ELASTIC=", 11) && strchr(e + 11, ':')) {
			/* MIN:MAX -> gpus_min=MIN gpus_max=MAX, both or neither. */
			snprintf(words, sizeof(words), "gpus_min=%.*s gpus_max=%s", (int) (strchr(e + 11, ':') - (e + 11)),
				 e + 11, strchr(e + 11, ':') + 1);
			if (dls_parse_job_comment(words, model, model_len, epochs, &unused, &lo, &hi) && lo > 0 &&
			    hi >= lo) {
				*gpus_min = lo;
				*gpus_max = hi;
				found = true;
			}
			continue;
		} else
			continue;
		found |= dls_parse_job_comment(words, model, model_len, epochs, &unused, gpus_min, gpus_max);
	}
	return found;
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
