// Estimates policies share: how long a job still runs at a given size.
#ifndef DLSCHED_POLICY_ESTIMATES_H
#define DLSCHED_POLICY_ESTIMATES_H

#include <cmath>

#include "model/cluster_view.h"

namespace dlsched {

// GPUs per node assumed when a policy estimates a job's speed before it is placed (packed placement):
// the first node's size, which is every node's size on homogeneous clusters.
inline int node_size_hint(const ClusterView& view)
{
	return view.nodes.empty() || view.nodes[0].gpus_total <= 0 ? 8 : view.nodes[0].gpus_total;
}

// Seconds `job` still needs at `gpus` GPUs packed on the fewest nodes, on reference GPUs. Infinite
// for gpus <= 0; 0 when the epoch time is unknown (then every job looks equally short).
inline double remaining_time(const ClusterView& view, const Job& job, int gpus)
{
	if (gpus <= 0)
		return INFINITY;
	const int per_node = node_size_hint(view);
	const int nodes = (gpus + per_node - 1) / per_node;
	return job.epochs_left() * job.epoch_time_1gpu / view.models->speedup(job.model, gpus, nodes);
}

}  // namespace dlsched

#endif
