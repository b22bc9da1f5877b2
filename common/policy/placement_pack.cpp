// `pack`: consolidated placement, as Slurm users request GPUs (`-N1 --gres=gpu:G` for a job that fits
// on one node) and as Tiresias argues for (NSDI'19, consolidation matters for communication-heavy
// models). A job that fits on one node of its partition only ever gets one node: the one with the
// least free GPUs that still has enough (best fit, keeping big holes for big jobs); if none has, it
// waits rather than run spread out at a fraction of its speed. A larger job takes the nodes with the
// most free GPUs first (fewest nodes). Ties by node index.
#include <algorithm>

#include "policy/builtin_policies.h"

namespace dlsched {

bool place_on_one_node(const Job& job, int gpus, const FreeMap& free, std::vector<NodeShare>& out)
{
	out.clear();
	if (gpus <= 0)
		return false;
	int best = -1;
	for (std::size_t i = 0; i < free.node_count(); ++i) {
		const int f = free.free(static_cast<NodeIndex>(i));
		if (f >= gpus && (best < 0 || f < free.free(static_cast<NodeIndex>(best))) &&
		    free.eligible(job, static_cast<NodeIndex>(i)))
			best = static_cast<int>(i);
	}
	if (best < 0)
		return false;
	out.push_back({static_cast<NodeIndex>(best), gpus});
	return true;
}

bool place_on_freest_nodes(const Job& job, int gpus, const FreeMap& free, std::vector<NodeShare>& out)
{
	out.clear();
	std::vector<NodeIndex> nodes;
	int total = 0;
	for (std::size_t i = 0; i < free.node_count(); ++i) {
		const NodeIndex n = static_cast<NodeIndex>(i);
		if (free.free(n) > 0 && free.eligible(job, n)) {
			nodes.push_back(n);
			total += free.free(n);
		}
	}
	if (gpus <= 0 || total < gpus)
		return false;
	std::stable_sort(nodes.begin(), nodes.end(),
			 [&](NodeIndex a, NodeIndex b) { return free.free(a) > free.free(b); });
	int left = gpus;
	for (NodeIndex n : nodes) {
		if (left == 0)
			break;
		const int take = std::min(left, free.free(n));
		out.push_back({n, take});
		left -= take;
	}
	return true;
}

bool PackPlacement::place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
			  std::vector<NodeShare>& out) const
{
	if (place_on_one_node(job, gpus, free, out))
		return true;
	if (gpus <= 0)
		return false;
	int largest = 0;
	for (std::size_t i = 0; i < free.node_count(); ++i)
		if (free.eligible(job, static_cast<NodeIndex>(i)))
			largest = std::max(largest, view.nodes[i].gpus_total);
	if (gpus <= largest)
		return false;  // fits on one node: wait for one
	return place_on_freest_nodes(job, gpus, free, out);
}

bool SpreadPlacement::place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
			    std::vector<NodeShare>& out) const
{
	(void)view;
	out.clear();
	if (gpus <= 0 || free.eligible_free(job) < gpus)
		return false;
	// One GPU at a time to the node with the most free GPUs left (ties by index): spreads load.
	std::vector<int> left(free.node_count(), 0);
	for (std::size_t i = 0; i < free.node_count(); ++i)
		if (free.eligible(job, static_cast<NodeIndex>(i)))
			left[i] = free.free(static_cast<NodeIndex>(i));
	std::vector<int> taken(free.node_count(), 0);
	for (int g = 0; g < gpus; ++g) {
		std::size_t best = 0;
		for (std::size_t i = 1; i < left.size(); ++i)
			if (left[i] > left[best])
				best = i;
		--left[best];
		++taken[best];
	}
	for (std::size_t i = 0; i < taken.size(); ++i)
		if (taken[i] > 0)
			out.push_back({static_cast<NodeIndex>(i), taken[i]});
	return true;
}

}  // namespace dlsched
