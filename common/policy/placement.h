// Placement: which nodes a job's GPUs come from (filter + score).
#ifndef DLSCHED_POLICY_PLACEMENT_H
#define DLSCHED_POLICY_PLACEMENT_H

#include <vector>

#include "model/cluster_view.h"
#include "policy/free_map.h"

namespace dlsched {

class Placement {
public:
	virtual ~Placement() = default;
	virtual const char* name() const = 0;

	// Chooses `gpus` free GPUs for `job` on nodes eligible for it. Returns false (and leaves `out`
	// empty) when they cannot be found. Does not modify `free`; the caller takes the shares.
	virtual bool place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
			   std::vector<NodeShare>& out) const = 0;
};

// ---- Building blocks shared by placement policies (placement_pack.cpp) ----

// `gpus` GPUs on one node: the eligible node with the fewest free GPUs that still has them (best
// fit; ties by index). False (and `out` empty) when no node has them.
bool place_on_one_node(const Job& job, int gpus, const FreeMap& free, std::vector<NodeShare>& out);

// `gpus` GPUs from the eligible nodes with the most free first (fewest nodes; ties by index). False
// (and `out` empty) when they do not have that many in all.
bool place_on_freest_nodes(const Job& job, int gpus, const FreeMap& free, std::vector<NodeShare>& out);

}  // namespace dlsched

#endif
