// Scheduler: one policy of each kind, composed from dlsched.conf, and the one decide() call that
// slurmctld's plugins, dlsched-sim and dlsched-train all make.
#ifndef DLSCHED_POLICY_SCHEDULER_H
#define DLSCHED_POLICY_SCHEDULER_H

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/cluster_view.h"
#include "model/decisions.h"
#include "policy/fairness.h"
#include "policy/free_map.h"
#include "policy/registry.h"
#include "util/status.h"

namespace dlsched {

class Scheduler {
public:
	// Builds the scheduler the configuration names: the preset `Policy=` gives one policy of each
	// kind, and `OrderingPolicy=`, `AllocationPolicy=`, ... override single kinds.
	static Result<std::unique_ptr<Scheduler>> create(const Config& config,
							 const PolicyRegistry& registry);

	// Decides one cycle. Deterministic: the same view and configuration give the same decisions.
	// Does not throw for valid views (hosts still catch: see capi/).
	Decisions decide(const ClusterView& view) const;

	const std::string& preset_name() const { return preset_; }
	const SchedulerSpec& spec() const { return spec_; }
	const Ordering& ordering() const { return *ordering_; }
	const Allocation& allocation() const { return *allocation_; }
	const Placement& placement() const { return *placement_; }
	// What the policies ask the host to log once (a learned policy's fallback, and why).
	std::string notes() const { return ordering_->note(); }
	// The heuristic a learned ordering fell back to, or empty.
	std::string fallback() const { return ordering_->fallback(); }
	// The job's priority class from its QoS (PriorityQos=): 0 for every QoS not listed, then 1, 2,
	// ... up to the first one listed. A higher class goes first and may preempt lower ones.
	int priority_class(const Job& job) const;
	FairnessKind fairness() const { return fairness_; }

private:
	Scheduler() = default;

	// decide() after the Loaning policy's decisions are applied to the view.
	Decisions decide_jobs(const ClusterView& view) const;

	std::string preset_;
	SchedulerSpec spec_;
	std::unique_ptr<Ordering> ordering_;
	std::unique_ptr<Allocation> allocation_;
	std::unique_ptr<Placement> placement_;
	std::unique_ptr<Admission> admission_;
	std::unique_ptr<Preemption> preemption_;
	std::unique_ptr<Loaning> loaning_;
	std::vector<std::string> priority_qos_;  // PriorityQos=, highest class first
	double deadline_z_ = 0;                  // DeadlineConfidence='s normal quantile
	FairnessKind fairness_ = FairnessKind::kNone;
	double quota_reclaim_timeout_ = 0;  // QuotaReclaimTimeout=
	double preempt_grace_ = 0;          // PreemptGrace=: what a reclaimed job gets to checkpoint
	double resize_payback_ = 0;         // ResizePayback=

	// Whether a running job's current run is too short to be resized or moved: it has not yet run
	// ResizePayback= times what a restart loses it (checkpoint write + resume, the requeue delay
	// included: PreemptionCost::restart_loss()). Requeues are not affected (see decide_jobs()).
	bool too_young_to_resize(const ClusterView& view, const Job& running) const;

	// Deadline work a waiting job of a higher class may not stop (doc/admin-guide.md, "Priority
	// classes and deadlines"): `running` meets its deadline at its size, and its slack does not
	// absorb being stopped for `waiting` (its suspend + resume + the waiting job's run). Returns
	// the slack and the delay when protected.
	bool protects(const ClusterView& view, const Job& running, const Job& waiting,
		      double* slack = nullptr, double* delay = nullptr) const;
	// The squeue reason of a waiting job held back by deadline work it may not stop (empty: none).
	std::string protected_reason(const ClusterView& view, const Job& waiting,
				     const std::vector<const Job*>& running) const;

	// Waiting jobs of a higher class preempt running jobs of lower classes (the Preemption
	// policy); appends the requeues and reserves the GPUs it frees in `after`.
	void preempt_for(const ClusterView& view, const std::vector<const Job*>& waiting, FreeMap& after,
			 std::vector<Action>& actions) const;
	// FairnessPolicy=quota: waiting jobs within their account's quota
	// (`guaranteed`), in order, take borrowed GPUs back (policy/fairness.h); appends the requeues
	// and reserves the GPUs in `after`.
	// `moved`: running jobs the plan resizes (not victims).
	void reclaim_for(const ClusterView& view, const std::vector<const Job*>& waiting,
			 const std::unordered_set<JobId>& guaranteed, FreeMap& after,
			 std::vector<Action>& actions, std::unordered_set<JobId> moved = {}) const;
	// FairnessPolicy=quota, a view with accounts: a kAdmission action (kWait) for each waiting job
	// with an account and no other verdict, saying why it waits (hosts show it: squeue's reason): its
	// account over its quota (it only borrows idle GPUs), or within it and waiting for borrowed GPUs to
	// come back, or for the reclaim under way for it.
	void explain_quota_waits(const ClusterView& view, const std::vector<const Job*>& waiting,
				 const std::unordered_set<JobId>& guaranteed,
				 std::vector<Action>& actions) const;
	// A kAdmission action (kWait) with the reason a waiting job of a higher class cannot take the
	// GPUs of the deadline work it is held back by, when those GPUs would let it be placed.
	void explain_wait(const ClusterView& view, const Job& waiting, const FreeMap& after,
			  const std::vector<const Job*>& running, std::vector<Action>& actions) const;
};

}  // namespace dlsched

#endif
