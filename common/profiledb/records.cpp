#include "profiledb/records.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "json/json.h"

namespace dlsched::db {

namespace {

constexpr double kEarliestS = 946684800;  // 2000-01-01T00:00:00Z
constexpr double kAheadS = 86400;         // a node's clock may run ahead of the server's by a day at most
constexpr double kMaxEpoch = 1e7;
constexpr double kMaxGpus = 4096;
constexpr double kMaxNodes = 100000;
constexpr double kMaxRun = 1e6;
constexpr double kMaxJobId = 4294967294.0;        // Slurm's job ids are 32-bit; NO_VAL is not one
constexpr double kMaxCount = 9007199254740992.0;  // 2^53: the largest count a JSON number keeps exactly
constexpr double kMaxSeconds = 1e7;
constexpr std::size_t kMaxShown = 48;

// A number as the messages show it: reals with one decimal at least ("17.0", "1732350061.8").
std::string num(double d)
{
	char buf[64];
	if (std::fabs(d) >= 1e15) {
		std::snprintf(buf, sizeof buf, "%.6g", d);
		return buf;
	}
	std::snprintf(buf, sizeof buf, "%.6f", d);
	std::string s = buf;
	while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.')
		s.pop_back();
	return s;
}

// A whole number without decimals ("0", "4097"); anything else as num().
std::string whole_num(double d)
{
	if (std::fabs(d) < 1e18 && std::floor(d) == d) {
		char buf[32];
		std::snprintf(buf, sizeof buf, "%.0f", d);
		return buf;
	}
	return num(d);
}

// Text from the batch, quoted for a message: bounded, and printable whatever the sender put in it.
std::string quote(const std::string& s)
{
	std::string out = "'";
	for (std::size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
		const unsigned char c = static_cast<unsigned char>(s[i]);
		if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
			out += static_cast<char>(c);
		} else {
			char esc[8];
			std::snprintf(esc, sizeof esc, "\\x%02x", c);
			out += esc;
		}
	}
	if (s.size() > kMaxShown)
		out += "...";
	return out + "'";
}

// A JSON value of the wrong type, shown briefly.
std::string show(const json::Value& v)
{
	if (auto s = v.as_string())
		return "the string " + quote(*s);
	if (v.is_array())
		return "an array";
	if (v.is_object())
		return "an object";
	if (v.is_null())
		return "null";
	if (auto b = v.as_bool())
		return *b ? "true" : "false";
	if (auto d = v.as_number())
		return "the number " + whole_num(*d);
	return "a value";
}

// Names made of [A-Za-z0-9._-], as spank/dlsched's --dl-model.
bool name_chars(const std::string& s)
{
	for (char c : s) {
		const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
				c == '.' || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}

bool digits(const std::string& s)
{
	if (s.empty() || s.size() > 10)
		return false;
	for (char c : s)
		if (c < '0' || c > '9')
			return false;
	return true;
}

// The fields of one JSON object (the batch, or one record); every message starts with the field's
// path ("job_id", "records[3].end").
class Fields {
public:
	Fields(json::Value obj, std::string where) : obj_(std::move(obj)), where_(std::move(where)) {}

	std::string path(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }
	Status error(const std::string& key, const std::string& what) const
	{
		return invalid_argument(path(key) + ": " + what);
	}

	// Every key must be one of `allowed`; `what` names the object for the message.
	Status only(std::initializer_list<const char*> allowed, const std::string& what) const
	{
		for (const std::string& k : obj_.keys()) {
			bool known = false;
			for (const char* a : allowed)
				known = known || k == a;
			if (known)
				continue;
			std::string list;
			for (const char* a : allowed)
				list += (list.empty() ? "" : ", ") + std::string(a);
			return invalid_argument((where_.empty() ? std::string() : where_ + ": ") +
						"unknown key " + quote(k) + " (" + what + " has: " + list +
						")");
		}
		return Status::ok();
	}

	bool has(const char* key) const { return obj_.get(key).is_valid(); }

	// A number in [lo, hi]; `whole` asks for an integer. Absent: an error unless `out` keeps its
	// default (required == false).
	Status number(const char* key, double lo, double hi, bool whole, bool required, double& out) const
	{
		const json::Value v = obj_.get(key);
		if (!v.is_valid())
			return required ? error(key, "missing") : Status::ok();
		const auto d = v.as_number();
		if (!d)
			return error(key, show(v) + " is not a number");
		if (whole && std::floor(*d) != *d)
			return error(key, num(*d) + " is not a whole number");
		if (!(*d >= lo && *d <= hi))
			return error(key, (whole ? whole_num(*d) : num(*d)) + " is out of range (" +
						  (whole ? whole_num(lo) : num(lo)) + " to " +
						  (whole ? whole_num(hi) : num(hi)) + ")");
		out = *d;
		return Status::ok();
	}

	Status integer(const char* key, double lo, double hi, bool required, std::int64_t& out) const
	{
		double d = static_cast<double>(out);
		Status st = number(key, lo, hi, true, required, d);
		if (st.is_ok())
			out = static_cast<std::int64_t>(d);
		return st;
	}

	Status integer(const char* key, double lo, double hi, bool required, int& out) const
	{
		std::int64_t v = out;
		Status st = integer(key, lo, hi, required, v);
		if (st.is_ok())
			out = static_cast<int>(v);
		return st;
	}

	// A Unix time after 2000-01-01 and at most a day ahead of `now_s`.
	Status time(const char* key, double now_s, double& out) const
	{
		double t = 0;
		Status st = number(key, -HUGE_VAL, HUGE_VAL, false, true, t);
		if (!st.is_ok())
			return st;
		if (t < kEarliestS)
			return error(key,
				     num(t) + " is not a plausible time (Unix seconds; before 2000-01-01)");
		if (t > now_s + kAheadS)
			return error(key, num(t) + " is more than a day ahead of this server's clock (" +
						  num(now_s) + "); check the node's clock");
		out = t;
		return Status::ok();
	}

	Status string(const char* key, bool required, std::string& out) const
	{
		const json::Value v = obj_.get(key);
		if (!v.is_valid())
			return required ? error(key, "missing") : Status::ok();
		const auto s = v.as_string();
		if (!s)
			return error(key, show(v) + " is not a string");
		out = *s;
		return Status::ok();
	}

	// A name of [A-Za-z0-9._-], min_len to max_len characters.
	Status name(const char* key, bool required, std::size_t min_len, std::size_t max_len,
		    const char* what, std::string& out) const
	{
		std::string s;
		const bool present = has(key);
		Status st = string(key, required, s);
		if (!st.is_ok() || !present)
			return st;
		if (s.size() < min_len || s.size() > max_len || !name_chars(s))
			return error(key, quote(s) + " is not " + what + " (" + std::to_string(min_len) +
						  " to " + std::to_string(max_len) +
						  " of A-Z a-z 0-9 . _ -)");
		out = s;
		return Status::ok();
	}

	// One of `choices`.
	Status choice(const char* key, std::initializer_list<const char*> choices, std::string& out) const
	{
		std::string s;
		Status st = string(key, true, s);
		if (!st.is_ok())
			return st;
		std::string list;
		for (const char* c : choices) {
			if (s == c) {
				out = s;
				return Status::ok();
			}
			list += (list.empty() ? "" : ", ") + std::string(c);
		}
		return error(key, quote(s) + " is not one of " + list);
	}

private:
	json::Value obj_;
	std::string where_;
};

// Runs the checks in order and stops at the first failure.
#define CHECK_FIELD(expr)                  \
	do {                               \
		Status check_st_ = (expr); \
		if (!check_st_.is_ok())    \
			return check_st_;  \
	} while (0)

Status parse_job(const Fields& f, double now_s, JobRecord& j)
{
	CHECK_FIELD(f.only({"type", "model", "gpus", "nodes", "epochs_total", "start"}, "a job record"));
	CHECK_FIELD(f.name("model", false, 1, 64, "a model name", j.model));
	CHECK_FIELD(f.integer("gpus", 0, kMaxGpus, true, j.gpus));
	CHECK_FIELD(f.integer("nodes", 1, kMaxNodes, true, j.nodes));
	CHECK_FIELD(f.number("epochs_total", 0, kMaxEpoch, false, false, j.epochs_total));
	CHECK_FIELD(f.time("start", now_s, j.start_s));
	return Status::ok();
}

Status parse_epoch(const Fields& f, double now_s, EpochRecord& e)
{
	CHECK_FIELD(f.only(
		{"type", "epoch", "gpus", "start", "end", "bytes_read", "net_rx_bytes", "nfs_read_bytes"},
		"an epoch record"));
	CHECK_FIELD(f.integer("epoch", 1, kMaxEpoch, true, e.epoch));
	CHECK_FIELD(f.integer("gpus", 0, kMaxGpus, true, e.gpus));
	CHECK_FIELD(f.time("start", now_s, e.start_s));
	CHECK_FIELD(f.time("end", now_s, e.end_s));
	if (e.end_s < e.start_s)
		return f.error("end", num(e.end_s) + " is before start " + num(e.start_s));
	// Counters: -1 when not measured (also when left out).
	CHECK_FIELD(f.integer("bytes_read", -1, kMaxCount, false, e.bytes_read));
	CHECK_FIELD(f.integer("net_rx_bytes", -1, kMaxCount, false, e.net_rx_bytes));
	CHECK_FIELD(f.integer("nfs_read_bytes", -1, kMaxCount, false, e.nfs_read_bytes));
	return Status::ok();
}

Status parse_checkpoint(const Fields& f, double now_s, CheckpointRecord& c)
{
	CHECK_FIELD(f.only({"type", "kind", "epoch", "bytes", "seconds", "at"}, "a checkpoint record"));
	CHECK_FIELD(f.choice("kind", {"save", "load"}, c.kind));
	CHECK_FIELD(f.number("epoch", 0, kMaxEpoch, false, true, c.epoch));
	CHECK_FIELD(f.integer("bytes", 0, kMaxCount, true, c.bytes));
	CHECK_FIELD(f.number("seconds", 0, kMaxSeconds, false, true, c.seconds));
	CHECK_FIELD(f.time("at", now_s, c.at_s));
	return Status::ok();
}

Status parse_job_end(const Fields& f, double now_s, JobEnd& e)
{
	CHECK_FIELD(f.only({"type", "end", "state"}, "a job_end record"));
	CHECK_FIELD(f.time("end", now_s, e.end_s));
	CHECK_FIELD(f.choice("state", {"completed", "checkpointed", "failed"}, e.state));
	return Status::ok();
}

}  // namespace

Result<Batch> parse_batch(const std::string& text, double now_s)
{
	auto doc = json::Value::parse(text, "batch");
	if (!doc.is_ok())
		return invalid_argument(doc.status().message());
	if (!doc->is_object())
		return invalid_argument("batch: not a JSON object (doc/protocol.md, section 2)");
	const Fields top(doc.value(), "");
	CHECK_FIELD(top.only({"v", "cluster", "job_id", "step", "node", "run", "records"}, "a batch"));

	double v = 0;
	CHECK_FIELD(top.number("v", -HUGE_VAL, HUGE_VAL, false, true, v));
	if (v != kProtocolVersion)
		return top.error("v", whole_num(v) + " is not a protocol version this dlsched speaks (" +
					      std::to_string(kProtocolVersion) + ")");
	Batch b;
	CHECK_FIELD(top.name("cluster", true, 0, 64, "a cluster name", b.cluster));
	CHECK_FIELD(top.integer("job_id", 1, kMaxJobId, true, b.job_id));
	CHECK_FIELD(top.string("step", true, b.step));
	if (b.step != "batch" && b.step != "extern" && !(digits(b.step) && std::stod(b.step) <= kMaxJobId))
		return top.error("step", quote(b.step) + " is not a step (batch, extern or a step number)");
	CHECK_FIELD(top.name("node", true, 1, 255, "a node name", b.node));
	CHECK_FIELD(top.integer("run", 0, kMaxRun, true, b.run));

	const json::Value records = doc->get("records");
	if (!records.is_valid())
		return top.error("records", "missing");
	if (!records.is_array())
		return top.error("records", show(records) + " is not an array of records");
	if (records.size() == 0)
		return top.error("records", "empty (a batch carries 1 to " +
						    std::to_string(kMaxBatchRecords) + " records)");
	if (records.size() > kMaxBatchRecords)
		return top.error("records", std::to_string(records.size()) + " records; at most " +
						    std::to_string(kMaxBatchRecords) +
						    " per batch (send the rest in another)");

	std::size_t job_at = 0, end_at = 0;
	for (std::size_t i = 0; i < records.size(); ++i) {
		const std::string where = "records[" + std::to_string(i) + "]";
		const json::Value r = records.at(i);
		if (!r.is_object())
			return invalid_argument(where + ": " + show(r) + " is not a record (a JSON object)");
		const Fields f(r, where);
		std::string type;
		CHECK_FIELD(f.string("type", true, type));
		if (type == "job") {
			if (b.job)
				return invalid_argument(where +
							": a second job record (the first is records[" +
							std::to_string(job_at) + "]; one per batch)");
			JobRecord j;
			CHECK_FIELD(parse_job(f, now_s, j));
			j.cluster = b.cluster;
			j.job_id = b.job_id;
			b.job = j;
			job_at = i;
		} else if (type == "epoch") {
			EpochRecord e;
			CHECK_FIELD(parse_epoch(f, now_s, e));
			for (const EpochRecord& seen : b.epochs)
				if (seen.epoch == e.epoch)
					return f.error("epoch", std::to_string(e.epoch) +
									" appears twice in the batch");
			e.cluster = b.cluster;
			e.job_id = b.job_id;
			e.run = b.run;
			e.node = b.node;  // the collector's node: where the epoch ran (doc/protocol.md)
			b.epochs.push_back(e);
		} else if (type == "checkpoint") {
			CheckpointRecord c;
			CHECK_FIELD(parse_checkpoint(f, now_s, c));
			c.cluster = b.cluster;
			c.job_id = b.job_id;
			c.run = b.run;
			b.checkpoints.push_back(c);
		} else if (type == "job_end") {
			if (b.job_end)
				return invalid_argument(where +
							": a second job_end record (the first is records[" +
							std::to_string(end_at) + "]; one per batch)");
			JobEnd e;
			CHECK_FIELD(parse_job_end(f, now_s, e));
			b.job_end = e;
			end_at = i;
		} else {
			return f.error(
				"type",
				quote(type) + " is not a record type (job, epoch, checkpoint, job_end)");
		}
	}
	if (b.job && b.job_end && b.job_end->end_s < b.job->start_s)
		return invalid_argument("records[" + std::to_string(end_at) +
					"].end: " + num(b.job_end->end_s) + " is before the job's start " +
					num(b.job->start_s) + " (records[" + std::to_string(job_at) +
					"].start)");
	return b;
}

}  // namespace dlsched::db
