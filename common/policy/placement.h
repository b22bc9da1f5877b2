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

}  // namespace dlsched

#endif
