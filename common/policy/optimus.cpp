// `optimus`: Optimus' greedy marginal-gain allocation (Peng et al., "Optimus: An Efficient Dynamic
// Resource Scheduler for Deep Learning Clusters", EuroSys'18, section 5.1). Every job first gets its
// minimum, in the ordering's order (the preset orders by shortest remaining time, so that when not all
// jobs fit, the ones that finish soonest run - the first GPU of a job has the largest gain of all);
// then the remaining GPUs go one at a time to the job whose remaining time drops the most with one
// more GPU, from the model's measured speedup curve, up to its maximum. With rigid jobs (min == max)
// only the first step acts. Recomputed every cycle (elastic).
#include <cmath>
#include <queue>

#include "policy/builtin_policies.h"
#include "policy/estimates.h"

namespace dlsched {

void OptimusAllocation::allocate(const AllocationInput& in, Plan& plan) const
{
	const std::size_t n = in.ordered.size();
	std::vector<int> targets(n, 0);
	int left = in.free.training_free();  // not the inference nodes' GPUs
	for (std::size_t i = 0; i < n && left > 0; ++i) {
		const Job* j = in.ordered[i];
		if (j->gpus_min <= left) {
			targets[i] = j->gpus_min;
			left -= j->gpus_min;
		}
	}
	// Gains in whole microseconds: rounding noise (600/1.2 is not 500 in binary) must not decide
	// between equal gains, the order must, on every compiler.
	auto gain = [&](std::size_t i) {
		const Job& j = *in.ordered[i];
		const double g =
			remaining_time(in.view, j, targets[i]) - remaining_time(in.view, j, targets[i] + 1);
		return std::round(g * 1e6) / 1e6;
	};
	using Entry = std::pair<double, std::size_t>;  // (gain, index): largest gain, then earliest
	auto cmp = [](const Entry& a, const Entry& b) {
		return a.first != b.first ? a.first < b.first : a.second > b.second;
	};
	std::priority_queue<Entry, std::vector<Entry>, decltype(cmp)> heap(cmp);
	for (std::size_t i = 0; i < n; ++i)
		if (targets[i] > 0 && targets[i] < in.ordered[i]->gpus_max)
			heap.push({gain(i), i});
	while (!heap.empty() && left > 0) {
		auto [g, i] = heap.top();
		heap.pop();
		if (g <= 0)
			break;
		++targets[i];
		--left;
		if (targets[i] < in.ordered[i]->gpus_max)
			heap.push({gain(i), i});
	}
	FreeMap free = in.free;
	realize_targets(in, targets, free, plan);
}

}  // namespace dlsched
