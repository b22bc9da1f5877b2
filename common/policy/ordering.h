// Ordering: which job goes first (queue sort, in the Kubernetes scheduler framework's words).
#ifndef DLSCHED_POLICY_ORDERING_H
#define DLSCHED_POLICY_ORDERING_H

#include <algorithm>
#include <string>
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

	// Something the host should log once about this policy (a learned policy that fell back to a
	// heuristic says why); empty when there is nothing to say.
	virtual std::string note() const { return {}; }
};

// Sorts jobs by a numeric key (lower first), computing each key once; ties by submit time, then id.
template <class KeyFn>
void sort_by_key(std::vector<const Job*>& jobs, KeyFn key)
{
	struct Item {
		double key;
		const Job* job;
	};
	std::vector<Item> items;
	items.reserve(jobs.size());
	for (const Job* j : jobs)
		items.push_back({static_cast<double>(key(*j)), j});
	std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
		if (a.key != b.key)
			return a.key < b.key;
		if (a.job->submit_time != b.job->submit_time)
			return a.job->submit_time < b.job->submit_time;
		return a.job->id < b.job->id;
	});
	for (std::size_t i = 0; i < items.size(); ++i)
		jobs[i] = items[i].job;
}

}  // namespace dlsched

#endif
