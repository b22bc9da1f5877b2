// Node: one machine of the cluster as a scheduling cycle sees it.
#ifndef DLSCHED_MODEL_NODE_H
#define DLSCHED_MODEL_NODE_H

#include <string>

#include "model/types.h"

namespace dlsched {

enum class PartitionKind : std::uint8_t { kTraining, kInference };

struct Node {
	NodeIndex index = 0;  // position in ClusterView::nodes
	std::string name;
	int gpus_total = 0;
	int gpus_free = 0;      // not allocated to any job
	std::string gpu_type;   // e.g. "v100"; empty: the reference type
	double speed = 1.0;     // throughput relative to the reference GPU for a typical job (models may
				// have their own factor: ModelCatalog::gpu_speed)
	std::string partition;  // Slurm partition name; a node in several: "a,b" (model/partition_list.h)
	PartitionKind kind = PartitionKind::kTraining;
	bool loanable = false;  // an inference node that may be loaned to training
	bool loaned = false;    // currently loaned to training
	bool up = true;         // usable for new work
};

}  // namespace dlsched

#endif
