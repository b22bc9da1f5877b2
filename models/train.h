// Training the policy and value networks: supervised warm-up on a teacher's decisions, PPO in the
// simulator, and advantage-weighted regression on a live cluster's logged experience. The data are
// PolicySteps (model/policy_step.h), decoded into DL2's sequence of picks (decode.h); the networks
// see them through libtorch here and nowhere else.
#ifndef DLSCHED_MODELS_TRAIN_H
#define DLSCHED_MODELS_TRAIN_H

#include <cstdint>
#include <memory>
#include <vector>

#include "model/policy_step.h"
#include "policy_model.h"
#include "util/random.h"

namespace dlsched::models {

// One recorded round, decoded for training.
struct Sample {
	PolicyStep step;
	std::vector<int> chosen;    // the picks that were decisions (decode_round)
	std::vector<int> left;      // GPUs left before each
	std::vector<int> seq;       // each one's place among all the round's picks
	std::vector<int> pos;       // per row: its place among the picks (the number of picks: never)
	std::vector<float> old_lp;  // log-probability of each pick when it was made (PPO)
	float advantage = 0;
	float ret = 0;  // return the value network is fitted to
	float weight = 1;
};

// Decodes `step` (its picks, rows and free GPUs) into a Sample; false when the round had no
// decision in it (every pick was the only valid row) or the step is not of this feature schema.
bool make_sample(PolicyStep step, std::size_t max_decisions, Sample& out);

struct TrainOptions {
	double lr = 3e-4;
	std::size_t batch = 64;
	double clip = 0.2;      // PPO ratio clip
	double entropy = 0.01;  // entropy bonus
	double value_coef = 0.5;
	double awr_beta = 1.0;  // advantage-weighted regression temperature
	double max_grad_norm = 1.0;
	double target_kl = 0.01;  // PPO: stop the update once the policy moved this far (approx. KL per pick)
};

struct TrainStats {
	double policy_loss = 0;
	double value_loss = 0;
	double entropy = 0;
	double kl = 0;                    // PPO: approximate KL from the sampling policy, per pick
	bool stopped = false;             // PPO: the epoch stopped early at target_kl
	double first_pick_agreement = 0;  // supervised: how often the model's top pick is the teacher's
	std::size_t decisions = 0;
};

class Trainer {
public:
	Trainer(std::shared_ptr<PolicyModel> model, TrainOptions options, std::uint64_t seed);
	~Trainer();

	// One pass over `data` in shuffled minibatches, maximising the likelihood of the recorded picks
	// (DL2's supervised warm-up; the value network is fitted to `ret` too when `fit_value`).
	TrainStats supervised_epoch(std::vector<Sample>& data, bool fit_value);
	// Fills each sample's old_lp with the current policy's log-probabilities (before PPO epochs).
	void record_log_probs(std::vector<Sample>& data);
	// The value network's estimates of the samples' states.
	std::vector<float> values(const std::vector<Sample>& data);
	// One PPO epoch (clipped ratio per pick, the round's advantage shared by its picks).
	TrainStats ppo_epoch(std::vector<Sample>& data);
	// One epoch of advantage-weighted regression (Peng et al. 2019): supervised on the logged picks,
	// weighted by exp(advantage / beta) - for logged greedy decisions, which PPO cannot use.
	TrainStats awr_epoch(std::vector<Sample>& data);

	void set_learning_rate(double lr);

private:
	struct State;
	std::unique_ptr<State> s_;
};

}  // namespace dlsched::models

#endif
