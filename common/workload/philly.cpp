// Philly job CSV (Jeon et al., ATC'19, one row per job as processed by the Pollux artifact):
// job_id,submit_time,submit_s,duration_s,num_gpus,vc. No model, epochs or user: the builder assigns
// a model; the hashed virtual cluster stands for the user (fairness policies group by it).
#include "workload/columns.h"
#include "workload/trace.h"

namespace dlsched {

Status read_philly(std::istream& in, const std::string& source, const ReadOptions& opt, TraceReadResult& out)
{
	CsvReader csv(in, source);
	ColumnReader cols(csv, {"job_id", "submit_time", "submit_s", "duration_s", "num_gpus", "vc"},
			  {"job_id", "submit_s", "duration_s", "num_gpus"}, true);
	Status st = cols.read_header();
	if (!st.is_ok())
		return st;
	Status err;
	while (cols.next(err)) {
		TraceJob j;
		long long id = 0, gpus = 0;
		if (err.is_ok())
			err = cols.integer("job_id", id, false, trace_range::kId);
		if (err.is_ok())
			err = cols.number("submit_s", j.submit_s, false, trace_range::kSubmit);
		if (err.is_ok())
			err = cols.number("duration_s", j.duration_s, false, trace_range::kPhillyDuration);
		if (err.is_ok())
			err = cols.integer("num_gpus", gpus, false, trace_range::kGpus);
		if (!err.is_ok()) {
			if (!opt.skip_bad_lines)
				return err;
			++out.skipped_lines;
			continue;
		}
		j.id = id;
		j.gpus = static_cast<int>(gpus);
		j.user = cols.text("vc").empty() ? "philly" : "vc-" + cols.text("vc");
		j.account = cols.text("vc").empty() ? "philly"
						    : cols.text("vc");  // the team: its virtual cluster
		j.where = cols.where();
		out.jobs.push_back(std::move(j));
	}
	return Status::ok();
}

}  // namespace dlsched
