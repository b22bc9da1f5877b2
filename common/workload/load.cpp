// load_workload(): format detection and the readers, then the builder.
#include <algorithm>
#include <fstream>

#include "util/csv.h"
#include "workload/trace.h"

namespace dlsched {

Result<WorkloadFormat> parse_workload_format(const std::string& text)
{
	if (text == "auto")
		return WorkloadFormat::kAuto;
	if (text == "philly")
		return WorkloadFormat::kPhilly;
	if (text == "pollux")
		return WorkloadFormat::kPollux;
	if (text == "dlsched")
		return WorkloadFormat::kDlsched;
	return invalid_argument("unknown workload format '" + text +
				"' (known: auto, philly, pollux, dlsched)");
}

Status parse_deadline_slack(const std::string& text, BuildOptions& build)
{
	const auto colon = text.find(':');
	double lo = 0, hi = 0;
	const bool ok = colon == std::string::npos ? parse_number(text, lo) && (hi = lo, true)
						   : parse_number(text.substr(0, colon), lo) &&
							     parse_number(text.substr(colon + 1), hi);
	if (!ok || !(lo >= 0.05 && hi <= 1000 && lo <= hi))
		return invalid_argument("'" + text + "' is not S or LO:HI with 0.05 <= LO <= HI <= 1000");
	build.deadline_slack = lo;
	build.deadline_slack_max = hi;
	return Status::ok();
}

const char* workload_format_name(WorkloadFormat f)
{
	switch (f) {
		case WorkloadFormat::kAuto:
			return "auto";
		case WorkloadFormat::kPhilly:
			return "philly";
		case WorkloadFormat::kPollux:
			return "pollux";
		case WorkloadFormat::kDlsched:
			return "dlsched";
	}
	return "unknown";
}

namespace {

// Auto-detection from the first non-blank line: a JSON object, or a CSV header with each format's
// distinctive columns.
WorkloadFormat detect(const std::string& first_line)
{
	std::size_t i = first_line.find_first_not_of(" \t");
	if (i != std::string::npos && first_line[i] == '{')
		return WorkloadFormat::kDlsched;
	auto has = [&](const char* col) { return first_line.find(col) != std::string::npos; };
	if (has("num_gpus") && has("duration_s"))
		return WorkloadFormat::kPhilly;
	if (has("application") && has("num_replicas"))
		return WorkloadFormat::kPollux;
	if (has("submit_s") && has("gpus"))
		return WorkloadFormat::kDlsched;
	return WorkloadFormat::kAuto;
}

}  // namespace

Result<Workload> load_workload(const std::string& path, const ReadOptions& read, const BuildOptions& build,
			       const ModelCatalog& models)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		return not_found(path + ": cannot open workload file");
	// The first line that is neither blank nor a comment tells the format.
	std::string first;
	while (std::getline(in, first)) {
		std::size_t c = first.find_first_not_of(" \t\r");
		if (c != std::string::npos && first[c] != '#')
			break;
		first.clear();
	}
	in.clear();
	in.seekg(0);

	WorkloadFormat f = read.format;
	bool jsonl = first.find_first_not_of(" \t") != std::string::npos &&
		     first[first.find_first_not_of(" \t")] == '{';
	if (f == WorkloadFormat::kAuto) {
		f = detect(first);
		if (f == WorkloadFormat::kAuto)
			return parse_error(path +
					   ":1: cannot tell the workload format from the first line; give "
					   "--format philly|pollux|dlsched (doc/workload-format.md)");
	}
	TraceReadResult trace;
	Status st;
	switch (f) {
		case WorkloadFormat::kPhilly:
			st = read_philly(in, path, read, trace);
			break;
		case WorkloadFormat::kPollux:
			st = read_pollux(in, path, read, trace);
			break;
		default:
			st = jsonl ? read_native_jsonl(in, path, read, trace)
				   : read_native_csv(in, path, read, trace);
			break;
	}
	if (!st.is_ok())
		return st;
	// A job naming a model the profiles do not have is a bad line like any other: skipped and
	// counted with skip_bad_lines, otherwise the builder's error (file:line:column).
	if (read.skip_bad_lines) {
		const std::size_t before = trace.jobs.size();
		trace.jobs.erase(std::remove_if(trace.jobs.begin(), trace.jobs.end(),
						[&](const TraceJob& t) {
							return !t.model.empty() && models.find(t.model) < 0;
						}),
				 trace.jobs.end());
		trace.skipped_lines += before - trace.jobs.size();
	}
	Workload w;
	w.source = path;
	w.format = f;
	st = build_jobs(trace, build, models, w);
	if (!st.is_ok())
		return st;
	return w;
}

}  // namespace dlsched
