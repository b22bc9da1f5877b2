// Cluster descriptions for dlsched-sim: "NxG" or a cluster file (dlsched-sim(1), CLUSTER FILES).
#ifndef DLSCHED_SIM_CLUSTER_SPEC_H
#define DLSCHED_SIM_CLUSTER_SPEC_H

#include <string>
#include <vector>

#include "model/node.h"
#include "util/status.h"

namespace dlsched::sim {

// "64x8" -> 64 nodes of 8 reference GPUs in partition "train"; anything else is read as a file of
// lines like `Nodes=32 Gpus=8 GpuType=v100 Partition=train Kind=training Loanable=no`.
// `known_gpu_types` (when not empty): the GPU types a cluster file may name (those the model profiles
// have speeds for); any other is an error naming file and line, not a silent reference-speed node.
Result<std::vector<Node>> parse_cluster_spec(const std::string& spec,
                                             const std::vector<std::string>& known_gpu_types = {});

}  // namespace dlsched::sim

#endif
