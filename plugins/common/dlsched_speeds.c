/*****************************************************************************\
 *  dlsched_speeds.c - speed observations for the placement agent (dlsched_slurm.h):
 *  the profile DB's measured epochs, per run and node, read off slurmctld's
 *  locks, kept, and carried by every view the plugin builds
 *  (dlsched_cluster_view_t.epoch_samples, C ABI 6), so that gp-placement and
 *  dual-agent learn each machine's speed in slurmctld as in dlsched-sim.
 *
 *  - dls_speeds_configure() (at every (re)load of dlsched.conf; any lock, no
 *    I/O) takes ProfileDB= and ProfileRefresh= and forces a read.
 *  - dls_speeds_refresh() (the plugin's own thread, with no slurmctld lock
 *    held) reads the latest DLS_SPEED_SAMPLES runs every ProfileRefresh
 *    seconds through the C ABI's epoch reader (200 ms at most on the DB's
 *    writer), into a new array swapped in under a mutex of its own.
 *  - dls_speeds_attach() points a view at the current array; the caller holds
 *    that mutex (dls_speeds_lock()) until the core has read the view, so a
 *    refresh never frees it under a placement: the refresh waits for one
 *    dlsched_scheduler_place() call at most, the placement never for I/O.
 *  Each plugin that links this file has its own state.
\*****************************************************************************/

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "dlsched_slurm.h"

static pthread_mutex_t speeds_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Under speeds_mutex: the configuration, and the samples views carry. */
static char *db_path = NULL;  /* ProfileDB=; NULL: none */
static double refresh_s = 60; /* ProfileRefresh= */
static uint64_t conf_gen = 0; /* bumped by every dls_speeds_configure() */
static bool read_now = false; /* the next refresh reads, whenever it is due */
static dlsched_epoch_sample_t *samples = NULL;
static size_t sample_cnt = 0;

/* The refreshing thread's own (one thread refreshes). */
static dlsched_epoch_reader_t *reader = NULL;
static uint64_t reader_gen = 0;
static double next_read = 0;
static char last_error[sizeof(((dlsched_error_t *) 0)->message)];

static double _now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

extern void dls_speeds_configure(dlsched_scheduler_t *sched)
{
	char path[4096];

	slurm_mutex_lock(&speeds_mutex);
	xfree(db_path);
	if (sched && dlsched_scheduler_config(sched, "ProfileDB", path, sizeof(path)) == DLSCHED_OK && path[0])
		db_path = xstrdup(path);
	refresh_s = dls_config_double(sched, "ProfileRefresh");
	conf_gen++;
	read_now = true;
	if (!db_path) {
		xfree(samples);
		sample_cnt = 0;
	}
	slurm_mutex_unlock(&speeds_mutex);
}

extern int dls_speeds_refresh(const char *plugin)
{
	dlsched_epoch_sample_t *fresh, *old = NULL;
	dlsched_error_t err;
	char *path = NULL;
	uint64_t gen;
	size_t n = 0;
	double now = _now();
	bool due;
	int rc;

	slurm_mutex_lock(&speeds_mutex);
	gen = conf_gen;
	path = xstrdup(db_path);
	due = read_now || now >= next_read;
	slurm_mutex_unlock(&speeds_mutex);
	if (gen != reader_gen) {
		if (reader)
			dlsched_epoch_reader_destroy(reader);
		reader = NULL;
		if (path && dlsched_epoch_reader_create(path, slurm_conf.cluster_name, &reader, &err) != DLSCHED_OK)
			error("%s: speed observations: %s", plugin, err.message);
		reader_gen = gen;
		last_error[0] = '\0';
	}
	xfree(path);
	if (!reader || !due)
		return -1;

	fresh = xcalloc(DLS_SPEED_SAMPLES, sizeof(*fresh));
	rc = dlsched_epoch_reader_read(reader, fresh, DLS_SPEED_SAMPLES, &n, &err);
	if (rc != DLSCHED_OK) {
		/* The last samples stay; said once per reason (a missing DB is normal before the first job). */
		if (xstrcmp(err.message, last_error))
			info("%s: speed observations not read (%s); the placement keeps the last ones", plugin,
			     err.message);
		strlcpy(last_error, err.message, sizeof(last_error));
		xfree(fresh);
		n = 0;
	} else {
		if (last_error[0])
			info("%s: speed observations read again", plugin);
		last_error[0] = '\0';
	}
	slurm_mutex_lock(&speeds_mutex);
	if (gen == conf_gen) { /* else a configuration replaced meanwhile: its own read comes next */
		if (rc == DLSCHED_OK) {
			old = samples;
			samples = fresh;
			sample_cnt = n;
			fresh = NULL;
		}
		read_now = false;
		next_read = now + refresh_s;
	}
	slurm_mutex_unlock(&speeds_mutex);
	xfree(old);
	xfree(fresh);
	if (rc != DLSCHED_OK)
		return -1;
	debug("%s: %zu runs' epoch times read for the speed model", plugin, n);
	return (int) n;
}

extern void dls_speeds_lock(void)
{
	slurm_mutex_lock(&speeds_mutex);
}

extern void dls_speeds_unlock(void)
{
	slurm_mutex_unlock(&speeds_mutex);
}

extern size_t dls_speeds_attach(dlsched_cluster_view_t *view)
{
	view->epoch_samples = sample_cnt ? samples : NULL;
	view->epoch_sample_count = sample_cnt;
	return sample_cnt;
}

extern void dls_speeds_fini(void)
{
	if (reader)
		dlsched_epoch_reader_destroy(reader);
	reader = NULL;
	reader_gen = 0;
	slurm_mutex_lock(&speeds_mutex);
	xfree(db_path);
	xfree(samples);
	sample_cnt = 0;
	conf_gen++;
	slurm_mutex_unlock(&speeds_mutex);
}
