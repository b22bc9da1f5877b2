// Building blocks shared by allocation policies (declared in allocation.h).
#include "policy/allocation.h"

#include <algorithm>
#include <map>

namespace dlsched {

void keep_running(const ClusterView& view, Plan& plan)
{
	for (const Job* r : view.running)
		plan.push_back({r, r->gpus_allocated, r->placement});
}

namespace {

// Whether every share of `placement` is still free.
bool fits(const FreeMap& free, const std::vector<NodeShare>& placement)
{
	for (const NodeShare& s : placement)
		if (free.free(s.node) < s.gpus)
			return false;
	return true;
}

// Keeps `gpus` of a running job's GPUs, dropping first from the nodes where it has the fewest (so that
// it spans as few nodes as possible).
std::vector<NodeShare> shrink(std::vector<NodeShare> placement, int gpus)
{
	std::stable_sort(placement.begin(), placement.end(),
	                 [](const NodeShare& a, const NodeShare& b) { return a.gpus > b.gpus; });
	std::vector<NodeShare> out;
	for (const NodeShare& s : placement) {
		if (gpus <= 0)
			break;
		int take = std::min(gpus, s.gpus);
		out.push_back({s.node, take});
		gpus -= take;
	}
	return out;
}

std::vector<NodeShare> merge(const std::vector<NodeShare>& a, const std::vector<NodeShare>& b)
{
	std::map<NodeIndex, int> m;
	for (const NodeShare& s : a)
		m[s.node] += s.gpus;
	for (const NodeShare& s : b)
		m[s.node] += s.gpus;
	std::vector<NodeShare> out;
	for (const auto& kv : m)
		out.push_back({kv.first, kv.second});
	return out;
}

}  // namespace

void greedy_fill(const AllocationInput& in, FreeMap& free, bool strict, Plan& plan)
{
	if (!in.reconsider_running) {
		// Pending jobs only: place each in order on what is left; exact, node by node.
		for (const Job* j : in.ordered) {
			if (j->running())
				continue;
			if (j->gpus_requested > free.total_free()) {  // cheap test first: queues can be long
				if (strict || free.total_free() == 0)
					break;
				continue;
			}
			std::vector<NodeShare> where;
			if (in.placement.place(in.view, *j, j->gpus_requested, free, where)) {
				free.take(where);
				plan.push_back({j, j->gpus_requested, std::move(where)});
			} else if (strict) {
				break;
			}
		}
		return;
	}
	// Running jobs compete too: first choose who runs by GPU count in order, then place with as
	// little movement as possible (realize_targets keeps the chosen running jobs where they are).
	std::vector<int> targets(in.ordered.size(), 0);
	int left = free.total_free();
	// What each partition still has, computed at its first job and reduced as its jobs take GPUs
	// (a partition's jobs cannot use another partition's free GPUs).
	std::vector<std::pair<const std::string*, int>> eligible;
	auto eligible_left = [&](const Job& j) -> int& {
		for (auto& e : eligible)
			if (*e.first == j.partition)
				return e.second;
		eligible.push_back({&j.partition, free.eligible_free(j)});
		return eligible.back().second;
	};
	for (std::size_t i = 0; i < in.ordered.size() && left > 0; ++i) {
		const Job* j = in.ordered[i];
		const int need = j->running() ? j->gpus_allocated : j->gpus_requested;
		int& part = eligible_left(*j);
		if (need <= left && need <= part) {
			targets[i] = need;
			left -= need;
			part -= need;
		} else if (strict) {
			break;
		}
	}
	realize_targets(in, targets, free, plan, /*elastic=*/false);
}

void realize_targets(const AllocationInput& in, const std::vector<int>& targets, FreeMap& free, Plan& plan,
                     bool elastic)
{
	const std::size_t n = in.ordered.size();
	std::vector<bool> done(n, false), kept(n, false);
	// 1. Running jobs keeping their size stay where they are; shrinking ones keep part of their nodes;
	// growing ones keep theirs (they grow around them below: a job ahead must not take them, which
	// would move the job, a restart, only for it to grow).
	for (std::size_t i = 0; i < n; ++i) {
		const Job* j = in.ordered[i];
		if (!j->running() || targets[i] <= 0)
			continue;
		if (targets[i] > j->gpus_allocated) {
			if (fits(free, j->placement)) {
				free.take(j->placement);
				kept[i] = true;
			}
			continue;
		}
		std::vector<NodeShare> where =
		        targets[i] == j->gpus_allocated ? j->placement : shrink(j->placement, targets[i]);
		if (!fits(free, where))
			continue;  // its GPUs went elsewhere: placed again below
		free.take(where);
		plan.push_back({j, targets[i], std::move(where)});
		done[i] = true;
	}
	// 2. Growing and starting jobs, in priority order; each tries smaller sizes down to its minimum.
	for (std::size_t i = 0; i < n; ++i) {
		const Job* j = in.ordered[i];
		if (done[i] || targets[i] <= 0)
			continue;
		if (kept[i]) {
			// Grow around the current nodes (kept in step 1): on them first (no new node to span),
			// then the extra GPUs where the placement policy puts them.
			int extra = targets[i] - j->gpus_allocated, size = j->gpus_allocated;
			std::vector<NodeShare> local, more;
			for (const NodeShare& sh : j->placement) {
				const int g = std::min(extra, free.eligible(*j, sh.node) ? free.free(sh.node) : 0);
				if (g > 0) {
					local.push_back({sh.node, g});
					extra -= g;
					size += g;
				}
			}
			free.take(local);
			while (extra > 0 && !in.placement.place(in.view, *j, extra, free, more))
				--extra;
			free.take(more);
			plan.push_back({j, size + extra, merge(merge(j->placement, local), more)});
			continue;
		}
		const int floor = elastic ? std::min(j->gpus_min, targets[i]) : targets[i];
		for (int g = targets[i]; g >= std::max(1, floor); --g) {
			std::vector<NodeShare> where;
			if (in.placement.place(in.view, *j, g, free, where)) {
				free.take(where);
				plan.push_back({j, g, std::move(where)});
				break;
			}
		}
	}
}

}  // namespace dlsched
