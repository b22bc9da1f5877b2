/*****************************************************************************\
 *  dlsched_advisor.c - see dlsched_advisor.h.
\*****************************************************************************/

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr() */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched_advisor.h"
#include "dlsched_agent.h"
#include "dlsched_slurm.h"

typedef struct {
	uint32_t job_id;
	uint32_t rank;	 /* UINT32_MAX: not ranked */
	uint32_t victim; /* UINT32_MAX: not a victim */
} dls_entry_t;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_entry_t *table = NULL; /* sorted by job_id */
static size_t table_cnt = 0;
/* The plan's first ranks: the jobs it starts, then as many as it frees room for by preempting. */
static uint32_t front_cnt = 0;
static uint64_t cycles = 0, fallbacks = 0;

/*
 * The thread's lifecycle. dls_advisor_stop() can be called with slurmctld's write locks held
 * (a reconfigure that changes PreemptType unloads preempt/dlsched from read_slurm_conf()), while
 * the thread may be waiting for the read locks in _cycle(): joining it there would deadlock. So
 * the thread is detached; each start begins a new generation, a thread runs only while its
 * generation is current, never takes slurmctld's locks once it is not, and never publishes a
 * table for an old generation. Stopping waits (a few seconds at most) only for a thread that is
 * not waiting for slurmctld's locks. A thread left running must not outlive its code: the first
 * start pins this library in memory (RTLD_NODELETE), so unloading the plugins never unmaps it.
 */
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static uint64_t generation = 0;	   /* the current thread's; bumped by start and last stop */
static int running = 0;		   /* threads not yet ended (an old one may still be ending) */
static uint64_t ended = 0;	   /* the newest generation whose thread has ended */
static bool in_slurm_lock = false; /* the current thread waits for or holds slurmctld's locks */
static bool reconfig = false;
/* The name the advisor logs as: a copy (the plugin that gave it may be unloaded before the
 * thread ends), the first plugin still using the advisor. */
static char plugin_name_buf[64] = "dlsched";
/* The plugins sharing this advisor (it lives in one shared library both link): the first to start
 * it runs the thread, the last to stop it ends it. */
#define DLS_ADVISOR_MAX_USERS 4
static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;
static char user_names[DLS_ADVISOR_MAX_USERS][64];
static int users = 0;
static bool pinned = false;

static int _cmp_entry(const void *a, const void *b)
{
	uint32_t x = ((const dls_entry_t *) a)->job_id, y = ((const dls_entry_t *) b)->job_id;

	return x < y ? -1 : x > y;
}

static dls_entry_t *_find(uint32_t job_id)
{
	dls_entry_t key = {.job_id = job_id};

	return table_cnt ? bsearch(&key, table, table_cnt, sizeof(*table), _cmp_entry) : NULL;
}

static void _set(dls_entry_t *t, size_t n, uint32_t job_id, bool victim, uint32_t value)
{
	dls_entry_t key = {.job_id = job_id};
	dls_entry_t *e = bsearch(&key, t, n, sizeof(*t), _cmp_entry);

	if (!e)
		return;
	if (victim && e->victim == UINT32_MAX)
		e->victim = value;
	else if (!victim && e->rank == UINT32_MAX)
		e->rank = value;
}

/* Empties the table: Slurm's own priorities and no victims until a cycle decides again. */
static void _clear_table(void)
{
	slurm_mutex_lock(&table_lock);
	xfree(table);
	table_cnt = 0;
	front_cnt = 0;
	slurm_mutex_unlock(&table_lock);
}

/* Whether generation `gen` is still the current one. */
static bool _current(uint64_t gen)
{
	bool cur;

	slurm_mutex_lock(&term_lock);
	cur = gen == generation;
	slurm_mutex_unlock(&term_lock);
	return cur;
}

/*
 * One advisory cycle of generation `gen`. Locks: takes the read locks for the snapshot only, and
 * not once the advisor was stopped (in_slurm_lock tells dls_advisor_stop() not to wait for it).
 */
static void _cycle(dlsched_scheduler_t *sched, uint64_t gen, const char *name)
{
	slurmctld_lock_t read_lock = {
		.conf = READ_LOCK,
		.job = READ_LOCK,
		.node = READ_LOCK,
		.part = READ_LOCK,
	};
	dls_snapshot_t *snap = NULL;
	dlsched_decisions_t *d = NULL;
	dlsched_error_t err;
	dls_entry_t *t;
	size_t n, order_cnt = 0, victims = 0;
	uint32_t rank = 0, starts = 0;
	const uint32_t *order;
	dlsched_action_t a;

	slurm_mutex_lock(&term_lock);
	if (gen != generation) {
		slurm_mutex_unlock(&term_lock);
		return;
	}
	in_slurm_lock = true;
	slurm_mutex_unlock(&term_lock);
	lock_slurmctld(read_lock);
	/* Without slurmdbd the first cycle can come before slurmctld has built its job list. */
	if (job_list)
		snap = dls_snapshot_take(time(NULL), cycles + 1, false);
	unlock_slurmctld(read_lock);
	slurm_mutex_lock(&term_lock);
	if (gen == generation)
		in_slurm_lock = false;
	slurm_mutex_unlock(&term_lock);
	if (!snap)
		return;

	cycles++;
	if (dlsched_scheduler_decide(sched, &snap->view, &d, &err) != DLSCHED_OK) {
		fallbacks++;
		error("%s: cannot decide (%s); Slurm's own priorities stand this cycle", name, err.message);
		dls_snapshot_free(snap);
		/* The last cycle's victims were chosen for a queue that has moved on. */
		if (_current(gen))
			_clear_table();
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
		} else if (a.kind == DLSCHED_REQUEUE || a.kind == DLSCHED_RESIZE)
			_set(t, n, a.job_id, true, (uint32_t) victims++);
	}
	order = dlsched_decisions_order(d, &order_cnt);
	for (size_t i = 0; i < order_cnt; i++)
		_set(t, n, order[i], false, rank++);
	dlsched_decisions_free(d);
	dls_snapshot_free(snap);

	/* Lock order: term_lock, then table_lock. A stopped advisor publishes nothing. */
	slurm_mutex_lock(&term_lock);
	if (gen != generation) {
		slurm_mutex_unlock(&term_lock);
		xfree(t);
		return;
	}
	slurm_mutex_lock(&table_lock);
	xfree(table);
	table = t;
	table_cnt = n;
	front_cnt = starts + (uint32_t) victims;
	slurm_mutex_unlock(&table_lock);
	slurm_mutex_unlock(&term_lock);
}

/* What an advisor thread holds: its generation, its scheduler, and the name it logs as (copied at
 * every cycle: the first plugin still using the advisor). */
typedef struct {
	uint64_t gen;
	dlsched_scheduler_t *sched;
	char name[sizeof(plugin_name_buf)];
} dls_thread_t;

/* Locks: term_lock held (dls_agent_loop). */
static bool _stopped(void *arg)
{
	return ((dls_thread_t *) arg)->gen != generation;
}

static bool _reload(void *arg, double *interval)
{
	dls_thread_t *t = arg;

	slurm_mutex_lock(&term_lock);
	snprintf(t->name, sizeof(t->name), "%s", plugin_name_buf);
	slurm_mutex_unlock(&term_lock);
	if (t->sched)
		dlsched_scheduler_destroy(t->sched);
	/* Victims of the old configuration are not the new one's. */
	_clear_table();
	t->sched = dls_scheduler_load(t->name, false, NULL);
	*interval = dls_config_double(t->sched, "SchedInterval");
	return t->sched != NULL;
}

static void _one_cycle(void *arg)
{
	dls_thread_t *t = arg;

	slurm_mutex_lock(&term_lock);
	snprintf(t->name, sizeof(t->name), "%s", plugin_name_buf);
	slurm_mutex_unlock(&term_lock);
	if (t->sched)
		_cycle(t->sched, t->gen, t->name);
	else
		fallbacks++;
}

static void *_agent(void *arg)
{
	dls_thread_t t = {.gen = (uint64_t) (uintptr_t) arg, .sched = NULL, .name = ""};
	const dls_agent_t agent = {
		.lock = &term_lock,
		.cond = &term_cond,
		.reconfig = &reconfig,
		.stopped = _stopped,
		.reload = _reload,
		.cycle = _one_cycle,
		.arg = &t,
	};

	dls_agent_loop(&agent);
	if (t.sched)
		dlsched_scheduler_destroy(t.sched);
	slurm_mutex_lock(&term_lock);
	running--;
	if (t.gen > ended)
		ended = t.gen;
	slurm_cond_broadcast(&term_cond);
	slurm_mutex_unlock(&term_lock);
	return NULL;
}

/* Keeps this library loaded until slurmctld exits, so that a thread still ending after the last
 * plugin using it was unloaded never runs unmapped code. */
static void _pin_library(void)
{
	Dl_info info;

	if (pinned)
		return;
	if (!dladdr((void *) _pin_library, &info) || !info.dli_fname ||
	    !dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
		error("dlsched advisor: cannot pin %s in memory (%s); a reconfigure that unloads its plugins may crash "
		      "slurmctld",
		      info.dli_fname ? info.dli_fname : "libdlsched_advisor.so", dlerror());
		return;
	}
	pinned = true;
}

/* The advisor's log name: the first plugin still using it. Locks: users_lock held. */
static void _set_name(void)
{
	slurm_mutex_lock(&term_lock);
	snprintf(plugin_name_buf, sizeof(plugin_name_buf), "%s", users > 0 ? user_names[0] : "dlsched");
	slurm_mutex_unlock(&term_lock);
}

extern void dls_advisor_start(const char *plugin)
{
	uint64_t gen;

	slurm_mutex_lock(&users_lock);
	if (users < DLS_ADVISOR_MAX_USERS)
		snprintf(user_names[users], sizeof(user_names[users]), "%s", plugin);
	if (users++ > 0) {
		info("%s: shares the advisor %s started (one decision thread for both)", plugin, user_names[0]);
		slurm_mutex_unlock(&users_lock);
		return;
	}
	_pin_library();
	_set_name();
	slurm_mutex_lock(&term_lock);
	gen = ++generation;
	running++;
	in_slurm_lock = false;
	slurm_mutex_unlock(&term_lock);
	dls_thread_create_detached("dlsched_advisor", _agent, (void *) (uintptr_t) gen);
	slurm_mutex_unlock(&users_lock);
}

extern void dls_advisor_stop(const char *plugin)
{
	struct timespec ts;
	bool waits_for_locks;
	uint64_t stopped;
	int i;

	slurm_mutex_lock(&users_lock);
	for (i = 0; i < users && i < DLS_ADVISOR_MAX_USERS && xstrcmp(user_names[i], plugin); i++)
		;
	if (i >= users || i >= DLS_ADVISOR_MAX_USERS) { /* not a user */
		slurm_mutex_unlock(&users_lock);
		return;
	}
	for (; i + 1 < users && i + 1 < DLS_ADVISOR_MAX_USERS; i++)
		memcpy(user_names[i], user_names[i + 1], sizeof(user_names[i]));
	if (--users > 0) {
		/* The thread goes on for the others, under the name of one still loaded. */
		_set_name();
		slurm_mutex_unlock(&users_lock);
		return;
	}
	slurm_mutex_lock(&term_lock);
	stopped = generation++;
	waits_for_locks = in_slurm_lock;
	in_slurm_lock = false;
	slurm_cond_broadcast(&term_cond);
	/*
	 * A thread waiting for slurmctld's locks may be waiting for locks our caller holds (a
	 * reconfigure): leave it, it ends as soon as it has them. Otherwise it ends at once (after
	 * the decision it may be computing): wait for that, a few seconds at most.
	 */
	if (!waits_for_locks) {
		ts = dls_time_in(5);
		while (ended < stopped) {
			if (pthread_cond_timedwait(&term_cond, &term_lock, &ts) == ETIMEDOUT)
				break;
		}
	}
	if (ended < stopped)
		info("%s: advisor stopped; its thread ends when it gets slurmctld's locks", plugin);
	slurm_mutex_unlock(&term_lock);
	_clear_table();
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
	slurm_cond_signal(&term_cond); /* do not wait out a long SchedInterval */
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
