// Building blocks shared by allocation policies (declared in allocation.h).
#include "policy/allocation.h"

#include "policy/estimates.h"

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

std::size_t packed_nodes(const ClusterView& view, int gpus)
{
	const int per_node = node_size_hint(view);
	return static_cast<std::size_t>((gpus + per_node - 1) / per_node);
}

// `free` with only the loaned nodes' GPUs (loaned = true) or only the others' (false).
FreeMap only_loaned(const FreeMap& free, bool loaned)
{
	FreeMap f = free;
	std::vector<NodeShare> hide;
	for (std::size_t i = 0; i < f.node_count(); ++i)
		if (f.view().nodes[i].loaned != loaned && f.free(static_cast<NodeIndex>(i)) > 0)
			hide.push_back({static_cast<NodeIndex>(i), f.free(static_cast<NodeIndex>(i))});
	f.take(hide);
	return f;
}

bool any_loaned_free(const FreeMap& free)
{
	for (std::size_t i = 0; i < free.node_count(); ++i)
		if (free.view().nodes[i].loaned && free.free(static_cast<NodeIndex>(i)) > 0)
			return true;
	return false;
}

// An elastic job's start at `gpus` with its minimum off the loaned nodes and the rest on them as
// far as they go (then anywhere). False when that split cannot be placed.
bool place_split(const AllocationInput& in, const Job& j, int gpus, const FreeMap& free,
		 std::vector<NodeShare>& out)
{
	out.clear();
	// The size it asked for is its base; only GPUs beyond it are surplus.
	const int base = std::min(gpus, std::clamp(j.gpus_requested, j.gpus_min, j.gpus_max));
	std::vector<NodeShare> first, extra, rest;
	FreeMap others = only_loaned(free, false);
	if (!in.placement.place(in.view, j, base, others, first))
		return false;
	FreeMap after = free;
	after.take(first);
	int surplus = gpus - base;
	FreeMap loaned = only_loaned(after, true);
	int on_loan = std::min(surplus, loaned.eligible_free(j));
	while (on_loan > 0 && !in.placement.place(in.view, j, on_loan, loaned, extra))
		--on_loan;
	after.take(extra);
	surplus -= on_loan;
	if (surplus > 0 && !in.placement.place(in.view, j, surplus, after, rest))
		return false;
	out = merge(merge(first, extra), rest);
	if (out.size() > packed_nodes(in.view, gpus)) {  // spread: slower than packed
		out.clear();
		return false;
	}
	return true;
}

// A running job `j` (its GPUs taken in `free`) grows towards `target`: on its own nodes first (no new
// node to span), then loaned nodes first when `surplus_on_loaned`, then where the placement policy
// puts the rest; if that spans more nodes than the size needs (a slower job: growing restarts it
// anyway), placed afresh. The largest size with a compact placement wins; none: it stays as it is.
// Returns the placement chosen, taken in `free`.
std::vector<NodeShare> grow(const AllocationInput& in, const Job& j, int target, FreeMap& free,
			    bool surplus_on_loaned)
{
	for (int size = target; size > j.gpus_allocated; --size) {
		const std::size_t limit = std::max(packed_nodes(in.view, size), j.placement.size());
		// Around the current nodes.
		FreeMap trial = free;
		int extra = size - j.gpus_allocated;
		std::vector<NodeShare> local, more;
		for (const NodeShare& sh : j.placement) {
			const int g = std::min(extra, trial.eligible(j, sh.node) ? trial.free(sh.node) : 0);
			if (g > 0) {
				local.push_back({sh.node, g});
				extra -= g;
			}
		}
		trial.take(local);
		if (surplus_on_loaned && extra > 0 && any_loaned_free(trial)) {
			FreeMap loaned = only_loaned(trial, true);
			int on_loan = std::min(extra, loaned.eligible_free(j));
			std::vector<NodeShare> lent;
			while (on_loan > 0 && !in.placement.place(in.view, j, on_loan, loaned, lent))
				--on_loan;
			trial.take(lent);
			local = merge(local, lent);
			extra -= on_loan;
		}
		if (extra == 0 || in.placement.place(in.view, j, extra, trial, more)) {
			trial.take(more);
			std::vector<NodeShare> where = merge(merge(j.placement, local), more);
			if (where.size() <= limit) {
				free = trial;
				return where;
			}
		}
		// Afresh, its own GPUs counted free.
		FreeMap fresh = free;
		fresh.release(j.placement);
		std::vector<NodeShare> where;
		if (in.placement.place(in.view, j, size, fresh, where) &&
		    where.size() <= packed_nodes(in.view, size)) {
			fresh.take(where);
			free = fresh;
			return where;
		}
	}
	return j.placement;
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
		     bool elastic, bool surplus_on_loaned)
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
			plan.push_back({j, 0, grow(in, *j, targets[i], free, surplus_on_loaned)});
			plan.back().gpus = 0;
			for (const NodeShare& sh : plan.back().placement)
				plan.back().gpus += sh.gpus;
			continue;
		}
		const int floor = elastic ? std::min(j->gpus_min, targets[i]) : targets[i];
		const bool split = surplus_on_loaned && j->elastic() && targets[i] > j->gpus_requested &&
				   any_loaned_free(free);
		for (int g = targets[i]; g >= std::max(1, floor); --g) {
			std::vector<NodeShare> where;
			if ((split && g > j->gpus_requested && place_split(in, *j, g, free, where)) ||
			    in.placement.place(in.view, *j, g, free, where)) {
				free.take(where);
				plan.push_back({j, g, std::move(where)});
				break;
			}
		}
	}
}

}  // namespace dlsched
