// A seeded Philly-like synthetic trace, in dlsched's native CSV format (dlsched-sim generate).
#ifndef DLSCHED_SIM_GENERATOR_H
#define DLSCHED_SIM_GENERATOR_H

#include <cstdint>
#include <ostream>

#include "model/model_catalog.h"

namespace dlsched::sim {

struct GeneratorOptions {
	std::size_t jobs = 1000;
	int cluster_gpus = 512;  // arrivals are paced so that offered load ~ `load` on this many GPUs
	double load = 1.0;
	std::uint64_t seed = 1;
};

// GPU counts as the whole Philly trace (Jeon et al., ATC'19): 93% 1 GPU, the rest 2, 4 and 8 in
// equal parts; durations log-normal (mu 6.79, sigma 2.16 in log-seconds), capped at 7 days; models
// by GPU-time as the workload builder does; Poisson arrivals.
void generate_trace(const GeneratorOptions& opt, const ModelCatalog& models, std::ostream& out);

}  // namespace dlsched::sim

#endif
