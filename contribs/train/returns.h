// The reinforcement-learning maths of dlsched-train, apart from the commands so that it is tested
// on hand-computed episodes (testsuite/unit/test_train_returns.cpp): rewards, discounted returns,
// the sibling-rollout baseline and normalisation. Plain C++, no libtorch.
#ifndef DLSCHED_TRAIN_RETURNS_H
#define DLSCHED_TRAIN_RETURNS_H

#include <cstddef>
#include <vector>

#include "model/policy_step.h"

namespace dlsched::train {

struct Reward {
	double preemption_penalty_s = 120;  // one job's seconds charged per running job the round drops
	double resize_penalty_s =
		120;  // ... per running job the round gives another size (a checkpoint and requeue)
	double horizon_s = 14400;  // discount: exp(-dt / horizon) over dt seconds
};

// What a recorded round does to running jobs: those that get no unit are preempted; those whose
// units reach another size than they hold are resized.
struct RoundChanges {
	std::size_t preempted = 0;
	std::size_t resized = 0;
};
RoundChanges round_changes(const PolicyStep& step);

// A round's reward, in job-hours (negative): minus the jobs in the system x the `dt` seconds until
// the next round (Little's law: the sum over rounds is minus the total JCT), minus the penalties.
double round_reward(const PolicyStep& step, double dt, const Reward& r);

// Discounted returns of one episode's steps, which ends at `end` (the makespan).
std::vector<double> episode_returns(const std::vector<PolicyStep>& steps, Seconds end, const Reward& r);

// The discounted return from time `t` of an episode whose steps have the returns `ret`: the jobs in
// the system from t to the next step, then that step's return.
double return_at(const std::vector<PolicyStep>& steps, const std::vector<double>& ret, Seconds end, Seconds t,
		 double horizon_s);

// One episode of a group of rollouts of the same workload: its steps, returns and end.
struct Rollout {
	const std::vector<PolicyStep>* steps = nullptr;
	const std::vector<double>* ret = nullptr;
	Seconds end = 0;
};

// Each step's advantage in rollout `i` of `group`: its return minus the mean of the other rollouts'
// returns from the same time (the sibling baseline; same arrivals, so the difference is mostly what
// the policy did). Needs at least 2 rollouts (else the advantages are the returns).
std::vector<double> sibling_advantages(const std::vector<Rollout>& group, std::size_t i, double horizon_s);

// Sample standard deviation (1 below 2 values; never below 1e-6).
double stddev(const std::vector<double>& v);

// (v - mean) / stddev, in place.
void normalise(std::vector<double>& v);

}  // namespace dlsched::train

#endif
