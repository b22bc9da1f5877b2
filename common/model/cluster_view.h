// ClusterView: one scheduling cycle's immutable snapshot, as every policy sees it.
//
// The view does not own the jobs and nodes: the host (the simulator, a plugin's snapshot, a test) keeps
// them alive for the duration of Scheduler::decide().
#ifndef DLSCHED_MODEL_CLUSTER_VIEW_H
#define DLSCHED_MODEL_CLUSTER_VIEW_H

#include <cstdint>
#include <vector>

#include "model/account.h"
#include "model/job.h"
#include "model/model_catalog.h"
#include "model/node.h"
#include "model/policy_step.h"
#include "util/span.h"

namespace dlsched {

// One measured speed: how fast `model` ran on `node`, per GPU, relative to one reference GPU
// (ModelCatalog::kReferenceGpuType). Hosts measure it (the simulator from its hidden per-node
// speeds, Slurm from epoch times); speed-aware placements learn from it (gp-placement).
struct SpeedObservation {
	NodeIndex node = 0;
	int model = -1;  // index into ModelCatalog; -1 when the model is unknown
	double speed = 1.0;
	Seconds at = 0;  // when it was measured
};

struct ClusterView {
	Seconds now = 0;
	std::uint64_t cycle = 0;               // scheduling cycle number (for logs and determinism checks)
	Span<const Node> nodes;                // nodes[i].index == i
	std::vector<const Job*> pending;       // by submit time, then id
	std::vector<const Job*> running;       // by job id
	const ModelCatalog* models = nullptr;  // never null when a host calls decide()
	// Where learned policies report what they saw and chose (null: nobody records). Not owned.
	DecisionRecorder* recorder = nullptr;
	// Recent speed measurements, oldest first; the host bounds how many (a few hundred). Not owned.
	Span<const SpeedObservation> observations;
	// Capacity loaning: the fraction of the inference nodes' GPUs that inference needs now (declared
	// by an inference autoscaler or an admin; dlsched-sim --inference-demand). Inference uses the
	// nodes that are not loaned; the Loaning policy lends the rest and takes nodes back when it rises.
	double inference_demand = 0;
	// The accounts the jobs are charged to: their quotas, shares and usage (FairnessPolicy=). A job
	// whose account is not listed has no quota and no shares. Not owned.
	Span<const Account> accounts;

	int total_gpus() const;
	int free_gpus() const;
};

}  // namespace dlsched

#endif
