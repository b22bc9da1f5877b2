// Pollux workload CSV (Qiao et al., OSDI'21 artifact): name,time,application,num_replicas,batch_size.
// Jobs run rigidly at num_replicas GPUs for the model's reference number of epochs (models.csv); the
// builder derives the epoch time from the measured single-GPU throughput.
#include "workload/columns.h"
#include "workload/trace.h"

namespace dlsched {

Status read_pollux(std::istream& in, const std::string& source, const ReadOptions& opt, TraceReadResult& out)
{
	CsvReader csv(in, source);
	ColumnReader cols(csv, {"name", "time", "application", "num_replicas", "batch_size"},
			  {"time", "application", "num_replicas"}, true);
	Status st = cols.read_header();
	if (!st.is_ok())
		return st;
	Status err;
	while (cols.next(err)) {
		TraceJob j;
		long long gpus = 0;
		if (err.is_ok())
			err = cols.number("time", j.submit_s, false, trace_range::kSubmit);
		if (err.is_ok())
			err = cols.integer("num_replicas", gpus, false, trace_range::kGpus);
		if (err.is_ok() && cols.text("application").empty())
			err = parse_error(cols.where_of("application") + "application is empty");
		if (!err.is_ok()) {
			if (!opt.skip_bad_lines)
				return err;
			++out.skipped_lines;
			continue;
		}
		j.gpus = static_cast<int>(gpus);
		j.model = cols.text("application");
		j.user = "pollux";
		j.where = cols.where();
		j.model_where = cols.where_of("application");
		j.model_where.resize(j.model_where.size() - 2);  // no ": "
		out.jobs.push_back(std::move(j));
	}
	return Status::ok();
}

}  // namespace dlsched
