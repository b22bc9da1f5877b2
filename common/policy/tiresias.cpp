// `tiresias-las`: Tiresias' discretised two-dimensional least-attained-service (Gu et al., "Tiresias:
// A GPU Cluster Manager for Distributed Deep Learning", NSDI'19, section 4). A job's attained service
// is GPUs x time it has run (2D: both how wide and how long). Jobs sit in K queues split by
// thresholds on attained service; a queue is served before lower ones, first come first served
// inside a queue (arrival order), and the policy is preemptive: a job that passes a threshold drops a
// queue and may be preempted by newer, less-served jobs. To prevent starvation a job that has waited
// longer than StarveFactor x its executed time is promoted to the highest queue (the paper's
// STARVELIMIT knob). Thresholds and the knob are dlsched.conf keys; defaults are dlsched's choice for
// Philly-like durations (1 and 10 GPU-hours), not numbers from the paper.
#include "policy/builtin_policies.h"

namespace dlsched {

int TiresiasOrdering::queue_of(const ClusterView& view, const Job& job) const
{
	if (starve_factor_ > 0 && !job.running() && job.executed_s > 0) {
		const double waited = view.now - job.submit_time - job.executed_s;
		if (waited > starve_factor_ * job.executed_s)
			return 0;
	}
	int q = 0;
	for (double t : thresholds_)
		if (job.attained_gpu_s >= t)
			++q;
	return q;
}

void TiresiasOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [&](const Job& j) { return queue_of(view, j); });
}

}  // namespace dlsched
