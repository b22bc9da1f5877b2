// FreeMap: free GPUs per node during one cycle's planning, and which nodes a job may use.
#ifndef DLSCHED_POLICY_FREE_MAP_H
#define DLSCHED_POLICY_FREE_MAP_H

#include <vector>

#include "model/cluster_view.h"

namespace dlsched {

class FreeMap {
public:
	// Free GPUs as the view reports them (running jobs hold theirs).
	explicit FreeMap(const ClusterView& view);

	const ClusterView& view() const { return *view_; }
	int free(NodeIndex node) const { return free_[node]; }
	int total_free() const { return total_free_; }
	std::size_t node_count() const { return free_.size(); }

	// Whether `job` may run on `node`: node up, and in one of the job's partitions (lists "a,b" on
	// either side; an empty partition means any training node or a node loaned to training).
	bool eligible(const Job& job, NodeIndex node) const;
	// Free GPUs on the nodes eligible for `job`.
	int eligible_free(const Job& job) const;
	// Free GPUs a job of the default training partition may use: training nodes and loaned ones
	// (total_free() counts inference nodes' GPUs too).
	int training_free() const;

	// Allocate / return GPUs. take() of more than is free is a programming error (asserted).
	void take(const std::vector<NodeShare>& shares);
	void release(const std::vector<NodeShare>& shares);

private:
	const ClusterView* view_;
	std::vector<int> free_;
	int total_free_ = 0;
};

}  // namespace dlsched

#endif
