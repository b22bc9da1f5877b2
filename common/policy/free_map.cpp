#include "policy/free_map.h"

#include <cassert>

#include "model/partition_list.h"

namespace dlsched {

FreeMap::FreeMap(const ClusterView& view) : view_(&view)
{
	free_.reserve(view.nodes.size());
	for (const Node& n : view.nodes) {
		free_.push_back(n.gpus_free);
		total_free_ += n.gpus_free;
	}
}

bool FreeMap::eligible(const Job& job, NodeIndex node) const
{
	const Node& n = view_->nodes[node];
	if (!n.up)
		return false;
	// A loaned node may be taken back within ReclaimTimeout=: only jobs the host can requeue go there.
	if (n.loaned && !job.requeueable)
		return false;
	if (job.partition.empty())
		return n.kind == PartitionKind::kTraining || n.loaned;
	// A loaned inference node serves training jobs of any training partition. A job submitted to
	// several partitions (-p a,b) may use a node of any of them, and a node in several partitions
	// serves the jobs of each.
	return partitions_overlap(n.partition, job.partition) || n.loaned;
}

int FreeMap::eligible_free(const Job& job) const
{
	int n = 0;
	for (std::size_t i = 0; i < free_.size(); ++i)
		if (free_[i] > 0 && eligible(job, static_cast<NodeIndex>(i)))
			n += free_[i];
	return n;
}

int FreeMap::training_free() const
{
	static const Job kDefault;
	return eligible_free(kDefault);
}

void FreeMap::take(const std::vector<NodeShare>& shares)
{
	for (const NodeShare& s : shares) {
		assert(s.node < free_.size() && free_[s.node] >= s.gpus);
		free_[s.node] -= s.gpus;
		total_free_ -= s.gpus;
	}
}

void FreeMap::release(const std::vector<NodeShare>& shares)
{
	for (const NodeShare& s : shares) {
		assert(s.node < free_.size());
		free_[s.node] += s.gpus;
		total_free_ += s.gpus;
	}
}

}  // namespace dlsched
