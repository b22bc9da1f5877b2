// Ordering: which job goes first (queue sort, in the Kubernetes scheduler framework's words).
#ifndef DLSCHED_POLICY_ORDERING_H
#define DLSCHED_POLICY_ORDERING_H

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "model/cluster_view.h"

namespace dlsched {

class Ordering {
public:
	virtual ~Ordering() = default;
	virtual const char* name() const = 0;

	// A preemptive ordering ranks running jobs together with pending ones every cycle; a running job
	// that no longer makes the cut is checkpointed and requeued (srtf, tiresias-las).
	virtual bool preemptive() const { return false; }

	// Sorts `jobs` most urgent first. Must be deterministic: ties broken by submit time, then job id.
	virtual void order(const ClusterView& view, std::vector<const Job*>& jobs) const = 0;

	// The earliest time after view.now at which this ordering would rank the jobs of `view`
	// differently by itself, with no job arriving, starting, stopping or ending in between
	// (tiresias-las: a running job crossing a queue threshold); INFINITY when only such events change
	// it. An event-driven host (dlsched-sim) runs a cycle then, as Tiresias' own simulator does;
	// a host with periodic cycles only (Slurm) may ignore it and sees the change one cycle late.
	virtual Seconds next_change(const ClusterView& view) const
	{
		(void)view;
		return INFINITY;
	}

	// Something the host should log once about this policy (a learned policy that fell back to a
	// heuristic says why); empty when there is nothing to say.
	virtual std::string note() const { return {}; }

	// The heuristic a learned ordering fell back to (its model missing, corrupt or of another
	// version), or empty: hosts say so wherever they name the policy.
	virtual std::string fallback() const { return {}; }
};

// Sorts jobs by a key (lower first), computing each key once; ties by submit time, then id. The key
// is a number, or anything compared with < (a std::array of numbers compares lexicographically).
template <class KeyFn>
void sort_by_key(std::vector<const Job*>& jobs, KeyFn key)
{
	using Key = std::decay_t<decltype(key(std::declval<const Job&>()))>;
	using Stored = std::conditional_t<std::is_arithmetic<Key>::value, double, Key>;
	struct Item {
		Stored key;
		const Job* job;
	};
	std::vector<Item> items;
	items.reserve(jobs.size());
	for (const Job* j : jobs)
		items.push_back({static_cast<Stored>(key(*j)), j});
	std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
		if (a.key < b.key)
			return true;
		if (b.key < a.key)
			return false;
		if (a.job->submit_time != b.job->submit_time)
			return a.job->submit_time < b.job->submit_time;
		return a.job->id < b.job->id;
	});
	for (std::size_t i = 0; i < items.size(); ++i)
		jobs[i] = items[i].job;
}

}  // namespace dlsched

#endif
