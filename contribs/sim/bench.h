// dlsched-sim bench: scheduling-cycle latency and simulator throughput, printed (never asserted).
#ifndef DLSCHED_SIM_BENCH_H
#define DLSCHED_SIM_BENCH_H

#include <string>
#include <vector>

#include "config/config.h"
#include "model/model_catalog.h"
#include "policy/registry.h"

namespace dlsched::sim {

struct BenchOptions {
	std::vector<std::string> policies;
	std::string window;     // a 5,000-job Philly window
	std::string json_path;  // optional
	bool quick = false;     // smaller sizes, for a fast look
};

int run_bench(const BenchOptions& opt, const Config& base, const PolicyRegistry& registry,
	      const ModelCatalog& models);

}  // namespace dlsched::sim

#endif
