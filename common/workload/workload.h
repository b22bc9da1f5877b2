// Workloads: reading traces (Philly, Pollux, dlsched's native format) and building runnable jobs.
#ifndef DLSCHED_WORKLOAD_WORKLOAD_H
#define DLSCHED_WORKLOAD_WORKLOAD_H

#include <cstdint>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/model_catalog.h"
#include "util/status.h"

namespace dlsched {

enum class WorkloadFormat { kAuto, kPhilly, kPollux, kDlsched };

// "auto", "philly", "pollux", "dlsched" <-> enum; unknown text gives kInvalidArgument.
Result<WorkloadFormat> parse_workload_format(const std::string& text);
const char* workload_format_name(WorkloadFormat f);

struct ReadOptions {
	WorkloadFormat format = WorkloadFormat::kAuto;  // auto: from the header line / extension
	bool skip_bad_lines = false;  // otherwise the first malformed line is an error (file:line:column)
};

// How to turn a trace into jobs. Defaults give the rigid workload every comparison starts from:
// every job runs at its requested GPUs, no elasticity, no deadlines, trace times unchanged.
struct BuildOptions {
	std::uint64_t seed = 1;         // model assignment and every other random choice
	double elastic_fraction = 0;    // fraction of multi-GPU-capable jobs marked elastic
	double elastic_max_factor = 2;  // elastic jobs may use [1, factor x requested] GPUs
	double deadline_fraction = 0;   // fraction of jobs given a deadline
	double deadline_slack = 1.5;    // deadline = submit + slack x runtime alone at requested GPUs
	double deadline_slack_max = 0;  // > deadline_slack: each job's slack uniform in [slack, max], seeded
	bool deadline_elastic =
		false;  // deadline jobs get the elastic range [1, elastic_max_factor x requested]
	double priority_fraction = 0;  // fraction of jobs without a QoS that get the QoS "high"
	double load_scale = 1;         // > 1 compresses inter-arrival times (more load)
	double time_limit_factor = 2;  // time limit = factor x true runtime (traces without limits)
	std::size_t max_jobs = 0;      // 0: all
	int gpus_per_node = 8;         // node size assumed when a job's runtime is derived (packed)
};

// --deadline-slack's value (dlsched-sim, dlsched-replay): S, or LO:HI (each job's slack drawn
// uniformly, seeded), 0.05 <= LO <= HI <= 1000, into `build`; or why not.
[[nodiscard]] Status parse_deadline_slack(const std::string& text, BuildOptions& build);

struct Workload {
	std::string source;  // file it came from
	WorkloadFormat format = WorkloadFormat::kAuto;
	std::vector<Job> jobs;                 // by submit time then id; submit_time of the first job is 0
	std::vector<Seconds> trace_runtime_s;  // per job: runtime alone at requested GPUs (the bound)
	std::size_t skipped_lines = 0;         // malformed lines skipped (only with skip_bad_lines)
};

// Reads and builds a workload. Errors name the file, line and column.
Result<Workload> load_workload(const std::string& path, const ReadOptions& read, const BuildOptions& build,
			       const ModelCatalog& models);

// The bundled per-model profiles (Pollux scaling, Gavel GPU-type speeds). `dir` empty: the installed
// data directory, or DLSCHED_DATADIR/profiles when that environment variable is set.
Result<ModelCatalog> load_model_catalog(const std::string& dir);
std::string default_data_dir();

}  // namespace dlsched

#endif
