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

// What a trace field may hold (doc/workload-format.md, "Limits"). A value outside is a unit or
// typing mistake (milliseconds for seconds, a count that overflowed), never a job.
struct TraceRange {
	double min;
	double max;
	const char* fix;  // the range in words, for the error message
	bool holds(double v) const { return v >= min && v <= max; }  // false for NaN
};

namespace trace_range {
inline constexpr TraceRange kId{0, 9007199254740992.0, "ids are whole numbers from 0 to 2^53"};
inline constexpr TraceRange kSubmit{0, 1e10, "submit times are 0 to 1e10 seconds"};
inline constexpr TraceRange kGpus{1, 65536, "a job asks for 1 to 65536 GPUs"};
inline constexpr TraceRange kEpochs{1e-9, 1e6, "give more than 0 and at most 1e6 epochs"};
// Durations, epoch times, deadlines and time limits; a job's epochs x epoch_s too.
inline constexpr TraceRange kSeconds{1e-9, 1e8, "give seconds, more than 0 and at most 1e8 (about 3 years)"};
inline constexpr TraceRange kPhillyDuration{1, 1e8, "durations are 1 to 1e8 seconds (about 3 years)"};
// epochs x epoch_s and a duration_s given with them may differ by this fraction of duration_s.
inline constexpr double kDurationTolerance = 0.01;
}  // namespace trace_range

struct TraceJob {
	long long id = -1;  // -1: numbered by the builder
	Seconds submit_s = 0;
	int gpus = 1;
	int min_gpus = 0;  // 0: same as gpus
	int max_gpus = 0;
	std::string model;         // empty: the builder assigns one (Philly)
	double epochs = 0;         // 0: derived by the builder
	Seconds epoch_s = 0;       // seconds per epoch at `gpus` GPUs on the reference GPU; 0: unknown
	Seconds duration_s = 0;    // runtime at `gpus` GPUs alone; 0: unknown
	Seconds deadline_s = 0;    // relative to submit; 0: none
	Seconds time_limit_s = 0;  // 0: derived by the builder
	std::string qos;
	std::string partition;
	std::string user;
	std::string account;      // empty: the user's name stands for it (the native format)
	std::string where;        // "file:line" for the builder's error messages
	std::string model_where;  // "file:line:column" of the model field (empty: where)
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
