// `count`: GPUs counted anywhere, the placement model of Tiresias' simulator with --scheme=count
// (Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19; its
// simulator's `none_placement`). A job fits whenever the nodes eligible for it have enough free GPUs
// in all, split in any way: one node when one has enough (best fit), else the freest nodes first.
// Meant for a host that ignores locality in a job's speed (dlsched-sim --placement-model count):
// on a real cluster a job split over more nodes than it needs runs slower, and `pack` waits instead.
#include "policy/builtin_policies.h"

namespace dlsched {

bool CountPlacement::place(const ClusterView&, const Job& job, int gpus, const FreeMap& free,
			   std::vector<NodeShare>& out) const
{
	return place_on_one_node(job, gpus, free, out) || place_on_freest_nodes(job, gpus, free, out);
}

}  // namespace dlsched
