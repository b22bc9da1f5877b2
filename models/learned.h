// The learned policies: `dl2` (DL2's learned ordering, with the allocation of every unit of GPUs
// decided in that order) and `dual-agent` (the same ordering agent with the Gaussian-process
// placement agent, gp-placement). They register into the same PolicyRegistry as the baselines.
#ifndef DLSCHED_MODELS_LEARNED_H
#define DLSCHED_MODELS_LEARNED_H

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "policy/ordering.h"
#include "policy/registry.h"
#include "policy_model.h"

namespace dlsched::models {

struct LearnedOptions {
	std::size_t window = 512;   // most jobs the network looks at per cycle (ModelWindow)
	bool sample = false;        // draw the order from the policy (training) instead of its argmax
	std::uint64_t seed = 1;     // of the draws
	std::size_t max_decisions = 64;  // decisions per round recorded for training
	std::string path;           // where the model came from (for the host's log)
};

// DL2's ordering agent. Preemptive: running jobs are ranked with pending ones every cycle, and a
// running job that no longer makes the cut is checkpointed and requeued. Jobs beyond the window
// follow the window's jobs in arrival order.
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
	mutable std::mt19937_64 rng_;
};

// The model file a policy uses when ModelFile= is empty: the shipped one.
std::string default_model_path();

// Registers `dl2`, `dual-agent` (policies and presets). A model that cannot be used (missing,
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
