/*****************************************************************************\
 *  dlsched_advisor.c - see dlsched_advisor.h.
\*****************************************************************************/

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched_advisor.h"
#include "dlsched_slurm.h"

typedef struct {
	uint32_t job_id;
	uint32_t rank;		/* UINT32_MAX: not ranked */
	uint32_t victim;	/* UINT32_MAX: not a victim */
} dls_entry_t;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_entry_t *table = NULL;	/* sorted by job_id */
static size_t table_cnt = 0;
/* The plan's first ranks: the jobs it starts, then as many as it frees room for by preempting. */
static uint32_t front_cnt = 0;
static uint64_t cycles = 0, fallbacks = 0;

static pthread_t thread_id;
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static bool stop_thread = false, reconfig = false;
static const char *plugin_name_ptr = "dlsched";
/* The plugins sharing this advisor (it lives in one shared library both link): the first to start
 * it runs the thread, the last to stop it ends it. */
static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;
static int users = 0;

static int _cmp_entry(const void *a, const void *b)
{
	uint32_t x = ((const dls_entry_t *) a)->job_id, y = ((const dls_entry_t *) b)->job_id;

	return x < y ? -1 : x > y;
}

static dls_entry_t *_find(uint32_t job_id)
{
	dls_entry_t key = { .job_id = job_id };

	return table_cnt ? bsearch(&key, table, table_cnt, sizeof(*table), _cmp_entry) : NULL;
}

static void _set(dls_entry_t *t, size_t n, uint32_t job_id, bool victim, uint32_t value)
{
	dls_entry_t key = { .job_id = job_id };
	dls_entry_t *e = bsearch(&key, t, n, sizeof(*t), _cmp_entry);

	if (!e)
		return;
	if (victim && e->victim == UINT32_MAX)
		e->victim = value;
	else if (!victim && e->rank == UINT32_MAX)
		e->rank = value;
}

/* One advisory cycle. Locks: takes the read locks for the snapshot only. */
static void _cycle(dlsched_scheduler_t *sched)
{
	slurmctld_lock_t read_lock = { READ_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK };
	dls_snapshot_t *snap;
	dlsched_decisions_t *d = NULL;
	dlsched_error_t err;
	dls_entry_t *t;
	size_t n, order_cnt = 0, victims = 0;
	uint32_t rank = 0, starts = 0;
	const uint32_t *order;
	dlsched_action_t a;

	lock_slurmctld(read_lock);
	snap = dls_snapshot_take(time(NULL), cycles + 1, false);
	unlock_slurmctld(read_lock);

	cycles++;
	if (dlsched_scheduler_decide(sched, &snap->view, &d, &err) != DLSCHED_OK) {
		fallbacks++;
		error("%s: cannot decide (%s); Slurm's own priorities stand this cycle", plugin_name_ptr,
		      err.message);
		dls_snapshot_free(snap);
		return;
	}
	n = snap->view.job_count;
	t = xcalloc(n ? n : 1, sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		t[i].job_id = snap->jobs[i].job_id;
		t[i].rank = t[i].victim = UINT32_MAX;
	}
	qsort(t, n, sizeof(*t), _cmp_entry);
	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	for (size_t i = 0; i < dlsched_decisions_count(d); i++) {
		if (dlsched_decisions_get(d, i, &a, NULL) != DLSCHED_OK)
			continue;
		if (a.kind == DLSCHED_START) {
			_set(t, n, a.job_id, false, rank++);
			starts++;
		}
		else if (a.kind == DLSCHED_REQUEUE || a.kind == DLSCHED_RESIZE)
			_set(t, n, a.job_id, true, (uint32_t) victims++);
	}
	order = dlsched_decisions_order(d, &order_cnt);
	for (size_t i = 0; i < order_cnt; i++)
		_set(t, n, order[i], false, rank++);
	dlsched_decisions_free(d);
	dls_snapshot_free(snap);

	slurm_mutex_lock(&table_lock);
	xfree(table);
	table = t;
	table_cnt = n;
	front_cnt = starts + (uint32_t) victims;
	slurm_mutex_unlock(&table_lock);
}

static void *_agent(void *arg)
{
	dlsched_scheduler_t *sched = NULL;
	double interval = 60;

	(void) arg;
	for (;;) {
		struct timespec ts;
		bool reload;

		slurm_mutex_lock(&term_lock);
		reload = !sched || reconfig;
		reconfig = false;
		slurm_mutex_unlock(&term_lock);
		if (reload) {
			if (sched)
				dlsched_scheduler_destroy(sched);
			sched = dls_scheduler_load(plugin_name_ptr, false, NULL);
			interval = dls_config_double(sched, "SchedInterval", 60);
		}
		if (sched)
			_cycle(sched);
		else
			fallbacks++;

		ts = dls_time_in(interval);
		slurm_mutex_lock(&term_lock);
		if (!stop_thread && !reconfig)
			pthread_cond_timedwait(&term_cond, &term_lock, &ts);
		if (stop_thread) {
			slurm_mutex_unlock(&term_lock);
			break;
		}
		slurm_mutex_unlock(&term_lock);
	}
	if (sched)
		dlsched_scheduler_destroy(sched);
	return NULL;
}

extern void dls_advisor_start(const char *plugin)
{
	slurm_mutex_lock(&users_lock);
	if (users++ > 0) {
		info("%s: shares the advisor %s started (one decision thread for both)", plugin,
			plugin_name_ptr);
		slurm_mutex_unlock(&users_lock);
		return;
	}
	plugin_name_ptr = plugin;
	stop_thread = false;
	slurm_thread_create(&thread_id, _agent, NULL);
	slurm_mutex_unlock(&users_lock);
}

extern void dls_advisor_stop(void)
{
	slurm_mutex_lock(&users_lock);
	if (users == 0 || --users > 0) {
		slurm_mutex_unlock(&users_lock);
		return;
	}
	slurm_mutex_lock(&term_lock);
	stop_thread = true;
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
	if (thread_id) {
		pthread_join(thread_id, NULL);
		thread_id = 0;
	}
	slurm_mutex_lock(&table_lock);
	xfree(table);
	table_cnt = 0;
	slurm_mutex_unlock(&table_lock);
	slurm_mutex_unlock(&users_lock);
}

extern int dls_advisor_users(void)
{
	int n;

	slurm_mutex_lock(&users_lock);
	n = users;
	slurm_mutex_unlock(&users_lock);
	return n;
}

extern void dls_advisor_reconfig(void)
{
	slurm_mutex_lock(&term_lock);
	reconfig = true;
	slurm_cond_signal(&term_cond);	/* do not wait out a long SchedInterval */
	slurm_mutex_unlock(&term_lock);
}

extern bool dls_advisor_rank(uint32_t job_id, uint32_t *rank)
{
	dls_entry_t *e;
	bool found = false;

	slurm_mutex_lock(&table_lock);
	if ((e = _find(job_id)) && e->rank != UINT32_MAX) {
		*rank = e->rank;
		found = true;
	}
	slurm_mutex_unlock(&table_lock);
	return found;
}

extern bool dls_advisor_victim(uint32_t job_id, uint32_t *position)
{
	dls_entry_t *e;
	bool found = false;

	slurm_mutex_lock(&table_lock);
	if ((e = _find(job_id)) && e->victim != UINT32_MAX) {
		*position = e->victim;
		found = true;
	}
	slurm_mutex_unlock(&table_lock);
	return found;
}

extern bool dls_advisor_front(uint32_t job_id)
{
	dls_entry_t *e;
	bool found;

	slurm_mutex_lock(&table_lock);
	found = (e = _find(job_id)) && e->rank != UINT32_MAX && e->rank < front_cnt;
	slurm_mutex_unlock(&table_lock);
	return found;
}

extern void dls_advisor_counts(uint64_t *c, uint64_t *f)
{
	*c = cycles;
	*f = fallbacks;
}
