// PolicyStep: what a learned policy saw and chose in one scheduling cycle, handed to a
// DecisionRecorder when the host installs one (dlsched-train records trajectories in the simulator;
// sched/dlsched records its experience for online fine-tuning). Plain data: no libtorch here.
#ifndef DLSCHED_MODEL_POLICY_STEP_H
#define DLSCHED_MODEL_POLICY_STEP_H

#include <cstdint>
#include <utility>
#include <vector>

#include "model/types.h"

namespace dlsched {

struct PolicyStep {
	std::uint64_t cycle = 0;
	Seconds now = 0;
	int schema = 0;               // feature-schema version the rows were encoded with
	int rows = 0;                 // jobs in the window
	int features = 0;             // features per job
	std::vector<float> x;         // rows x features, row-major
	std::vector<float> context;   // cluster-level features
	std::vector<JobId> ids;       // job of each row
	std::vector<int> need;        // GPUs a row takes when chosen (running: what it holds)
	int free_gpus = 0;            // GPUs the round hands out (running jobs' GPUs included)
	std::vector<int> order;       // rows in the order the policy chose, a permutation of 0..rows-1
	bool sampled = false;         // order drawn from the policy (training), not its argmax
	double log_prob = 0;          // log-probability of the order's chosen prefix under the policy
	double value = 0;             // the value network's estimate of the state
	int in_system = 0;            // pending + running jobs: the reward is -in_system x seconds until the next cycle
};

class DecisionRecorder {
public:
	virtual ~DecisionRecorder() = default;
	virtual void record(PolicyStep step) = 0;
};

// Keeps every step, in order (one decide() call, one simulated run).
class StepLog : public DecisionRecorder {
public:
	void record(PolicyStep step) override { steps.push_back(std::move(step)); }
	std::vector<PolicyStep> steps;
};

}  // namespace dlsched

#endif
