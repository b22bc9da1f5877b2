// A round of DL2-style decisions, decoded from an order of the window's rows.
//
// DL2 (Peng et al., "DL2: A Deep Learning-driven Scheduler for Deep Learning Clusters", IEEE TPDS
// 2021) lets the policy pick, one action at a time, a job to give one more unit of resources, with
// invalid actions masked, until it ends the round. With a score per row, picking the next row by a
// softmax over the valid rows is the same as sorting the rows by score plus Gumbel noise and taking
// them in that order, skipping rows that no longer fit (Luce's choice axiom): so the policy samples
// an order once per round, and decode_round() recovers the decisions and their masks from it.
//
// Two changes from DL2, both to spend the gradient only on decisions that matter:
//  - no "end the round" action while a job still fits: leaving GPUs idle with a job waiting that
//    fits never shortens any job's completion (rigid jobs cannot use them later in the round);
//  - once every row still valid fits together in what is left, the round is decided (they all run,
//    in whatever order): those picks are not decisions and are not recorded.
#ifndef DLSCHED_MODELS_DECODE_H
#define DLSCHED_MODELS_DECODE_H

#include <cstddef>
#include <vector>

namespace dlsched::models {

struct DecodedRound {
	std::vector<int> chosen;  // rows picked while the choice mattered, in order
	std::vector<int> left;    // GPUs left before each of those picks
	std::vector<int> started; // every row that gets its GPUs this round (chosen ones and the rest)
};

// `need[r]`: GPUs row r takes; `free_gpus`: GPUs to hand out; `order`: a permutation of the rows.
// At most `max_decisions` picks are recorded in `chosen` (the rest of the round still follows the
// order, into `started`).
DecodedRound decode_round(const std::vector<int>& need, int free_gpus, const std::vector<int>& order,
                          std::size_t max_decisions);

}  // namespace dlsched::models

#endif
