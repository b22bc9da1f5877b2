// The learned policies. `dl2`: DL2's learned allocation (allocation policy `dl2`: the network gives
// jobs GPUs one unit at a time, ending the round when it chooses, so it decides which jobs run, which
// are preempted and how big elastic jobs are) over the learned ordering (ordering `dl2`: the same
// network's score of each job's first unit; it picks the window and is the order Slurm's queue
// shows). `dual-agent`: the same agent with the Gaussian-process placement agent (gp-placement).
// They register into the same PolicyRegistry as the baselines.
#ifndef DLSCHED_MODELS_LEARNED_H
#define DLSCHED_MODELS_LEARNED_H

#include <cstdint>
#include <memory>
#include <string>

#include "policy/allocation.h"
#include "policy/ordering.h"
#include "policy/registry.h"
#include "policy_model.h"
#include "util/random.h"

namespace dlsched::models {

struct LearnedOptions {
	std::size_t window = 512;  // most jobs the network looks at per cycle (ModelWindow)
	double time_scale = 1.0;   // model seconds per second of the view's clock (ModelTimeScale)
	bool sample = false;       // draw the picks from the policy (training) instead of its argmax
	std::uint64_t seed = 1;    // of the draws
	std::string path;          // where the model came from (for the host's log)
};

// DL2's ordering: jobs by the network's score of their first unit (greedy). Preemptive: running
// jobs are ranked with pending ones every cycle. Jobs beyond the window follow the window's jobs in
// the order given.
class LearnedOrdering : public Ordering {
public:
	LearnedOrdering(std::string name, std::shared_ptr<const PolicyModel> model, LearnedOptions options);
	const char* name() const override { return name_.c_str(); }
	bool preemptive() const override { return true; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override;
	std::string note() const override;

private:
	std::string name_;
	std::shared_ptr<const PolicyModel> model_;
	LearnedOptions options_;
};

// DL2's allocation: a round of unit picks (decode.h) over the window of the ordered candidates; a
// job's GPUs are the units it got, a running job that got none is requeued, one that got a different
// number is resized. Jobs the host cannot requeue keep what they hold. Jobs beyond the window get
// their first unit, in order, from what the round left. Records each round (PolicyStep) when the view
// has a recorder.
class LearnedAllocation : public Allocation {
public:
	LearnedAllocation(std::shared_ptr<const PolicyModel> model, LearnedOptions options);
	const char* name() const override { return "dl2"; }
	bool elastic() const override { return true; }
	void allocate(const AllocationInput& in, Plan& plan) const override;

private:
	std::shared_ptr<const PolicyModel> model_;
	LearnedOptions options_;
	mutable Rng rng_;
};

// The model file a policy uses when ModelFile= is empty: the shipped one.
std::string default_model_path();

// Registers the ordering and allocation `dl2` (presets dl2 and dual-agent use them; they are
// registered with the built-in policies). A model that cannot be used (missing,
// corrupt, other format or schema) makes the learned ordering fall back to ModelFallback=, with
// the reason in Ordering::note() (hosts log it).
void register_model_policies(PolicyRegistry& registry);

// Makes register_builtin_policies() add the learned policies too (dlsched-sim, the C ABI).
void install();

}  // namespace dlsched::models

extern "C" {
// The same, for C hosts (sched/dlsched). Never throws.
void dlsched_models_install(void);
}

#endif
