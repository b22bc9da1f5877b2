// Cluster descriptions for dlsched-sim: "NxG" or a cluster file (dlsched-sim(1), CLUSTER FILES).
#ifndef DLSCHED_SIM_CLUSTER_SPEC_H
#define DLSCHED_SIM_CLUSTER_SPEC_H

#include <cstdint>
#include <string>
#include <vector>

#include "model/node.h"
#include "util/status.h"

namespace dlsched::sim {

// A simulated cluster: the nodes as policies see them, and what they do not see.
struct ClusterSpec {
	std::vector<Node> nodes;
	// Per node: sigma of its hidden log-normal speed factor (a cluster file's Fluctuation=; 0: the
	// node runs at exactly its GPU type's speed).
	std::vector<double> fluctuation;
};

// "64x8" -> 64 nodes of 8 reference GPUs in partition "train"; anything else is read as a file of
// lines like `Nodes=32 Gpus=8 GpuType=v100 Partition=train Kind=training Loanable=no Fluctuation=0.1`.
// `known_gpu_types` (when not empty): the GPU types a cluster file may name (those the model profiles
// have speeds for); any other is an error naming file and line, not a silent reference-speed node.
Result<ClusterSpec> parse_cluster(const std::string& spec,
				  const std::vector<std::string>& known_gpu_types = {});
// The nodes only (hosts that simulate no fluctuation).
Result<std::vector<Node>> parse_cluster_spec(const std::string& spec,
					     const std::vector<std::string>& known_gpu_types = {});

// Each node's hidden speed factor: exp(sigma z - sigma^2 / 2) with z standard normal, a log-normal
// of mean 1, so that Fluctuation= spreads machines around their type's speed without making the
// cluster faster or slower on average. Node k's factor depends only on the seed and k (the same
// cluster file and seed give the same machines, whatever else changes). Empty when every sigma is 0.
std::vector<double> draw_speed_factors(const std::vector<double>& fluctuation, std::uint64_t seed);

}  // namespace dlsched::sim

#endif
