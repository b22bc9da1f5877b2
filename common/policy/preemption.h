// Preemption: which running jobs to stop for a waiting one, for non-preemptive orderings.
#ifndef DLSCHED_POLICY_PREEMPTION_H
#define DLSCHED_POLICY_PREEMPTION_H

#include <vector>

#include "model/cluster_view.h"
#include "policy/free_map.h"

namespace dlsched {

class Preemption {
public:
	virtual ~Preemption() = default;
	virtual const char* name() const = 0;

	// `waiting` is the most urgent pending job that the plan could not start; `candidates` are the
	// running jobs ranked below it. Returns the jobs to checkpoint and requeue so that `waiting` can
	// start once they have stopped (empty: preempt nothing). `free` is the plan's free map.
	virtual std::vector<const Job*> select_victims(const ClusterView& view, const Job& waiting,
	                                               const std::vector<const Job*>& candidates,
	                                               const FreeMap& free) const = 0;
};

}  // namespace dlsched

#endif
