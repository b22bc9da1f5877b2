// `drf`: Dominant Resource Fairness (Ghodsi et al., "Dominant Resource Fairness: Fair Allocation of
// Multiple Resource Types", NSDI'11) with GPUs as the resource, between users. With one resource a
// user's dominant share is its share of the GPUs. Progressive filling: jobs of the user with the
// lowest share go first; each job first gets its minimum, then elastic jobs grow one GPU at a time,
// always for the user with the lowest share, up to their maximum. As DL2's DRF baseline (Peng et al.,
// "DL2", 2019), the allocation is recomputed every cycle, so running jobs may shrink, grow or be
// preempted when shares change.
#include <map>
#include <queue>
#include <unordered_map>

#include "policy/builtin_policies.h"

namespace dlsched {

void DrfOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	std::unordered_map<std::string, int> used;
	for (const Job* r : view.running)
		used[r->user] += r->gpus_allocated;
	const double total = std::max(1, view.total_gpus());
	sort_by_key(jobs, [&](const Job& j) {
		auto it = used.find(j.user);
		return it == used.end() ? 0.0 : it->second / total;
	});
}

void DrfAllocation::allocate(const AllocationInput& in, Plan& plan) const
{
	const std::size_t n = in.ordered.size();
	std::vector<int> targets(n, 0);
	int left = in.free.training_free();  // not the inference nodes' GPUs

	// Each user's jobs, in the ordering's order.
	std::map<std::string, std::vector<std::size_t>> by_user;
	for (std::size_t i = 0; i < n; ++i)
		by_user[in.ordered[i]->user].push_back(i);
	std::map<std::string, int> share;           // GPUs given to each user so far
	using Entry = std::pair<int, std::string>;  // (GPUs so far, user): lowest first, ties by name
	std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> users;
	std::map<std::string, std::size_t> next;  // next job of each user to consider
	for (const auto& kv : by_user) {
		users.push({0, kv.first});
		next[kv.first] = 0;
	}
	// Minimums, user by user in order of share.
	while (!users.empty() && left > 0) {
		Entry e = users.top();
		users.pop();
		std::size_t& k = next[e.second];
		const auto& list = by_user[e.second];
		const std::size_t i = list[k++];
		const Job* j = in.ordered[i];
		if (j->gpus_min <= left) {
			targets[i] = j->gpus_min;
			left -= j->gpus_min;
			share[e.second] += j->gpus_min;
		}
		if (k < list.size())
			users.push({share[e.second], e.second});
	}
	// Progressive filling of elastic jobs, one GPU at a time to the user with the lowest share.
	using Grow = std::tuple<int, std::string, std::size_t>;  // (user GPUs when queued, user, job)
	std::priority_queue<Grow, std::vector<Grow>, std::greater<Grow>> grow;
	for (std::size_t i = 0; i < n; ++i)
		if (targets[i] > 0 && targets[i] < in.ordered[i]->gpus_max)
			grow.push({share[in.ordered[i]->user], in.ordered[i]->user, i});
	while (!grow.empty() && left > 0) {
		auto [s, user, i] = grow.top();
		grow.pop();
		if (s != share[user]) {  // stale: the user grew since; queue again at its current share
			grow.push({share[user], user, i});
			continue;
		}
		++targets[i];
		--left;
		++share[user];
		if (targets[i] < in.ordered[i]->gpus_max)
			grow.push({share[user], user, i});
	}
	FreeMap free = in.free;
	realize_targets(in, targets, free, plan);
}

}  // namespace dlsched
