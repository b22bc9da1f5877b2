// Allocation: how many GPUs each job gets now, and where (with the Placement policy's help).
#ifndef DLSCHED_POLICY_ALLOCATION_H
#define DLSCHED_POLICY_ALLOCATION_H

#include <vector>

#include "model/cluster_view.h"
#include "policy/free_map.h"
#include "policy/placement.h"

namespace dlsched {

// One job that runs after this cycle.
struct Assignment {
	const Job* job = nullptr;
	int gpus = 0;
	std::vector<NodeShare> placement;
};

// The complete set of jobs that run after this cycle. Scheduler::decide() turns it into actions by
// comparing it with the view: a pending job in the plan starts, a running job whose GPUs changed is
// resized, a running job missing from the plan is requeued.
using Plan = std::vector<Assignment>;

struct AllocationInput {
	const ClusterView& view;
	// Candidates, most urgent first: the pending jobs, plus the running ones when `reconsider_running`.
	const std::vector<const Job*>& ordered;
	const Placement& placement;
	// Free GPUs to plan with: the view's, plus those of the running candidates when
	// `reconsider_running` (their current placement is in Job::placement). Policies copy it.
	const FreeMap& free;
	// True when running jobs are candidates like pending ones (a preemptive ordering, or an elastic
	// allocation policy): the policy decides their size too, and may leave them out (preemption).
	bool reconsider_running = false;
	// Parallel to `ordered`, non-decreasing: jobs in different blocks differ in standing (an
	// administrator's place, the priority class). A policy that reorders jobs (deadline-autoscale)
	// does so within a block only. nullptr: one block.
	const std::vector<int>* standing = nullptr;
};

class Allocation {
public:
	virtual ~Allocation() = default;
	virtual const char* name() const = 0;

	// Whether this policy re-sizes running jobs every cycle (elastic policies: drf, optimus).
	virtual bool elastic() const { return false; }

	// Fills `plan`. When !in.reconsider_running, every running job must appear in it unchanged
	// (use keep_running()).
	virtual void allocate(const AllocationInput& in, Plan& plan) const = 0;
};

// ---- Building blocks shared by allocation policies ----

// Adds every running job to `plan` unchanged (for policies that leave running jobs alone; the view's
// FreeMap already counts their GPUs as taken).
void keep_running(const ClusterView& view, Plan& plan);

// Start pending jobs / keep running jobs greedily in `ordered` order at their requested size. A job
// that does not fit is skipped (strict = false) or ends the walk (strict = true, head-of-line
// blocking, as Slurm's sched/builtin). Running jobs in `ordered` keep their placement when they
// are kept (`free` is a copy of in.free and is updated).
void greedy_fill(const AllocationInput& in, FreeMap& free, bool strict, Plan& plan);

// Turns per-job GPU targets into a plan while moving as little as possible: jobs keeping their size
// keep their nodes, shrinking jobs keep a subset of theirs, then growing and starting jobs are placed
// in `ordered` order (a job that cannot be placed at its target tries smaller sizes down to its
// minimum when `elastic`, else waits; a running job that cannot grow stays as it is). targets[i] is
// for ordered[i]; 0 = not run. Policies that do not exploit elasticity pass elastic = false, so that
// every job runs at the size it asked for and comparisons with elastic policies are fair.
// `surplus_on_loaned`: an elastic job's GPUs beyond its minimum go to loaned inference nodes first
// (and its minimum to other nodes first), so that taking a loaned node back shrinks it (Aryl).
void realize_targets(const AllocationInput& in, const std::vector<int>& targets, FreeMap& free, Plan& plan,
		     bool elastic = true, bool surplus_on_loaned = false);

}  // namespace dlsched

#endif
