// dlsched's native workload format (doc/workload-format.md): CSV with a header naming the columns,
// or JSON lines with the same keys.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "json/json.h"
#include "workload/columns.h"
#include "workload/trace.h"

namespace dlsched {

namespace {

const std::vector<std::string> kColumns = {
	"id",         "submit_s",   "gpus",         "min_gpus", "max_gpus",  "model", "epochs", "epoch_s",
	"duration_s", "deadline_s", "time_limit_s", "qos",      "partition", "user",  "name"};

std::string show(double v)
{
	char b[32];
	std::snprintf(b, sizeof b, "%g", v);
	return b;
}

// Checks what both syntaxes share: GPU range, and a way to know the job's length.
// `where(field)`: "file:line:column: " of a field (its column, or the line's start).
template <typename Where>
Status check_job(const TraceJob& j, const Where& where)
{
	if (j.min_gpus && j.min_gpus > j.gpus)
		return parse_error(where("min_gpus") + "min_gpus " + std::to_string(j.min_gpus) +
				   " is above gpus " + std::to_string(j.gpus));
	if (j.max_gpus && j.max_gpus < j.gpus)
		return parse_error(where("max_gpus") + "max_gpus " + std::to_string(j.max_gpus) +
				   " is below gpus " + std::to_string(j.gpus));
	if (j.epoch_s <= 0 && j.duration_s <= 0)
		return parse_error(
			where("") +
			"neither epoch_s nor duration_s is given (one says how long the job runs)");
	if (j.epoch_s > 0) {
		const double runtime = j.epochs * j.epoch_s;
		if (!trace_range::kSeconds.holds(runtime))
			return parse_error(where("epoch_s") + "epochs x epoch_s = " + show(j.epochs) + " x " +
					   show(j.epoch_s) + " = " + show(runtime) +
					   " s is out of range: " + trace_range::kSeconds.fix);
		// Both lengths given: they must say the same (within rounding), or which one holds is a
		// guess.
		if (j.duration_s > 0 &&
		    std::fabs(runtime - j.duration_s) > trace_range::kDurationTolerance * j.duration_s)
			return parse_error(where("duration_s") + "duration_s " + show(j.duration_s) +
					   " disagrees with epochs x epoch_s = " + show(j.epochs) + " x " +
					   show(j.epoch_s) + " = " + show(runtime) +
					   " s by more than 1%: give epoch_s or duration_s, not both, or "
					   "make them agree");
	}
	return Status::ok();
}

// The 1-based column where `"key"` starts in a JSON line (1 when it is not found).
std::size_t key_column(const std::string& line, const std::string& key)
{
	const std::size_t p = line.find("\"" + key + "\"");
	return p == std::string::npos ? 1 : p + 1;
}

}  // namespace

Status read_native_csv(std::istream& in, const std::string& source, const ReadOptions& opt,
		       TraceReadResult& out)
{
	CsvReader csv(in, source);
	ColumnReader cols(csv, kColumns, {"submit_s", "gpus", "model", "epochs"}, true);
	Status st = cols.read_header();
	if (!st.is_ok())
		return st;
	Status err;
	while (cols.next(err)) {
		TraceJob j;
		long long id = -1, gpus = 0, mn = 0, mx = 0;
		if (err.is_ok())
			err = cols.integer("id", id, true, trace_range::kId);
		if (err.is_ok())
			err = cols.number("submit_s", j.submit_s, false, trace_range::kSubmit);
		if (err.is_ok())
			err = cols.integer("gpus", gpus, false, trace_range::kGpus);
		if (err.is_ok())
			err = cols.integer("min_gpus", mn, true, trace_range::kGpus);
		if (err.is_ok())
			err = cols.integer("max_gpus", mx, true, trace_range::kGpus);
		if (err.is_ok())
			err = cols.number("epochs", j.epochs, false, trace_range::kEpochs);
		if (err.is_ok())
			err = cols.number("epoch_s", j.epoch_s, true, trace_range::kSeconds);
		if (err.is_ok())
			err = cols.number("duration_s", j.duration_s, true, trace_range::kSeconds);
		if (err.is_ok())
			err = cols.number("deadline_s", j.deadline_s, true, trace_range::kSeconds);
		if (err.is_ok())
			err = cols.number("time_limit_s", j.time_limit_s, true, trace_range::kSeconds);
		if (err.is_ok() && cols.text("model").empty())
			err = parse_error(cols.where_of("model") + "model is empty");
		j.id = id;
		j.gpus = static_cast<int>(gpus);
		j.min_gpus = static_cast<int>(mn);
		j.max_gpus = static_cast<int>(mx);
		if (err.is_ok())
			err = check_job(j, [&cols](const std::string& f) {
				return cols.where_of(f.empty() ? "epoch_s" : f);
			});
		if (!err.is_ok()) {
			if (!opt.skip_bad_lines)
				return err;
			++out.skipped_lines;
			continue;
		}
		j.model = cols.text("model");
		j.qos = cols.text("qos");
		j.partition = cols.text("partition");
		j.user = cols.text("user").empty() ? "user" : cols.text("user");
		j.where = cols.where();
		j.model_where = cols.where_of("model");
		j.model_where.resize(j.model_where.size() - 2);  // no ": "
		out.jobs.push_back(std::move(j));
	}
	return Status::ok();
}

Status read_native_jsonl(std::istream& in, const std::string& source, const ReadOptions& opt,
			 TraceReadResult& out)
{
	std::string line;
	std::size_t line_no = 0;
	while (std::getline(in, line)) {
		++line_no;
		if (line.find_first_not_of(" \t\r") == std::string::npos)
			continue;
		const std::string where = source + ":" + std::to_string(line_no);
		// "file:line:column: " of a key (the line's start for a key that is absent).
		auto at = [&](const std::string& key) {
			return where + ":" + std::to_string(key.empty() ? 1 : key_column(line, key)) + ": ";
		};
		TraceJob j;
		Status err;
		auto parsed = json::Value::parse(line, where);
		if (!parsed.is_ok()) {
			// The parser reports "<where>:1:<column>: <what>" for this one-line document; keep
			// the column, with the file's line number.
			const std::string m =
				parsed.status().message().substr(where.size() + 1);  // "1:<col>: ..."
			const std::size_t colon = m.find(':');
			err = parse_error(where + ":" +
					  (colon == std::string::npos ? m : m.substr(colon + 1)));
		} else if (!parsed->is_object()) {
			err = parse_error(where + ":1: expected a JSON object per line");
		} else {
			const json::Value& o = parsed.value();
			for (const std::string& k : o.keys())
				if (std::find(kColumns.begin(), kColumns.end(), k) == kColumns.end() &&
				    err.is_ok())
					err = parse_error(at(k) + "unknown key '" + k + "'");
			// The key's value when present; a missing required key sets `err`.
			auto field = [&](const char* key, bool required) -> json::Value {
				json::Value v = o.get(key);
				if (v.is_valid() && !v.is_null())
					return v;
				if (required && err.is_ok())
					err = parse_error(at("") + "missing required key '" + key + "'");
				return json::Value();
			};
			auto num = [&](const char* key, double& dst, bool required, const TraceRange& range) {
				json::Value v = err.is_ok() ? field(key, required) : json::Value();
				if (!v.is_valid())
					return;
				auto d = v.as_number();
				if (!d)
					err = parse_error(at(key) + key + " is not a number");
				else if (!range.holds(*d))
					err = parse_error(at(key) + key + " " + show(*d) +
							  " is out of range: " + range.fix);
				else
					dst = *d;
			};
			auto str = [&](const char* key, std::string& dst, bool required) {
				json::Value v = err.is_ok() ? field(key, required) : json::Value();
				if (!v.is_valid())
					return;
				auto t = v.as_string();
				if (!t)
					err = parse_error(at(key) + key + " is not a string");
				else
					dst = *t;
			};
			double id = -1, gpus = 0, mn = 0, mx = 0;
			num("id", id, false, trace_range::kId);
			num("submit_s", j.submit_s, true, trace_range::kSubmit);
			num("gpus", gpus, true, trace_range::kGpus);
			num("min_gpus", mn, false, trace_range::kGpus);
			num("max_gpus", mx, false, trace_range::kGpus);
			num("epochs", j.epochs, true, trace_range::kEpochs);
			num("epoch_s", j.epoch_s, false, trace_range::kSeconds);
			num("duration_s", j.duration_s, false, trace_range::kSeconds);
			num("deadline_s", j.deadline_s, false, trace_range::kSeconds);
			num("time_limit_s", j.time_limit_s, false, trace_range::kSeconds);
			str("model", j.model, true);
			str("qos", j.qos, false);
			str("partition", j.partition, false);
			str("user", j.user, false);
			const std::pair<const char*, double> ints[] = {
				{"id", id}, {"gpus", gpus}, {"min_gpus", mn}, {"max_gpus", mx}};
			for (const auto& [key, v] : ints)
				if (err.is_ok() && v != std::floor(v))
					err = parse_error(at(key) + key + " must be an integer");
			j.id = static_cast<long long>(id);
			j.gpus = static_cast<int>(gpus);
			j.min_gpus = static_cast<int>(mn);
			j.max_gpus = static_cast<int>(mx);
			if (err.is_ok())
				err = check_job(j, at);
		}
		if (!err.is_ok()) {
			if (!opt.skip_bad_lines)
				return err;
			++out.skipped_lines;
			continue;
		}
		if (j.user.empty())
			j.user = "user";
		j.where = where;
		j.model_where = where + ":" + std::to_string(key_column(line, "model"));
		out.jobs.push_back(std::move(j));
	}
	return Status::ok();
}

}  // namespace dlsched
