// ModelCatalog: the per-model performance knowledge every policy and the simulator share.
//
// A model profile says how a model's training throughput scales with the number of GPUs (and how many
// nodes they span), measured on real hardware (bundled Pollux profiles), and how fast it runs on each
// GPU type (bundled Gavel throughputs). Policies never read files: hosts load a catalog once and pass
// it in every ClusterView.
#ifndef DLSCHED_MODEL_MODEL_CATALOG_H
#define DLSCHED_MODEL_MODEL_CATALOG_H

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace dlsched {

// One measured (or derived) point of a scaling curve.
struct ScalingPoint {
	int gpus = 1;
	int nodes = 1;
	double speedup = 1.0;  // throughput at (gpus, nodes) / throughput on 1 GPU
};

struct ModelProfile {
	std::string name;                         // "cifar10", "bert", ...
	std::vector<ScalingPoint> points;         // at least (1 GPU, 1 node, 1.0)
	std::map<std::string, double> gpu_speed;  // GPU type -> throughput relative to the reference type
	double checkpoint_mb = 0;                 // model + optimizer state size (restart cost)
	double samples_per_s_1gpu = 0;            // measured throughput on one reference GPU
	double samples_per_epoch = 0;             // dataset size of the reference run
	double reference_epochs = 0;              // epochs the reference run trained
	double sample_kb = 0;                     // storage bytes read per sample / 1000 (data rate)
	std::string source;                       // where the numbers came from (attribution)
};

class ModelCatalog {
public:
	// The maximum GPU count speedup() tabulates; larger counts use the value at kMaxGpus.
	static constexpr int kMaxGpus = 1024;

	// Adds a profile and returns its index. Re-adding a name replaces it. Tabulates speedups.
	int add(ModelProfile profile);

	int size() const { return static_cast<int>(profiles_.size()); }
	// Index of a model by name, or -1.
	int find(std::string_view name) const;
	const ModelProfile& at(int model) const { return profiles_.at(static_cast<std::size_t>(model)); }

	// Throughput at `gpus` GPUs spread over `nodes` nodes, relative to one GPU. O(1).
	// Unknown model (-1): linear scaling. gpus <= 0 gives 0.
	double speedup(int model, int gpus, int nodes = 1) const;
	// Seconds one epoch of the model's reference run takes on one reference GPU (dataset size /
	// measured single-GPU throughput); 0 for an unknown model or a profile without those numbers.
	// The one definition of "what the profile says an epoch takes" (workloads, the C ABI, the
	// simulator's user estimates).
	double epoch_time_1gpu(int model) const;
	// Speed of a GPU type for this model relative to the reference type (1.0 when unknown).
	double gpu_speed(int model, const std::string& gpu_type) const;
	// Throughput of `gpus` GPUs over `nodes` nodes whose GPU types are `gpu_types`, relative to one
	// reference GPU: the measured speedup times the slowest type's speed (a synchronous
	// data-parallel job runs at its slowest GPU). The one definition the simulator and its bound use.
	double placed_speedup(int model, int gpus, int nodes,
			      const std::vector<std::string>& gpu_types) const;
	// Every GPU type some profile has a speed for, sorted.
	std::vector<std::string> gpu_types() const;

	// The reference GPU type the epoch times are expressed in.
	static constexpr const char* kReferenceGpuType = "v100";

private:
	std::vector<ModelProfile> profiles_;
	// table_[model][nodes_bucket][gpus]: precomputed so that policies can call speedup() in inner loops.
	std::vector<std::vector<std::vector<double>>> table_;
};

}  // namespace dlsched

#endif
