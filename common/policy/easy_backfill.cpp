// `easy-backfill`: first come first served with EASY backfilling (Lifka, "The ANL/IBM SP Scheduling
// System", JSSPP'95; Mu'alem & Feitelson, IEEE TPDS 2001), the core of Slurm's sched/backfill. Jobs
// start in order while they fit. The first job that does not fit gets a reservation at the earliest
// time enough GPUs will be free, computed from running jobs' expected ends (start + time limit). A
// later job may start now if it fits and either ends (now + its time limit) before that "shadow" time
// or uses only GPUs the reservation does not need ("extra" GPUs).
// A running job being preempted (stopping) is expected to end once it has checkpointed (its
// PreemptionCost), not at its time limit. Approximations against Slurm: one reservation (EASY) where Slurm
// reserves for every job it examines; the reservation counts GPUs across the eligible nodes, not node by
// node; at most BackfillMaxJobs pending jobs are examined per cycle (as bf_max_job_test). Traces carry no
// time limits: the workload builder derives them (TimeLimitFactor x true runtime), see
// doc/workload-format.md.
#include <algorithm>

#include "policy/builtin_policies.h"

namespace dlsched {

void EasyBackfillAllocation::allocate(const AllocationInput& in, Plan& plan) const
{
	FreeMap free = in.free;
	if (!in.reconsider_running)
		keep_running(in.view, plan);
	const Seconds now = in.view.now;
	bool blocked = false;
	Seconds shadow = 0;
	int extra = 0;
	long examined = 0;
	for (const Job* j : in.ordered) {
		if (j->running())
			continue;
		if (++examined > max_jobs_ || free.total_free() == 0)
			break;
		const int need = j->gpus_requested;
		std::vector<NodeShare> where;
		if (need > free.total_free() || !in.placement.place(in.view, *j, need, free, where)) {
			if (!blocked) {
				blocked = true;
				// Reservation for the first blocked job: when do enough eligible GPUs free
				// up?
				std::vector<std::pair<Seconds, int>>
					ends;  // (expected end, eligible GPUs released)
				for (const Assignment& a : plan) {
					int g = 0;
					for (const NodeShare& s : a.placement)
						if (free.eligible(*j, s.node))
							g += s.gpus;
					const Job& r = *a.job;
					const Seconds start = r.running() ? r.start_time : now;
					// A job being preempted frees its GPUs once it has checkpointed.
					const Seconds end = r.stopping() ? now + r.preempt_cost.suspend()
									 : start + r.time_limit;
					ends.push_back({std::max(now, end), g});
				}
				std::sort(ends.begin(), ends.end());
				int avail = free.eligible_free(*j);
				shadow = kNoTimeLimit;
				extra = 0;
				for (const auto& e : ends) {
					avail += e.second;
					if (avail >= need) {
						shadow = e.first;
						extra = avail - need;
						break;
					}
				}
			}
			continue;
		}
		if (blocked) {
			const bool ends_before = now + j->time_limit <= shadow;
			if (!ends_before && need > extra)
				continue;  // would delay the reservation
			if (!ends_before)
				extra -= need;
		}
		free.take(where);
		plan.push_back({j, need, std::move(where)});
	}
}

}  // namespace dlsched
