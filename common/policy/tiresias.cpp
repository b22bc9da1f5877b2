// `tiresias-las`: Tiresias' discretised two-dimensional least-attained-service (Gu et al., "Tiresias:
// A GPU Cluster Manager for Distributed Deep Learning", NSDI'19, section 4; the `dlas-gpu` schedule of
// its simulator, SymbioticLab/Tiresias, simulator/run_sim.py). A job's attained service is GPUs x
// time it has run (2D: how wide and how long). Jobs sit in queues split by thresholds on attained
// service (TiresiasQueueThresholds; default Tiresias' own 3,250 and 7,200 GPU-seconds, three
// queues); a queue is served before lower ones, and a job that passes a threshold drops one queue.
// Every cycle walks the queues in order, each in its own order, and runs every job that still fits
// (the others are skipped, and preempted if running): backfilling across all queues.
//
// Faithful to Tiresias' simulator:
// - The order inside a queue is that of its lists: the jobs running in the queue first, by the time
//   they joined its running set; then its waiting line, in which the jobs preempted after running in
//   the queue come first, the most recently preempted first (Tiresias moves waiting jobs behind
//   running ones after each pass, and the ones it has just preempted were ahead), then the jobs that
//   entered the queue and have not run in it since, by the time they entered (arrival; demotion).
//   A job demoted in this very cycle joins the end of the line of its new queue even while it runs,
//   so that its new queue's waiting jobs are served before it.
// - Pending jobs never preempt running jobs of their own queue: only a job of a higher queue does.
//   This is what keeps tiresias-las from thrashing when restarts cost time.
// - Starvation (TiresiasStarveFactor = K, Tiresias' solve_starvation; 0, the default as in its
//   plain dlas-gpu, turns it off): a waiting job below the top queue that has waited since it was
//   last preempted for K x its executed time moves to the end of the top queue, and its service
//   counts afresh from then.
// The rule is stateless: each job's place is worked out from its fields (attained service, start of
// its run, time and length of the run that ended at its last preemption), which determine it exactly
// when a cycle runs at every threshold crossing (next_change(); dlsched-sim does, as Tiresias' event
// loop does). Approximated: a host with periodic cycles only sees a crossing at its next cycle, and
// a job demoted and preempted by that same cycle then ranks as preempted in its new queue rather
// than at its end; the view remembers one preemption only, so a promoted job that is preempted again
// counts its whole service again, and a waiting job's last run is taken to be at its requested size.
#include <algorithm>
#include <array>

#include "policy/builtin_policies.h"

namespace dlsched {

namespace {

// Seconds (and GPU-seconds) below which two values are the same: the host accumulates service and
// times in floating point, and a crossing seen at a cycle run for it must count as happening then.
constexpr double kTol = 1e-6;

// Where a waiting job stands in its queue's line, lower first: {group, then two keys}. Group 0: it
// ran in this queue and was preempted, keys (-time preempted, time it joined the running set then).
// Group 1: it entered the queue and has not run in it since, keys (time it entered, 0).
using Line = std::array<double, 3>;

}  // namespace

// A job's queue and its place in it, from its fields at view.now.
struct TiresiasOrdering::Standing {
	int queue = 0;
	// {0, joined running set, kind (0: started from the line, 1: entered running), line at start}
	// for a running job, {1, line} for a waiting one.
	std::array<double, 6> rank{};
	Seconds crossing = INFINITY;  // when a running job next crosses a threshold
};

int TiresiasOrdering::queue_for(double service) const
{
	int q = 0;
	for (double t : thresholds_)
		if (service + kTol >= t)
			++q;
	return q;
}

TiresiasOrdering::Standing TiresiasOrdering::standing(const ClusterView& view, const Job& job) const
{
	Standing st;
	const Seconds now = view.now;
	const bool was_stopped = job.last_stop_time >= 0;
	auto threshold_below = [&](int q) { return thresholds_[static_cast<std::size_t>(q - 1)]; };
	// The line a job stood in when its last run ended at its last preemption, in queue q with
	// `service` then: did it run in q before that preemption, or was it demoted into q by the
	// cycle that preempted it (or never ran at all)?
	auto line_after_stop = [&](int q, double service, int gpus) -> Line {
		if (!was_stopped)
			return {1, job.submit_time, 0};
		const Seconds stop = job.last_stop_time;
		const Seconds run_start = stop - job.last_run_s;
		if (q == 0)
			return {0, -stop, run_start};
		const double before = service - gpus * job.last_run_s;
		if (before + kTol >= threshold_below(q))
			return {0, -stop, run_start};  // the whole run was in q
		const Seconds entered = stop - (service - threshold_below(q)) / gpus;
		if (entered < stop - kTol)
			return {0, -stop, std::max(run_start, entered)};
		return {1, entered, 0};  // demoted and preempted by the same cycle
	};

	if (!job.running()) {
		const double service = job.attained_gpu_s;
		const int q = queue_for(service);
		if (starve_factor_ > 0 && q > 0 && was_stopped && job.executed_s > 0) {
			const Seconds promoted = job.last_stop_time + starve_factor_ * job.executed_s;
			if (now + kTol >= promoted) {
				st.queue = 0;
				st.rank = {1, 1, promoted, 0, 0, 0};
				return st;
			}
		}
		const Line line = line_after_stop(q, service, job.gpus_requested);
		st.queue = q;
		st.rank = {1, line[0], line[1], line[2], 0, 0};
		return st;
	}

	const int gpus = std::max(1, job.gpus_allocated);
	const Seconds start = job.start_time;
	double at_start = job.attained_gpu_s - gpus * (now - start);  // service when this run began
	Line line{};
	bool promoted = false;
	if (starve_factor_ > 0 && was_stopped && queue_for(at_start) > 0) {
		const Seconds executed = job.executed_s - (now - start);
		const Seconds promoted_at = job.last_stop_time + starve_factor_ * executed;
		if (executed > 0 && start + kTol >= promoted_at) {  // promoted while it waited: afresh
			promoted = true;
			at_start = 0;
			line = {1, promoted_at, 0};
		}
	}
	const double service = at_start + gpus * (now - start);
	const int q = queue_for(service);
	st.queue = q;
	if (static_cast<std::size_t>(q) < thresholds_.size())
		st.crossing = start + (thresholds_[static_cast<std::size_t>(q)] - at_start) / gpus;
	if (q > 0 && at_start + kTol < threshold_below(q)) {
		// Crossed into q during this run.
		const Seconds entered = start + (threshold_below(q) - at_start) / gpus;
		if (entered + kTol >= now)
			st.rank = {1, 1, now, 0, 0, 0};  // demoted by this cycle: the end of q's line
		else
			st.rank = {0, entered, 1, 0, 0, 0};
		return st;
	}
	if (!promoted)
		line = line_after_stop(q, at_start, gpus);
	if (line[0] == 1 && start <= line[1] + kTol) {
		st.rank = {0, start, 1, 0, 0, 0};  // entered the queue and started at once
		return st;
	}
	st.rank = {0, start, 0, line[0], line[1], line[2]};
	return st;
}

int TiresiasOrdering::queue_of(const ClusterView& view, const Job& job) const
{
	return standing(view, job).queue;
}

void TiresiasOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [&](const Job& j) {
		const Standing st = standing(view, j);
		std::array<double, 7> key;
		key[0] = st.queue;
		std::copy(st.rank.begin(), st.rank.end(), key.begin() + 1);
		return key;
	});
}

Seconds TiresiasOrdering::next_change(const ClusterView& view) const
{
	Seconds next = INFINITY;
	for (const Job* j : view.running) {
		const Seconds c = standing(view, *j).crossing;
		if (c > view.now + kTol)
			next = std::min(next, c);
	}
	if (starve_factor_ > 0)
		for (const Job* j : view.pending)
			if (j->last_stop_time >= 0 && j->executed_s > 0 && queue_for(j->attained_gpu_s) > 0) {
				const Seconds promoted = j->last_stop_time + starve_factor_ * j->executed_s;
				if (promoted > view.now + kTol)
					next = std::min(next, promoted);
			}
	return next;
}

}  // namespace dlsched
