// Feature encoding of a scheduling cycle for the learned policies (DL2's "state"): one row of numbers
// per job in a bounded window, plus a few cluster-level numbers. Plain C++ (no libtorch), so that the
// encoding is tested, and used by tools, without the network.
//
// The schema is versioned: a model stores the schema it was trained with, and a model trained on
// another schema is refused (the policy falls back; see learned.h). Change kFeatureSchema whenever a
// feature's meaning, order or scale changes.
#ifndef DLSCHED_MODELS_FEATURES_H
#define DLSCHED_MODELS_FEATURES_H

#include <cstddef>
#include <vector>

#include "model/cluster_view.h"

namespace dlsched::models {

inline constexpr int kFeatureSchema = 1;
inline constexpr int kJobFeatures = 16;
inline constexpr int kContextFeatures = 4;

// Names of the job features in row order (for model cards, dlsched-train --explain and tests).
const char* job_feature_name(int i);
const char* context_feature_name(int i);

// One cycle's window, encoded.
struct EncodedWindow {
	std::vector<const Job*> jobs;  // the window's jobs, row order
	std::vector<float> x;          // jobs.size() x kJobFeatures, row-major
	std::vector<float> context;    // kContextFeatures
	std::vector<int> need;         // GPUs each row takes when chosen (gpus_min: the first unit)
	int free_gpus = 0;             // GPUs the round hands out
	std::size_t rows() const { return jobs.size(); }
};

// Chooses the window among `candidates` (running jobs first, by id, then the others in the order
// given, up to `max_rows`) and encodes it. `free_gpus`: GPUs the round hands out (free GPUs, plus
// the running candidates' when they are reconsidered). The rest of the candidates are returned in
// `rest`, in their given order.
EncodedWindow encode_window(const ClusterView& view, const std::vector<const Job*>& candidates, int free_gpus,
                            std::size_t max_rows, std::vector<const Job*>& rest);

// The PolicyStep of a round over window `w` decided in `order` (rows, first chosen first): the
// encoded window, the view's time and cycle, and the jobs in the system. The caller adds what only
// it knows (sampled, log_prob, value). One definition for the learned policy, the teacher recorder
// and the sacct reader.
PolicyStep make_step(const ClusterView& view, EncodedWindow w, std::vector<int> order);

// One job's row (exposed for tests). `user_gpus`: GPUs the job's user holds now; `total_gpus`: the
// view's total_gpus().
void encode_job(const ClusterView& view, const Job& job, int user_gpus, int free_gpus, int total_gpus, float* out);

}  // namespace dlsched::models

#endif
