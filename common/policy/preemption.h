// Preemption: which running jobs to stop so that a waiting job of a higher priority class can start
// (for non-preemptive orderings; preemptive ones such as srtf re-rank running jobs themselves).
#ifndef DLSCHED_POLICY_PREEMPTION_H
#define DLSCHED_POLICY_PREEMPTION_H

#include <vector>

#include "model/cluster_view.h"
#include "policy/free_map.h"
#include "policy/placement.h"

namespace dlsched {

struct Victim {
	const Job* job = nullptr;
	double grace = -1;  // seconds it gets to checkpoint before it is requeued anyway (< 0: PreemptGrace)
};

struct VictimChoice {
	std::vector<Victim> victims;  // to checkpoint and requeue
	// Running jobs the waiting job waits for instead: they end on their own before a victim would
	// have freed its GPUs. Not stopped; their GPUs are reserved for the waiting job.
	std::vector<const Job*> awaited;

	bool empty() const { return victims.empty() && awaited.empty(); }
};

struct PreemptionInput {
	const ClusterView& view;
	const Job& waiting;  // could not start this cycle
	// The running jobs of lower priority classes that the host can requeue and that are not
	// stopping already, in the view's order, and each one's priority class (classes[i]).
	const std::vector<const Job*>& candidates;
	const std::vector<int>& classes;
	// The cluster after this cycle's starts, the GPUs of stopping jobs counted free, those earlier
	// waiting jobs were given taken.
	const FreeMap& free;
	const Placement& placement;  // where the waiting job would go (the Scheduler's)
};

class Preemption {
public:
	virtual ~Preemption() = default;
	virtual const char* name() const = 0;

	// Returns jobs whose GPUs, freed, let the waiting job be placed (empty: preempt nothing, for
	// instance when nothing would make it fit).
	virtual VictimChoice select_victims(const PreemptionInput& in) const = 0;
};

}  // namespace dlsched

#endif
