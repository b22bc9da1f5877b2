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
#include <unordered_map>
#include <vector>

#include "model/cluster_view.h"

namespace dlsched::models {

inline constexpr int kFeatureSchema = 2;
inline constexpr int kJobFeatures = 16;  // what a row says about its job
inline constexpr int kUnitFeatures = 8;  // what it says about its unit of GPUs
inline constexpr int kRowFeatures = kJobFeatures + kUnitFeatures;
inline constexpr int kContextFeatures = 4;
// Most further units an elastic job gets rows for (a job may grow by at most this many units a round).
inline constexpr int kMaxExtraUnits = 8;

// Names of the row features in order (for model cards, dlsched-train info and tests).
const char* job_feature_name(int i);  // i < kRowFeatures: the job's, then the unit's
const char* context_feature_name(int i);

// One cycle's window, encoded. A row is an allocation unit (DL2's action "give this job one more
// unit"): each job's first unit (first_unit_gpus), then, with `units`, one row per further unit of
// an elastic job (one GPU; one node's worth when its minimum spans nodes) up to kMaxExtraUnits, and
// the end-of-round row. Without `units` (an ordering), only first units.
struct EncodedWindow {
	std::vector<const Job*> jobs;  // per row: its job (nullptr: the end row)
	std::vector<float> x;          // rows() x kRowFeatures, row-major
	std::vector<float> context;    // kContextFeatures
	std::vector<int> need;         // GPUs each row takes when picked
	std::vector<int> unit;         // 0 first unit, k > 0 further unit k, -1 end of round
	std::vector<int> after;        // the row that must be picked first (the previous unit), or -1
	std::vector<int> size;         // the job's GPUs once the row is picked
	int end_row = -1;              // the end-of-round row, or -1 (no units)
	int free_gpus = 0;             // GPUs the round hands out
	std::size_t rows() const { return jobs.size(); }
};

// GPUs a job's first unit is: the size it asked for (within its minimum and maximum). Slurm jobs ask
// for a size; an elastic job's minimum (often 1 GPU) is where it may be shrunk to, not where it
// should start.
int first_unit_gpus(const Job& job);
// GPUs one further unit of `job` is: one node's worth when its first unit spans a node, else one GPU.
int unit_gpus(const ClusterView& view, const Job& job);

// Chooses the window among `candidates` (running jobs first, by id, then the others in the order
// given, up to `max_jobs` jobs) and encodes it. `free_gpus`: GPUs the round hands out (free GPUs,
// plus the running candidates' when they are reconsidered). The rest of the candidates are returned
// in `rest`, in their given order. Further units only for elastic jobs that may change size (pending
// or requeueable). `time_scale`: seconds of the model's time per second of the view's clock (ModelTimeScale=;
// on an emulated cluster replaying a trace N times faster, N): every time feature is in hours of the
// model's time, so that a compressed replay looks to the network as the trace it was trained on.
EncodedWindow encode_window(const ClusterView& view, const std::vector<const Job*>& candidates, int free_gpus,
			    std::size_t max_jobs, std::vector<const Job*>& rest, bool units,
			    double time_scale = 1.0);

// The PolicyStep of a round over window `w` with `picks` (rows, in the order picked): the encoded
// window, the view's time and cycle, and the jobs in the system. The caller adds what only it knows
// (sampled, log_prob, value). One definition for the learned policy, the teachers and the sacct
// reader.
PolicyStep make_step(const ClusterView& view, EncodedWindow w, std::vector<int> picks);

// The picks that give each job of `w` the GPUs in `sizes` (job id -> GPUs; absent or 0: none), as a
// teacher's label: first units in `rank` order (job id -> rank, lower first; absent: last), then
// further units by the remaining time they save (most first), then the end row when it is valid.
// A size between units is rounded down to a unit.
std::vector<int> picks_for_sizes(const ClusterView& view, const EncodedWindow& w,
				 const std::unordered_map<JobId, int>& sizes,
				 const std::unordered_map<JobId, std::size_t>& rank);

// One job's job features (exposed for tests). `user_gpus`: GPUs the job's user holds now;
// `total_gpus`: the view's total_gpus().
void encode_job(const ClusterView& view, const Job& job, int user_gpus, int free_gpus, int total_gpus,
		float* out, double time_scale = 1.0);

// A unit row's unit features: the job reaches `size_after` GPUs from `size_before` (0: its first unit).
void encode_unit(const ClusterView& view, const Job& job, int size_before, int size_after, float* out,
		 double time_scale = 1.0);

}  // namespace dlsched::models

#endif
