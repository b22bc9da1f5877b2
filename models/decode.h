// A round of DL2-style allocation decisions over a window of unit rows (features.h).
//
// DL2 (Peng et al., "DL2: A Deep Learning-driven Scheduler for Deep Learning Clusters", IEEE TPDS
// 2021) lets the policy pick, one action at a time, a job to give one more unit of resources, with
// invalid actions masked, until it picks "end the round". Here every action is a row: a job's first
// unit (the size it asked for), each further unit of an elastic job, and the end row. A row is valid while
//  - it is not picked yet and its GPUs fit in what is left,
//  - the row before it (the job's previous unit) is picked, and
//  - for the end row: no job's first unit fits any more. Leaving GPUs idle while a waiting job fits
//    never shortens a completion (a change from DL2: the gradient is spent on decisions that matter);
//    with elastic jobs, ending the round instead of growing one is a decision.
// Each pick is a softmax over the valid rows' scores (sampling) or their argmax (greedy).
#ifndef DLSCHED_MODELS_DECODE_H
#define DLSCHED_MODELS_DECODE_H

#include <cstddef>
#include <vector>

#include "util/random.h"

namespace dlsched::models {

// What a round is played on: per row, GPUs it takes, its unit (0 first, > 0 further, -1 end) and
// the row that must be picked before it (-1: none).
struct RoundRows {
	const std::vector<int>& need;
	const std::vector<int>& unit;
	const std::vector<int>& after;
	int free_gpus = 0;
};

// The state of a round while rows are picked.
class Round {
public:
	explicit Round(const RoundRows& rows);
	bool valid(std::size_t r) const;
	// Whether some first unit fits (then the end row is not valid).
	bool first_fits() const;
	// Picks `r`; false (and nothing changes) when it is not valid.
	bool pick(std::size_t r);
	bool ended() const { return ended_; }
	int left() const { return left_; }
	std::size_t valid_count() const;

private:
	const RoundRows& rows_;
	std::vector<bool> taken_;
	int left_;
	bool ended_ = false;
};

// Plays a round with `scores`: each pick the argmax of the valid rows (rng == nullptr) or a draw
// from their softmax. Returns the rows picked, in order (ending with the end row when it was picked).
// `log_prob` (optional): the log-probability of the picks. Greedy without log_prob runs in
// O(rows log rows) (a heap; the decisions are the same), else O(rows x picks).
std::vector<int> play_round(const RoundRows& rows, const std::vector<float>& scores, Rng* rng,
			    double* log_prob);

// The decisions in a recorded round, for training.
struct DecodedRound {
	std::vector<int> chosen;  // the picks that were decisions (more than one valid row), in order
	std::vector<int> left;    // GPUs left before each
	std::vector<int> seq;     // each one's place among all the picks
	std::vector<int> pos;     // per row: its place among the picks, or the number of picks (never)
};

// Replays `picks`; stops at the first invalid one (a label the rules do not allow ends there). At
// most `max_decisions` decisions are kept.
DecodedRound decode_round(const RoundRows& rows, const std::vector<int>& picks, std::size_t max_decisions);

}  // namespace dlsched::models

#endif
