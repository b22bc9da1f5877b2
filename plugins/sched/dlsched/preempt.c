/*****************************************************************************\
 *  preempt.c - sched/dlsched's two-step preemptions: the checkpoint request
 *  (the first step, from a cycle's REQUEUE or RESIZE), the requeue once the job
 *  reported its checkpoint, ended, or ran out of grace (the second step,
 *  checked every cycle and every second while one is under way), the
 *  dependants held back meanwhile, and the profile DB's preemption rows. The
 *  table of jobs being preempted and its journal are stopping.c's.
\*****************************************************************************/

#include "sched_dlsched.h"

/* The requeue that ends a preemption. Locks: the cycle's (config read, job write, node write,
 * partition read, federation read), held by the caller. */
extern int dls_requeue(job_record_t *job_ptr, const char *why)
{
	int rc = dls_job_requeue(slurm_conf.slurm_user_id, job_ptr);

	if (rc == SLURM_SUCCESS) {
		info(DLS_LOG_PREFIX "requeued %pJ (%s)", job_ptr, why);
		dls_stats.requeues++;
	} else {
		info(DLS_LOG_PREFIX "cannot requeue %pJ (%s): %s", job_ptr, why, slurm_strerror(rc));
	}
	return rc;
}

/*
 * Dependants of the jobs being preempted. A job that saves and exits on the checkpoint request has
 * not finished: between its exit and its requeue Slurm sees it ended, and would start a pipeline's
 * next stage (--dependency=afterany, or afterok when it exits 0) on an unfinished model, and keep
 * the dependency fulfilled (or failed) after the requeue. So while a job is stopping, its pending
 * dependants may not begin before its grace is over (their begin time is moved there; a minute
 * more for the requeue); once it is requeued their dependency on it is unfulfilled again (and one
 * its exit made "never satisfied" waits again); when the stop ends, their own begin time comes back.
 * Kept in memory: after a slurmctld restart a moved begin time simply runs out.
 */
#define DLS_DEPENDANT_MARGIN_S 60
typedef struct {
	uint32_t job_id;       /* the dependant */
	uint32_t of;	       /* the job being preempted */
	time_t begin;	       /* its own begin time */
	time_t set;	       /* the one set here */
	uint16_t depend_type;  /* its dependency on `of` (SLURM_DEPEND_*), */
	uint16_t depend_flags; /* as it was when first held */
} dls_dependant_t;
static dls_dependant_t *dependants = NULL;
static int dependant_cnt = 0;

/* The job's dependency on `of`, or NULL. */
static depend_spec_t *_depends_on(job_record_t *job_ptr, uint32_t of)
{
	depend_spec_t *dep;
	list_itr_t *it;

	if (!job_ptr->details || !job_ptr->details->depend_list)
		return NULL;
	it = list_iterator_create(job_ptr->details->depend_list);
	while ((dep = list_next(it)) && dep->job_id != of)
		;
	list_iterator_destroy(it);
	return dep;
}

/* Holds back the pending dependants of the jobs being preempted (new ones too). Locks: job write. */
static void _hold_dependants(void)
{
	list_itr_t *it;
	job_record_t *job_ptr;

	if (!dls_stops_count())
		return;
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!IS_JOB_PENDING(job_ptr) || !job_ptr->details || !job_ptr->details->depend_list)
			continue;
		for (int i = 0; i < dls_stops_count(); i++) {
			dls_stop_t *s = dls_stops_at(i);
			time_t until = (time_t) s->deadline + DLS_DEPENDANT_MARGIN_S;
			dls_dependant_t *d = NULL;
			depend_spec_t *dep = _depends_on(job_ptr, s->job_id);

			if (!dep)
				continue;
			for (int k = 0; k < dependant_cnt && !d; k++)
				if (dependants[k].job_id == job_ptr->job_id && dependants[k].of == s->job_id)
					d = &dependants[k];
			if (!d) {
				xrecalloc(dependants, dependant_cnt + 1, sizeof(*dependants));
				d = &dependants[dependant_cnt++];
				d->job_id = job_ptr->job_id;
				d->of = s->job_id;
				d->begin = job_ptr->details->begin_time;
				d->depend_type = dep->depend_type;
				d->depend_flags = dep->depend_flags;
			}
			if (job_ptr->details->begin_time < until) {
				job_ptr->details->begin_time = until;
				d->set = until;
				last_job_update = time(NULL);
				info(DLS_LOG_PREFIX
				     "%pJ depends on JobId=%u, which is being preempted: not before its requeue",
				     job_ptr, s->job_id);
			}
		}
	}
	list_iterator_destroy(it);
}

/* The stop of `of` ended; `requeued`: it runs again later, so its dependants wait for it again.
 * Locks: job write. */
static void _release_dependants(uint32_t of, bool requeued)
{
	int kept = 0;

	for (int k = 0; k < dependant_cnt; k++) {
		dls_dependant_t *d = &dependants[k];
		job_record_t *job_ptr;

		if (d->of != of) {
			dependants[kept++] = *d;
			continue;
		}
		job_ptr = find_job_record(d->job_id);
		if (!job_ptr || !IS_JOB_PENDING(job_ptr) || !job_ptr->details)
			continue;
		/*
		 * Slurm's scheduler may have run between the job's exit and its requeue: it then found
		 * every dependency fulfilled and flushed the list (test_job_dependency). The dependency
		 * on the requeued job is put back as it was, unfulfilled.
		 */
		if (requeued && !_depends_on(job_ptr, of)) {
			depend_spec_t *dep = xmalloc(sizeof(*dep));

			dep->array_task_id = NO_VAL;
			dep->depend_type = d->depend_type;
			dep->depend_flags = d->depend_flags;
			dep->depend_state = DEPEND_NOT_FULFILLED;
			dep->job_id = of;
			dep->job_ptr = find_job_record(of);
			if (!job_ptr->details->depend_list)
				job_ptr->details->depend_list = list_create(xfree_ptr);
			list_append(job_ptr->details->depend_list, dep);
			info(DLS_LOG_PREFIX
			     "%pJ: its dependency on JobId=%u is back: that job was requeued, not finished",
			     job_ptr, of);
		}
		if (requeued && job_ptr->details->depend_list) {
			list_itr_t *it = list_iterator_create(job_ptr->details->depend_list);
			depend_spec_t *dep;

			while ((dep = list_next(it)))
				if (dep->job_id == of && dep->depend_state != DEPEND_NOT_FULFILLED)
					dep->depend_state = DEPEND_NOT_FULFILLED;
			list_iterator_destroy(it);
			job_ptr->bit_flags |= JOB_DEPENDENT;
			if (job_ptr->state_reason == WAIT_DEP_INVALID) {
				job_ptr->state_reason = WAIT_DEPENDENCY;
				xfree(job_ptr->state_desc);
			}
		}
		if (d->set && job_ptr->details->begin_time == d->set)
			job_ptr->details->begin_time = d->begin;
		last_job_update = time(NULL);
	}
	dependant_cnt = kept;
}

/*
 * A preemption's first step: the checkpoint request (the protocol's signal to the batch step; see
 * dlsched-protocol(7)). The job is requeued later, by dls_check_stops(), once it reports its checkpoint
 * through the profile DB, or has ended on the request, or when its grace runs out, whichever comes
 * first; meanwhile its GPUs count as freeing. A grace of 0 requeues at once (Slurm's own requeue:
 * SIGTERM, KillWait, SIGKILL). A job Slurm cannot requeue (dls_job_requeueable()) is never
 * signalled: it would lose its work and keep running, or end. `per_node` and `nodes` give a
 * resize's new shape (0: none). Locks as dls_requeue().
 */
extern int dls_request_checkpoint(job_record_t *job_ptr, const dlsched_action_t *a, time_t now, int per_node, int nodes)
{
	dls_stop_t stop, *s;
	double grace = a->grace >= 0 ? a->grace : dls_sched_conf.preempt_grace;

	if (!dls_job_requeueable(job_ptr)) {
		if (!dls_refused_before(job_ptr->job_id))
			info(DLS_LOG_PREFIX "%pJ cannot be requeued (%s); not preempted (%s)", job_ptr,
			     !job_ptr->batch_flag ? "not a batch job" : "its requeue is disabled", a->reason);
		return ESLURM_DISABLED;
	}
	if (dls_stops_find(job_ptr->job_id))
		return SLURM_SUCCESS; /* asked already */
	memset(&stop, 0, sizeof(stop));
	stop.job_id = job_ptr->job_id;
	stop.requested = dls_now_ms() / 1000.0;
	stop.deadline = grace > 0 ? stop.requested + grace : stop.requested;
	stop.start_time = job_ptr->start_time;
	stop.restart_cnt = job_ptr->restart_cnt;
	stop.gpus = dls_job_gpus_allocated(job_ptr);
	stop.per_node = per_node;
	stop.nodes = nodes;
	stop.predicted_suspend = a->predicted_suspend;
	stop.predicted_resume = a->predicted_resume;
	strlcpy(stop.reason, a->reason, sizeof(stop.reason));
	/* On disk before the signal: a job that checkpoints and exits on it is requeued even if
	 * slurmctld restarts meanwhile. A preemption that cannot be remembered is not begun. */
	if (!(s = dls_stops_add(&stop))) {
		error(DLS_LOG_PREFIX "%pJ not preempted (%s): the stopping table cannot be written", job_ptr,
		      a->reason);
		return ESLURM_WRITING_TO_FILE;
	}
	dls_stats.checkpoint_requests++;
	if (grace > 0 &&
	    job_signal(job_ptr, dls_sched_conf.checkpoint_signal, KILL_JOB_BATCH, slurm_conf.slurm_user_id, false) ==
		    SLURM_SUCCESS) {
		info(DLS_LOG_PREFIX "asked %pJ to checkpoint (%s; predicted %.0f s to stop, %.0f s to resume); "
				    "it is requeued when it reports its checkpoint, at the latest in %.0f s",
		     job_ptr, a->reason, a->predicted_suspend, a->predicted_resume, grace);
		_hold_dependants();
		return SLURM_SUCCESS;
	}
	/* No grace, or the signal could not be sent: Slurm's requeue at once. The row is still kept
	 * (with its outcome) so that the preemption is counted. */
	if (s->deadline != s->requested) {
		s->deadline = s->requested;
		(void) dls_stops_add(s);
	}
	return SLURM_SUCCESS;
}

/* How long a job that ended after its checkpoint request may take to report the checkpoint (the
 * collector's last delivery) before it is requeued without: well under MinJobAge's 300 s default,
 * after which Slurm forgets a finished job. Without ProfileDB= no report can come: no wait. */
#define DLS_REPORT_WAIT_S 10

/* An outcome of a preemption, to complete its profile DB row off the locks. */
typedef struct {
	uint32_t job_id;
	double requested;
	dls_stop_outcome_t outcome;
	double at;
} dls_done_t;

/* Rows of the preemptions table: written with no slurmctld lock held. A failed write is logged
 * when its reason changes and counted; it never stops a preemption. */
static void _record_preemptions(dlsched_scheduler_t *sched, const dls_done_t *done, int done_cnt)
{
	static char last_error[512];
	dlsched_error_t err;

	if (!sched)
		return; /* no dlsched.conf at all: the rows wait for one */
	for (int i = 0; i < dls_stops_count(); i++) {
		dls_stop_t *s = dls_stops_at(i);

		if (s->recorded)
			continue;
		if (dlsched_scheduler_record_preemption(sched, s->job_id, s->requested, s->deadline - s->requested,
							s->gpus, s->predicted_suspend, s->predicted_resume, s->reason,
							&err) == DLSCHED_OK) {
			dls_stats.preemption_rows++;
		} else {
			dls_stats.preemption_row_errors++;
			if (strcmp(err.message, last_error))
				info(DLS_LOG_PREFIX "preemption of JobId=%u not recorded in the profile DB (%s)",
				     s->job_id, err.message);
			strlcpy(last_error, err.message, sizeof(last_error));
		}
		dls_stops_set_recorded(s); /* tried: never again */
	}
	for (int i = 0; i < done_cnt; i++) {
		if (dlsched_scheduler_finish_preemption(sched, done[i].job_id, done[i].requested,
							dls_stop_outcome_name(done[i].outcome), done[i].at,
							&err) != DLSCHED_OK) {
			dls_stats.preemption_row_errors++;
			if (strcmp(err.message, last_error))
				info(DLS_LOG_PREFIX "end of the preemption of JobId=%u not recorded (%s)",
				     done[i].job_id, err.message);
			strlcpy(last_error, err.message, sizeof(last_error));
		}
	}
}

/*
 * The second step of the preemptions in progress: requeue each job that reported its checkpoint
 * after the request (the profile DB, read first with no lock held), or that ended on the request,
 * or whose grace ran out. A job that ended by itself - it finished its training (exit 0 with no
 * checkpoint), was cancelled, timed out - is left as it is; one that failed after the request (its
 * signal's default action, or its exit) is requeued: it loses at most what it trained since its
 * last checkpoint, never the job. A job that runs again since (someone else requeued it) is not
 * ours to requeue. `sched` is the object the safety rules follow (dls_scheduler_reload()): it
 * runs whatever the policy, while dlsched.conf does not load too; NULL (no dlsched.conf at all):
 * no checkpoint report can be read, a job is requeued once it ended, or at its grace's end. Takes
 * the locks itself (config read, job write, node write, partition read, federation read) once, when
 * there is something to do.
 */
extern void dls_check_stops(dlsched_scheduler_t *sched)
{
	double now = dls_now_ms() / 1000.0;
	slurmctld_lock_t write_lock = {
		.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .part = READ_LOCK, .fed = READ_LOCK};
	int n = dls_stops_count(), done_cnt = 0;
	bool *reported;
	dls_done_t *done;

	if (!n) {
		_record_preemptions(sched, NULL, 0);
		(void) dls_stops_sync();
		return;
	}
	reported = xcalloc(n, sizeof(bool));
	done = xcalloc(n, sizeof(dls_done_t));
	for (int i = 0; i < n; i++) {
		double at = 0;

		reported[i] = sched &&
			dlsched_scheduler_checkpoint_since(sched, dls_stops_at(i)->job_id, dls_stops_at(i)->requested,
							   now, &at) == DLSCHED_OK;
	}
	lock_slurmctld(write_lock);
	_hold_dependants();
	for (int i = 0; i < n; i++) {
		dls_stop_t *s = dls_stops_at(i);
		job_record_t *job_ptr = find_job_record(s->job_id);
		uint32_t base = job_ptr ? (job_ptr->job_state & JOB_STATE_BASE) : JOB_END;
		dls_stop_outcome_t outcome = DLS_STOP_UNDER_WAY;
		char why[200];
		bool requeue = false;

		if (!job_ptr || (IS_JOB_PENDING(job_ptr) && !IS_JOB_COMPLETING(job_ptr))) {
			outcome = DLS_STOP_GONE; /* purged, or requeued by someone else */
		} else if ((s->start_time && job_ptr->start_time != s->start_time) ||
			   (s->restart_cnt != UINT32_MAX && job_ptr->restart_cnt != s->restart_cnt)) {
			outcome = DLS_STOP_GONE; /* requeued by someone else and started again */
		} else if (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr)) {
			if (reported[i] || now >= s->deadline) {
				requeue = true;
				outcome = reported[i] ? DLS_STOP_CHECKPOINTED : DLS_STOP_GRACE;
			}
		} else if (reported[i]) {
			requeue = true; /* it checkpointed and ended on the request */
			outcome = DLS_STOP_CHECKPOINTED;
		} else if (base == JOB_COMPLETE || base == JOB_FAILED) {
			/* Ended after the request with no report (yet): its collector delivers within
			 * seconds; then it ended on the request all the same (a job that does not speak the
			 * protocol dies of the signal), and is requeued. */
			if (!s->ended_seen)
				s->ended_seen = now;
			if (sched && dls_sched_conf.profile_db && now - s->ended_seen < DLS_REPORT_WAIT_S)
				continue;
			requeue = true;
			outcome = DLS_STOP_EXITED;
		} else {
			outcome = DLS_STOP_GONE; /* cancelled, timed out, ... by someone else */
		}
		if (outcome == DLS_STOP_UNDER_WAY)
			continue;
		if (requeue) {
			snprintf(why, sizeof(why), "%s; %s", s->reason,
				 outcome == DLS_STOP_CHECKPOINTED    ? "after its checkpoint"
					 : outcome == DLS_STOP_GRACE ? "its grace ran out"
								     : "it ended on the checkpoint request");
			if (dls_requeue(job_ptr, why) == SLURM_SUCCESS) {
				if (outcome == DLS_STOP_CHECKPOINTED)
					dls_stats.requeued_checkpointed++;
				else if (outcome == DLS_STOP_GRACE)
					dls_stats.requeued_grace++;
				else
					dls_stats.requeued_exited++;
				if (s->per_node > 0) {
					long n = dls_admin_comment_value(job_ptr, DLSCHED_WORD_RESIZES);

					dls_remember_resize(s->job_id, s->per_node, s->nodes);
					/* dlsched-report counts them (a requeue that was a resize). */
					dls_admin_comment_set(job_ptr, DLSCHED_WORD_RESIZES, n > 0 ? n + 1 : 1);
					dls_stats.resizes++;
				}
			} else {
				outcome = DLS_STOP_GONE;
			}
		}
		if (outcome == DLS_STOP_GONE)
			dls_stats.stops_gone++;
		_release_dependants(s->job_id, outcome != DLS_STOP_GONE);
		done[done_cnt++] =
			(dls_done_t){.job_id = s->job_id, .requested = s->requested, .outcome = outcome, .at = now};
	}
	unlock_slurmctld(write_lock);
	for (int i = 0; i < done_cnt; i++)
		dls_stops_remove(done[i].job_id);
	_record_preemptions(sched, done, done_cnt);
	(void) dls_stops_sync();
	xfree(reported);
	xfree(done);
}

/* The jobs being preempted, as the core sees them: their GPUs are freeing. No lock needed (the
 * snapshot is ours, the table the scheduler thread's). */
extern void dls_mark_stopping(dls_snapshot_t *snap)
{
	for (size_t i = 0; i < snap->view.job_count && dls_stops_count(); i++) {
		dls_stop_t *s = dls_stops_find(snap->jobs[i].job_id);

		if (s && snap->jobs[i].state == DLSCHED_RUNNING)
			snap->jobs[i].checkpoint_requested_at = s->requested;
	}
}

extern void dls_preempt_fini(void)
{
	xfree(dependants);
	dependant_cnt = 0;
}
