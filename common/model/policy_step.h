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
	int schema = 0;  // feature-schema version the rows were encoded with
	// Rows are allocation units (DL2's actions): a job's first unit (its minimum GPUs), each further
	// unit of an elastic job (one GPU, or one node's worth for multi-node jobs), and one row that
	// ends the round.
	int rows = 0;                // rows in the window
	int features = 0;            // features per row
	std::vector<float> x;        // rows x features, row-major
	std::vector<float> context;  // cluster-level features
	std::vector<JobId> ids;      // job of each row (0: the end-of-round row)
	std::vector<int> need;       // GPUs a row takes when picked (the end row: 0)
	std::vector<int> unit;       // 0: a job's first unit; k > 0: its k-th further unit; -1: end of round
	std::vector<int> after;      // the row that must be picked before this one (the previous unit), or -1
	std::vector<int> size;       // GPUs the job has once this row is picked (the end row: 0)
	std::vector<int> held;       // GPUs the row's job holds now (0: pending)
	int free_gpus = 0;           // GPUs the round hands out (running jobs' GPUs included)
	std::vector<int>
		order;  // the rows picked, in order (a round ends at the end row or when nothing is valid)
	bool sampled = false;  // picks drawn from the policy (training), not its argmax
	double log_prob = 0;   // log-probability of the recorded picks under the policy
	double value = 0;      // the value network's estimate of the state
	int in_system = 0;  // pending + running jobs: the reward is -in_system x seconds until the next cycle
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
