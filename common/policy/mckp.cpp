// `mckp`: Lyra/Aryl's elastic allocation (Li et al., "Lyra: Elastic Scheduling for Deep Learning
// Clusters", EuroSys'23, section 5). Phase 1: every job's minimum (an inelastic job's only size), in
// the ordering's order (srtf in preset `aryl`: shortest first), skipping jobs that do not fit. Phase 2:
// the spare GPUs (loaned ones included) go to the elastic jobs phase 1 admitted, by a multiple-choice
// knapsack over (job, extra GPUs) options: an option's value is the job's predicted remaining time at
// its minimum minus that at minimum + extra (the model's measured scaling curve, the job's remaining
// epochs), minus the resize's cost for a running job that would change size (checkpoint write +
// resume: the restart a resize is). Solved exactly (solve_mckp). Placement: jobs at their size
// (phase-1 sizes first: the placement policy's best fit), an elastic job's GPUs beyond its minimum on
// loaned nodes first, so that a reclaim shrinks it instead of preempting it.
//
// Complexity: with S spare GPUs and m elastic jobs in phase 2, each with at most R = max - min + 1
// options, O(S x m x R) time, O(m x S) memory; m <= S (each holds at least one GPU), so at most
// O(S^2 R) whatever the queue length. The pending queue only costs phase 1's linear walk.
#include "policy/mckp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "policy/builtin_policies.h"
#include "policy/estimates.h"

namespace dlsched {

MckpSolution solve_mckp(const std::vector<std::vector<double>>& values, int capacity)
{
	const std::size_t k = values.size();
	const int cap = std::max(0, capacity);
	const double kNeg = -std::numeric_limits<double>::infinity();
	// best[c]: best total of the classes so far with at most c units.
	std::vector<double> best(static_cast<std::size_t>(cap) + 1, 0.0), next(best.size());
	std::vector<std::vector<std::uint16_t>> pick(k);
	for (std::size_t i = 0; i < k; ++i) {
		const std::vector<double>& v = values[i];
		pick[i].assign(best.size(), 0);
		for (int c = 0; c <= cap; ++c) {
			double b = kNeg;
			int arg = 0;
			const int top = std::min<int>(c, static_cast<int>(v.size()) - 1);
			for (int e = 0; e <= top; ++e) {
				const double t = best[static_cast<std::size_t>(c - e)] +
						 v[static_cast<std::size_t>(e)];
				if (t > b) {  // strictly: fewer units win ties
					b = t;
					arg = e;
				}
			}
			next[static_cast<std::size_t>(c)] = b;
			pick[i][static_cast<std::size_t>(c)] =
				static_cast<std::uint16_t>(arg);  // arg <= kMaxJobGpus
		}
		best.swap(next);
	}
	MckpSolution s;
	s.value = k ? best[static_cast<std::size_t>(cap)] : 0.0;
	s.choice.assign(k, 0);
	int c = cap;
	for (std::size_t i = k; i-- > 0;) {
		const int e = pick[i][static_cast<std::size_t>(c)];
		s.choice[i] = e;
		c -= e;
	}
	return s;
}

void MckpAllocation::allocate(const AllocationInput& in, Plan& plan) const
{
	const std::size_t n = in.ordered.size();
	std::vector<int> targets(n, 0);
	// Free GPUs per partition (a partition's jobs cannot use another's), and in all.
	std::vector<std::pair<const std::string*, int>> eligible;
	auto part_left = [&](const Job& j) -> int& {
		for (auto& e : eligible)
			if (*e.first == j.partition)
				return e.second;
		eligible.push_back({&j.partition, in.free.eligible_free(j)});
		return eligible.back().second;
	};
	int left = in.free.training_free();
	// Phase 1: in order, each job at the size it asked for (an inelastic job's only size).
	for (std::size_t i = 0; i < n; ++i) {
		const Job* j = in.ordered[i];
		int& part = part_left(*j);
		const int avail = j->partition.empty() ? std::min(part, left) : part;
		const int asked = std::clamp(j->gpus_requested, j->gpus_min, j->gpus_max);
		int size = 0;
		if (asked <= avail)
			size = asked;
		if (size > 0) {
			targets[i] = size;
			part -= size;
			if (j->partition.empty())
				left -= size;
		}
	}
	// Phase 2: the knapsack over the elastic jobs admitted.
	std::vector<std::size_t> cls;
	std::vector<std::vector<double>> values;
	int spare = 0;
	for (const auto& e : eligible)
		spare = std::max(spare, e.second);
	for (std::size_t i = 0; i < n && spare > 0; ++i) {
		const Job& j = *in.ordered[i];
		if (targets[i] <= 0 || !j.elastic() || !(j.requeueable || !j.running()))
			continue;
		const int room = std::min(j.gpus_max - targets[i], part_left(j));
		if (room <= 0)
			continue;
		const double base = remaining_time(in.view, j, targets[i]);
		const double resize = j.preempt_cost.restart_loss();
		std::vector<double> v(static_cast<std::size_t>(room) + 1);
		for (int e = 0; e <= room; ++e) {
			const int size = targets[i] + e;
			double gain = base - remaining_time(in.view, j, size);
			if (j.running() && size != j.gpus_allocated)
				gain -= resize;
			v[static_cast<std::size_t>(e)] = std::round(gain * 1e6) / 1e6;
		}
		cls.push_back(i);
		values.push_back(std::move(v));
	}
	if (!cls.empty()) {
		const MckpSolution s = solve_mckp(values, spare);
		for (std::size_t k = 0; k < cls.size(); ++k)
			targets[cls[k]] += s.choice[k];
	}
	FreeMap free = in.free;
	realize_targets(in, targets, free, plan, /*elastic=*/true, /*surplus_on_loaned=*/true);
}

}  // namespace dlsched
