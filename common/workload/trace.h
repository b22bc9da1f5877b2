// TraceJob: one job as a trace file describes it, before the builder turns it into a runnable Job.
// Internal to common/workload/.
#ifndef DLSCHED_WORKLOAD_TRACE_H
#define DLSCHED_WORKLOAD_TRACE_H

#include <istream>
#include <string>
#include <vector>

#include "model/types.h"
#include "util/status.h"
#include "workload/workload.h"

namespace dlsched {

struct TraceJob {
	long long id = -1;          // -1: numbered by the builder
	Seconds submit_s = 0;
	int gpus = 1;
	int min_gpus = 0;           // 0: same as gpus
	int max_gpus = 0;
	std::string model;          // empty: the builder assigns one (Philly)
	double epochs = 0;          // 0: derived by the builder
	Seconds epoch_s = 0;        // seconds per epoch at `gpus` GPUs on the reference GPU; 0: unknown
	Seconds duration_s = 0;     // runtime at `gpus` GPUs alone; 0: unknown
	Seconds deadline_s = 0;     // relative to submit; 0: none
	Seconds time_limit_s = 0;   // 0: derived by the builder
	std::string qos;
	std::string partition;
	std::string user;
	std::string where;          // "file:line" for the builder's error messages
	std::string model_where;    // "file:line:column" of the model field (empty: where)
};

struct TraceReadResult {
	std::vector<TraceJob> jobs;
	std::size_t skipped_lines = 0;
};

// Each reader reads the whole stream; `header` is the first record already read by the caller.
Status read_philly(std::istream& in, const std::string& source, const ReadOptions& opt, TraceReadResult& out);
Status read_pollux(std::istream& in, const std::string& source, const ReadOptions& opt, TraceReadResult& out);
Status read_native_csv(std::istream& in, const std::string& source, const ReadOptions& opt,
                       TraceReadResult& out);
Status read_native_jsonl(std::istream& in, const std::string& source, const ReadOptions& opt,
                         TraceReadResult& out);

Status build_jobs(const TraceReadResult& trace, const BuildOptions& opt, const ModelCatalog& models,
                  Workload& out);

}  // namespace dlsched

#endif
