// ClusterView: one scheduling cycle's immutable snapshot, as every policy sees it.
//
// The view does not own the jobs and nodes: the host (the simulator, a plugin's snapshot, a test) keeps
// them alive for the duration of Scheduler::decide().
#ifndef DLSCHED_MODEL_CLUSTER_VIEW_H
#define DLSCHED_MODEL_CLUSTER_VIEW_H

#include <cstdint>
#include <vector>

#include "model/job.h"
#include "model/model_catalog.h"
#include "model/node.h"
#include "util/span.h"

namespace dlsched {

struct ClusterView {
	Seconds now = 0;
	std::uint64_t cycle = 0;            // scheduling cycle number (for logs and determinism checks)
	Span<const Node> nodes;             // nodes[i].index == i
	std::vector<const Job*> pending;    // by submit time, then id
	std::vector<const Job*> running;    // by job id
	const ModelCatalog* models = nullptr;  // never null when a host calls decide()

	int total_gpus() const;
	int free_gpus() const;
};

}  // namespace dlsched

#endif
