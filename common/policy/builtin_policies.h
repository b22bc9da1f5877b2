// The policies built into libdlsched. Each is defined in its own file (named after the policy) and
// registered by name in builtin.cpp; nothing outside common/policy/ needs these declarations except
// tests.
#ifndef DLSCHED_POLICY_BUILTIN_POLICIES_H
#define DLSCHED_POLICY_BUILTIN_POLICIES_H

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "policy/admission.h"
#include "policy/allocation.h"
#include "policy/gp_speed_model.h"
#include "policy/loaning.h"
#include "policy/ordering.h"
#include "policy/placement.h"
#include "policy/preemption.h"

namespace dlsched {

// ---- Orderings ----
class FifoOrdering : public Ordering {  // fifo.cpp
public:
	const char* name() const override { return "fifo"; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override;
};

class SrtfOrdering : public Ordering {  // srtf.cpp
public:
	const char* name() const override { return "srtf"; }
	bool preemptive() const override { return true; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override;
};

class TiresiasOrdering : public Ordering {  // tiresias.cpp
public:
	TiresiasOrdering(std::vector<double> thresholds, double starve_factor)
	    : thresholds_(std::move(thresholds)), starve_factor_(starve_factor)
	{
	}
	const char* name() const override { return "tiresias-las"; }
	bool preemptive() const override { return true; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override;
	// The next threshold crossing of a running job, or promotion of a starving one.
	Seconds next_change(const ClusterView& view) const override;
	// The queue a job is in now (0 = highest priority); exposed for tests.
	int queue_of(const ClusterView& view, const Job& job) const;

private:
	struct Standing;
	Standing standing(const ClusterView& view, const Job& job) const;
	int queue_for(double service) const;

	std::vector<double> thresholds_;  // attained GPU-seconds between queues, increasing
	double starve_factor_;            // 0: no promotion of starving jobs
};

class DrfOrdering : public Ordering {  // drf.cpp
public:
	const char* name() const override { return "drf"; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override;
};

class EdfOrdering : public Ordering {  // edf.cpp
public:
	const char* name() const override { return "edf"; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override;
};

// ---- Allocations ----
class RigidAllocation : public Allocation {  // rigid.cpp
public:
	explicit RigidAllocation(bool strict) : strict_(strict) {}
	const char* name() const override { return strict_ ? "rigid-strict" : "rigid"; }
	void allocate(const AllocationInput& in, Plan& plan) const override;

private:
	bool strict_;
};

class EasyBackfillAllocation : public Allocation {  // easy_backfill.cpp
public:
	explicit EasyBackfillAllocation(long max_jobs) : max_jobs_(max_jobs) {}
	const char* name() const override { return "easy-backfill"; }
	void allocate(const AllocationInput& in, Plan& plan) const override;

private:
	long max_jobs_;
};

class DrfAllocation : public Allocation {  // drf.cpp
public:
	const char* name() const override { return "drf"; }
	bool elastic() const override { return true; }
	void allocate(const AllocationInput& in, Plan& plan) const override;
};

class OptimusAllocation : public Allocation {  // optimus.cpp
public:
	const char* name() const override { return "optimus"; }
	bool elastic() const override { return true; }
	void allocate(const AllocationInput& in, Plan& plan) const override;
};

// ---- Placements ----
class PackPlacement : public Placement {  // placement_pack.cpp
public:
	const char* name() const override { return "pack"; }
	bool place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
		   std::vector<NodeShare>& out) const override;
};

class SpreadPlacement : public Placement {  // placement_pack.cpp
public:
	const char* name() const override { return "spread"; }
	bool place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
		   std::vector<NodeShare>& out) const override;
};

class CountPlacement : public Placement {  // placement_count.cpp
public:
	const char* name() const override { return "count"; }
	bool place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
		   std::vector<NodeShare>& out) const override;
};

class GpPlacement : public Placement {  // placement_gp.cpp
public:
	explicit GpPlacement(const GpSpeedParams& params = GpSpeedParams()) : model_(params) {}
	const char* name() const override { return "gp-placement"; }
	bool place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
		   std::vector<NodeShare>& out) const override;

private:
	// What the speed model was fitted to: the nodes (their GPU types and partitions) and the
	// observations. A cycle that brings no new observation reuses the fit.
	struct FitKey {
		const Node* nodes = nullptr;
		std::size_t node_count = 0;
		std::uint64_t node_hash = 0;
		const ModelCatalog* models = nullptr;
		const SpeedObservation* observations = nullptr;
		std::size_t observation_count = 0;
		SpeedObservation last;
		bool operator==(const FitKey& o) const;
	};
	// The cycle the per-cycle state (releases_) is for.
	struct CycleKey {
		std::uint64_t cycle = 0;
		Seconds now = 0;
		const Node* nodes = nullptr;
		std::size_t pending = 0, running = 0;
		const SpeedObservation* observations = nullptr;
		std::size_t observation_count = 0;
		bool operator==(const CycleKey& o) const;
	};
	// The model fitted to `view`, and this cycle's releases_: brought up to date on the first
	// place() call of a cycle. Call with mutex_ held.
	GpSpeedModel& model_for(const ClusterView& view) const;
	// Seconds from now until `node` has `gpus` GPUs free, `free_now` being free already, from when
	// its running jobs end at their predicted speeds; infinite when they never add up.
	double seconds_until_free(NodeIndex node, int gpus, int free_now) const;

	// place() is const (one policy object serves every cycle); the fitted model is a cache. The
	// mutex guards it should two threads of a host place at once.
	mutable std::mutex mutex_;
	mutable GpSpeedModel model_;
	mutable bool fitted_ = false;
	mutable FitKey fit_key_;
	mutable CycleKey cycle_key_;
	// Per node, this cycle: (seconds until a running job there ends, GPUs it frees), soonest first.
	mutable std::vector<std::vector<std::pair<double, int>>> releases_;
};

// ---- Deadlines (deadline.cpp) ----
// The standard normal quantile (DeadlineConfidence= 0.9 -> 1.28); +-infinity outside (0, 1).
double normal_quantile(double p);
// "42 s", "17.5 min", "5.2 h" (seconds below 10 min, minutes below 2 h).
std::string format_duration(double seconds);
// A job's deadline against its predicted remaining time at each size in its range, started (or kept
// running) now, with the margin z x runtime_cv; a running job's restart cost counts at other sizes.
struct DeadlineFit {
	int need = 0;       // the smallest GPU count that meets the deadline; 0: none does (or no deadline)
	int best_gpus = 0;  // the size with the shortest predicted time
	double best_time = 0;    // that time, with its margin, in seconds
	double left = INFINITY;  // seconds until the deadline
};
DeadlineFit deadline_fit(const ClusterView& view, const Job& job, double z);

class DeadlineAdmission : public Admission {
public:
	enum class Infeasible { kBestEffort, kHold, kCancel };
	DeadlineAdmission(double confidence, Infeasible on_infeasible)
	    : z_(normal_quantile(confidence)), on_infeasible_(on_infeasible)
	{
	}
	const char* name() const override { return "deadline"; }
	AdmissionVerdict admit(const ClusterView& view, const Job& job) const override;

private:
	double z_;
	Infeasible on_infeasible_;
};

class LeastSlackOrdering : public Ordering {
public:
	// `z`: DeadlineConfidence='s normal quantile. A job's slack counts its remaining time at the
	// low end of its estimate's spread (x (1 - z x runtime_cv)): a runtime nobody measured (a
	// claim, a profile) cannot buy first place by looking long against a deadline set just
	// feasible; measured jobs (a small spread) keep their slack.
	explicit LeastSlackOrdering(std::unique_ptr<Ordering> base, double z = 0)
	    : base_(std::move(base)), z_(z)
	{
	}
	const char* name() const override { return "least-slack"; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override;

private:
	std::unique_ptr<Ordering> base_;  // for the jobs without a deadline
	double z_;
};

class DeadlineAutoscaleAllocation : public Allocation {
public:
	DeadlineAutoscaleAllocation(double confidence, double urgency)
	    : z_(normal_quantile(confidence)), urgency_(urgency)
	{
	}
	const char* name() const override { return "deadline-autoscale"; }
	bool elastic() const override { return true; }
	void allocate(const AllocationInput& in, Plan& plan) const override;

private:
	double z_;
	double urgency_;  // DeadlineUrgency=
};

// ---- The no-op kinds (trivial.cpp) ----
class AdmitAll : public Admission {
public:
	const char* name() const override { return "admit-all"; }
	AdmissionVerdict admit(const ClusterView&, const Job&) const override { return {}; }
};

class NoPreemption : public Preemption {
public:
	const char* name() const override { return "none"; }
	VictimChoice select_victims(const PreemptionInput&) const override { return {}; }
};

// ---- Preemptions ----
class OverheadPreemption : public Preemption {  // preempt_overhead.cpp
public:
	OverheadPreemption(double grace, double tolerance) : grace_(grace), tolerance_(tolerance) {}
	const char* name() const override { return "overhead"; }
	VictimChoice select_victims(const PreemptionInput& in) const override;

private:
	double grace_;      // PreemptGrace
	double tolerance_;  // PreemptDelayTolerance
};

class QosPreemption : public Preemption {  // preempt_qos.cpp
public:
	QosPreemption(double kill_wait, int reorder_count)
	    : kill_wait_(kill_wait), reorder_count_(reorder_count)
	{
	}
	const char* name() const override { return "preempt-qos"; }
	VictimChoice select_victims(const PreemptionInput& in) const override;

private:
	double kill_wait_;   // KillWait: the victims' time to checkpoint
	int reorder_count_;  // Slurm's preempt_reorder_count
};

class NoLoaning : public Loaning {
public:
	const char* name() const override { return "none"; }
	void plan(const ClusterView&, std::vector<Action>&) const override {}
};

class ArylLoaning : public Loaning {  // loaning_aryl.cpp
public:
	ArylLoaning(double reclaim_timeout, int headroom) : timeout_(reclaim_timeout), headroom_(headroom) {}
	const char* name() const override { return "aryl"; }
	void plan(const ClusterView& view, std::vector<Action>& out) const override;
	// Inference nodes inference needs now: ceil(demand x inference nodes) + LoanHeadroom=.
	int inference_nodes_needed(const ClusterView& view) const;

private:
	double timeout_;  // ReclaimTimeout=
	int headroom_;    // LoanHeadroom=
};

// ---- Elastic allocation with a knapsack (mckp.cpp) ----
class MckpAllocation : public Allocation {
public:
	const char* name() const override { return "mckp"; }
	bool elastic() const override { return true; }
	void allocate(const AllocationInput& in, Plan& plan) const override;
};

}  // namespace dlsched

#endif
