// `tiresias-las`: Tiresias' discretised two-dimensional least-attained-service (Gu et al., "Tiresias:
// A GPU Cluster Manager for Distributed Deep Learning", NSDI'19, section 4). A job's attained service
// is GPUs x time it has run (2D: both how wide and how long). Jobs sit in K queues split by
// thresholds on attained service; a queue is served before lower ones, first come first served
// inside a queue (arrival order), and the policy is preemptive: a job that passes a threshold drops a
// queue and may be preempted by newer, less-served jobs. To prevent starvation a job that has waited
// longer, since it was last preempted, than StarveFactor x the length of its last run is promoted to
// the highest queue (the paper's PROMOTEKNOB). A promoted job then counts its service afresh from the
// start of that run, so that it keeps the top queue for one quantum instead of being preempted again
// in the next cycle (which made promoted jobs thrash). Thresholds and the knob are dlsched.conf keys; defaults are dlsched's choice for
// Philly-like durations (1 and 10 GPU-hours), not numbers from the paper.
#include "policy/builtin_policies.h"

namespace dlsched {

int TiresiasOrdering::queue_of(const ClusterView& view, const Job& job) const
{
	double service = job.attained_gpu_s;
	if (starve_factor_ > 0 && job.last_stop_time >= 0) {
		const double limit = starve_factor_ * job.last_run_s;
		if (!job.running() && view.now - job.last_stop_time > limit)
			return 0;  // starving: promoted
		if (job.running() && job.start_time - job.last_stop_time > limit)
			service = job.gpus_allocated * (view.now - job.start_time);  // promoted at start: afresh
	}
	int q = 0;
	for (double t : thresholds_)
		if (service >= t)
			++q;
	return q;
}

void TiresiasOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [&](const Job& j) { return queue_of(view, j); });
}

}  // namespace dlsched
