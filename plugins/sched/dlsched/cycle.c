/*****************************************************************************\
 *  cycle.c - the scheduler thread of sched/dlsched: every SchedInterval
 *  seconds it copies the queue under a short lock, lets the dlsched core decide
 *  with no lock held, and applies the decisions under the write locks
 *  (actuate.c, preempt.c, loans.c); a cycle without a scheduler (dlsched.conf
 *  missing or invalid) leaves Slurm to decide and keeps the safety rules going.
\*****************************************************************************/

#include "sched_dlsched.h"

static pthread_t sched_thread;
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static bool stop_thread = false;
static bool reconfig = false;

dls_sched_conf_t dls_sched_conf = {.checkpoint_signal = SIGUSR1};

/* The current scheduler's experience counters when last looked at (they start at 0 with it). */
static dlsched_experience_stats_t exp_seen;

/*
 * After a cycle: add what the scheduler wrote to (or failed to write to) the experience table to
 * the stats. A failed write never failed the cycle; it is logged as an error when it first happens
 * and when its reason changes, else at debug, so that a busy or unwritable DB does not flood the log.
 */
static void _experience_after_cycle(dlsched_scheduler_t *sched, uint64_t cycle)
{
	dlsched_experience_stats_t x;

	memset(&x, 0, sizeof(x));
	x.struct_size = sizeof(x);
	if (dlsched_scheduler_experience_stats(sched, &x) != DLSCHED_OK || !x.enabled)
		return;
	dls_stats.exp_rows += x.rows - exp_seen.rows;
	dls_stats.exp_dropped += x.dropped - exp_seen.dropped;
	if (x.errors > exp_seen.errors) {
		dls_stats.exp_errors += x.errors - exp_seen.errors;
		if (xstrcmp(x.last_error, dls_stats.exp_error))
			error(DLS_LOG_PREFIX "cycle %" PRIu64 ": experience not recorded (%s); the cycle goes on",
			      cycle, x.last_error);
		else
			debug(DLS_LOG_PREFIX "cycle %" PRIu64 ": experience not recorded (%s)", cycle, x.last_error);
		strlcpy(dls_stats.exp_error, x.last_error, sizeof(dls_stats.exp_error));
	}
	exp_seen = x;
}

/*
 * After every (re)load: log the scheduler's notes with info(), one line each ("sched/dlsched: note:
 * dl2: model PATH (...)", or why the learned ordering fell back to ModelFallback=, and where
 * experience is recorded), and keep them on one line for the stats file.
 */
static void _log_notes(dlsched_scheduler_t *sched)
{
	char notes[sizeof(dls_stats.notes)] = "";
	char *line, *save = NULL;

	dls_stats.notes[0] = '\0';
	if (!sched)
		return;
	/* DLSCHED_EINVAL: cut short; what fits is still worth logging. */
	(void) dlsched_scheduler_notes(sched, notes, sizeof(notes));
	strlcpy(dls_stats.notes, notes, sizeof(dls_stats.notes));
	for (char *p = dls_stats.notes; *p; p++)
		if (*p == '\n')
			*p = '|';
	/* A policy that cannot be built as configured (a model file missing or unusable) runs
	 * something else: an error for the admin, not a note. */
	for (line = strtok_r(notes, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "instead") || strstr(line, "not found"))
			error(DLS_LOG_PREFIX "note: %s", line);
		else
			info(DLS_LOG_PREFIX "note: %s", line);
	}
}

/* Logs the profile DB's status when it changes (ProfileDB= unreadable, or readable again). */
static void _profile_status(dlsched_scheduler_t *sched)
{
	char status[sizeof(dls_stats.profile_status)] = "";

	(void) dlsched_scheduler_profile_status(sched, status, sizeof(status));
	if (!strcmp(status, dls_stats.profile_status))
		return;
	if (status[0])
		error(DLS_LOG_PREFIX "profile DB: %s", status);
	else
		info(DLS_LOG_PREFIX "profile DB readable again");
	strlcpy(dls_stats.profile_status, status, sizeof(dls_stats.profile_status));
}

static void _cycle(dlsched_scheduler_t *sched, uint64_t cycle)
{
	/* The lock set is Slurm's own (sched/backfill's, and what job updates take): config read, job
	 * write, node write, partition read, federation read. The snapshot needs write locks too:
	 * Slurm's checks of whether a job can start update its state reason and begin time. */
	slurmctld_lock_t write_lock = {
		.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .part = READ_LOCK, .fed = READ_LOCK};
	double t0 = dls_now_ms(), t1, t2, locked;
	time_t now = time(NULL);
	dls_snapshot_t *snap;
	dlsched_decisions_t *d = NULL;
	dlsched_error_t err;
	int rc, n_restored;

	dls_check_stops(sched);
	/* Speed observations (the profile DB's epochs per node), every ProfileRefresh= seconds, before
	 * the locks are taken. */
	if (dls_speeds_refresh(plugin_type) >= 0)
		dls_stats.speed_reads++;
	/* The declared inference demand, read with no lock held (a file on a hung mount must not stall
	 * slurmctld): the snapshot takes this value. */
	if (dls_inference_partition()) {
		char why[sizeof(dls_stats.demand_status)];

		dls_stats.inference_demand = dls_inference_demand(why, sizeof(why));
		if (strcmp(why, dls_stats.demand_status))
			info(DLS_LOG_PREFIX "inference demand %.3f%s%s", dls_stats.inference_demand, why[0] ? ": " : "",
			     why);
		snprintf(dls_stats.demand_status, sizeof(dls_stats.demand_status), "%s", why);
	}
	/* The guard's verdict file, read with no lock held: who decides this cycle. */
	dls_guard_before_cycle(sched, cycle);
	lock_slurmctld(write_lock);
	locked = dls_now_ms();
	if (dls_lending_reclaims())
		dls_lending_enforce(now);
	snap = dls_snapshot_take(now, cycle, true);
	snap->view.requeue_delay = dls_requeue_delay();
	dls_unorder_left_out(snap);
	unlock_slurmctld(write_lock);
	locked = dls_now_ms() - locked;
	dls_mark_stopping(snap);
	dls_fairness_after_snapshot(snap);

	t1 = dls_now_ms();
	dls_speeds_lock();
	dls_stats.speed_samples = (int) dls_speeds_attach(&snap->view);
	rc = dlsched_scheduler_decide(sched, &snap->view, &d, &err);
	dls_speeds_unlock();
	t2 = dls_now_ms();
	_profile_status(sched);
	_experience_after_cycle(sched, cycle);
	dls_stats.last_considered = snap->pending;
	dls_stats.last_running = snap->running;
	dls_stats.last_decide_ms = t2 - t1;
	if (rc != DLSCHED_OK) {
		dls_stats.fallbacks++;
		snprintf(dls_stats.last_error, sizeof(dls_stats.last_error), "cycle %" PRIu64 ": %s", cycle,
			 err.message);
		error(DLS_LOG_PREFIX "cycle %" PRIu64 " cannot decide (%s); Slurm's own order stands this cycle", cycle,
		      err.message);
		n_restored = dls_restore_slurm_priorities();
		if (n_restored)
			info(DLS_LOG_PREFIX "%d pending job(s) back at Slurm's own priority", n_restored);
	} else {
		double held;

		lock_slurmctld(write_lock);
		held = dls_now_ms();
		dls_apply(d, time(NULL));
		dls_release_readmitted(snap, d, time(NULL));
		unlock_slurmctld(write_lock);
		locked += dls_now_ms() - held;
		dlsched_decisions_free(d);
		/* A grace of 0 requeues at once; the new preemptions get their rows. */
		dls_check_stops(sched);
	}
	dls_snapshot_free(snap);

	dls_stats.cycles++;
	dls_stats.last_locked_ms = locked;
	if (locked > dls_stats.max_locked_ms)
		dls_stats.max_locked_ms = locked;
	dls_stats.last_ms = dls_now_ms() - t0;
	dls_stats.sum_ms += dls_stats.last_ms;
	if (dls_stats.last_ms > dls_stats.max_ms)
		dls_stats.max_ms = dls_stats.last_ms;
	debug(DLS_LOG_PREFIX "cycle %" PRIu64
			     ": %d pending, %d running, %.2f ms (decide %.2f ms, write locks held %.2f ms)",
	      cycle, dls_stats.last_considered, dls_stats.last_running, dls_stats.last_ms, dls_stats.last_decide_ms,
	      locked);
	dls_stats_write();
}

/*
 * A cycle without a scheduler (dlsched.conf missing or invalid): Slurm decides, and the safety rules
 * go on with `safety`'s settings: preemptions in progress are finished (dls_check_stops), and capacity
 * loaning falls back as Slurm would have it, inference nodes for inference: every lent node is taken
 * back (its training jobs have ReclaimTimeout= to leave, as in any reclaim) and the fence keeps
 * training off it. Locks as _cycle.
 */
static void _fallback_cycle(dlsched_scheduler_t *safety)
{
	slurmctld_lock_t write_lock = {
		.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .part = READ_LOCK, .fed = READ_LOCK};
	time_t now = time(NULL);

	dls_stats.fallbacks++;
	dls_check_stops(safety);
	if (dls_inference_partition() && (dls_loans_count() || dls_lending_reclaims())) {
		lock_slurmctld(write_lock);
		dls_lending_take_all_back("dlsched.conf does not load: no loans while Slurm decides", now);
		if (dls_lending_reclaims())
			dls_lending_enforce(now);
		unlock_slurmctld(write_lock);
	}
	dls_stats_write();
}

/* Whether a dlsched.conf string key has a value (ProfileDB=). */
static bool _config_is_set(dlsched_scheduler_t *sched, const char *key)
{
	char buf[PATH_MAX];

	return sched && dlsched_scheduler_config(sched, key, buf, sizeof(buf)) == DLSCHED_OK && buf[0];
}

/* CheckpointSignal= as a signal number (the key's values are checked when dlsched.conf is read). */
static int _config_signal(dlsched_scheduler_t *sched)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM},
		    {"INT", SIGINT},   {"HUP", SIGHUP},	  {"URG", SIGURG}};
	char buf[16];

	if (dlsched_config_get_text(sched, "CheckpointSignal", buf, sizeof(buf)) != DLSCHED_OK)
		return SIGUSR1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcasecmp(buf, sigs[i].name))
			return sigs[i].sig;
	return SIGUSR1;
}

/* What the thread holds: sched decides (NULL: Slurm does); safety is what the safety rules follow
 * (dls_scheduler_reload()): sched itself, or the last one that loaded, or the file's safety keys
 * alone. loaded: dlsched.conf was read once in this process; restore: the next fallback cycle
 * puts pending jobs back at Slurm's own priority. */
typedef struct {
	dlsched_scheduler_t *sched, *safety;
	uint64_t cycle;
	bool loaded, restore;
} dls_thread_t;

static bool _stopped(void *arg)
{
	(void) arg;
	return stop_thread;
}

static bool _reload(void *arg, double *interval)
{
	dls_thread_t *t = arg;
	bool had = t->sched != NULL;

	/* Every (re)load builds the policies afresh: a learned ordering loads its ModelFile= again.
	 * libtorch itself stays loaded with this plugin. A file that does not load leaves the safety
	 * rules as they were: preemptions in progress are still requeued, lent nodes still fenced. */
	(void) dls_scheduler_reload(plugin_type, false, &t->sched, &t->safety);
	*interval = dls_config_double(t->safety, "SchedInterval");
	dls_sched_conf.preempt_grace = dls_config_double(t->safety, "PreemptGrace");
	dls_sched_conf.checkpoint_signal = _config_signal(t->safety);
	dls_sched_conf.profile_db = _config_is_set(t->safety, "ProfileDB");
	dls_sched_conf.reclaim_timeout = dls_config_double(t->safety, "ReclaimTimeout");
	dls_loans_configure(t->safety);
	dls_speeds_configure(t->sched);
	dls_guard_configure(t->sched);
	dls_fairness_configure(t->sched);
	dls_stats.safety[0] = '\0';
	if (t->safety && t->safety != t->sched)
		(void) dlsched_scheduler_describe(t->safety, dls_stats.safety, sizeof(dls_stats.safety));
	memset(&exp_seen, 0, sizeof(exp_seen));
	_log_notes(t->sched);
	dls_stats.describe[0] = '\0';
	if (t->sched) {
		(void) dlsched_scheduler_describe(t->sched, dls_stats.describe, sizeof(dls_stats.describe));
		t->restore = false;
	} else {
		snprintf(dls_stats.describe, sizeof(dls_stats.describe),
			 "none (dlsched.conf missing or invalid: Slurm decides)");
		/* Once, when dlsched stops deciding: Slurm's order, not dlsched's last. Also at the first
		 * load in this process: the priorities an earlier slurmctld set are in the recovered
		 * jobs (a restart, and every scontrol reconfigure from 23.11, starts a new process).
		 * At the next fallback cycle, once slurmctld has recovered its jobs. */
		if (had || !t->loaded)
			t->restore = true;
	}
	t->loaded = true;
	return t->sched != NULL;
}

static void _one_cycle(void *arg)
{
	dls_thread_t *t = arg;

	if (t->sched) {
		_cycle(t->sched, ++t->cycle);
		return;
	}
	if (t->restore) {
		int n = dls_restore_slurm_priorities();

		t->restore = false;
		if (n)
			info(DLS_LOG_PREFIX "%d pending job(s) back at Slurm's own priority", n);
	}
	_fallback_cycle(t->safety);
}

/* While jobs are being preempted, their second step is checked every second (a job that ended on
 * its request is requeued without waiting for the next cycle). */
static bool _stops_under_way(void *arg)
{
	(void) arg;
	return dls_stops_count() > 0;
}

static void _between_cycles(void *arg)
{
	dls_thread_t *t = arg;

	dls_check_stops(t->safety);
	dls_stats_write();
}

static void *_sched_agent(void *arg)
{
	dls_thread_t t = {.sched = NULL, .safety = NULL, .cycle = 0, .loaded = false, .restore = false};
	const dls_agent_t agent = {
		.lock = &term_lock,
		.cond = &term_cond,
		.reconfig = &reconfig,
		.stopped = _stopped,
		.reload = _reload,
		.cycle = _one_cycle,
		.busy = _stops_under_way,
		.between = _between_cycles,
		.arg = &t,
	};

	(void) arg;
	dls_agent_loop(&agent);
	dls_scheduler_unload(&t.sched, &t.safety);
	return NULL;
}

extern void dls_cycle_start(void)
{
	stop_thread = false;
	dls_thread_create("dlsched", &sched_thread, _sched_agent, NULL);
}

extern void dls_cycle_stop(void)
{
	slurm_mutex_lock(&term_lock);
	stop_thread = true;
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
	if (sched_thread) {
		pthread_join(sched_thread, NULL);
		sched_thread = 0;
	}
}

extern void dls_cycle_reconfig(void)
{
	slurm_mutex_lock(&term_lock);
	reconfig = true;
	slurm_cond_signal(&term_cond); /* do not wait out a long SchedInterval */
	slurm_mutex_unlock(&term_lock);
}
