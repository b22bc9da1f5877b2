// Recorded cycles as JSON (dump.h).
#include "capi/dump.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

namespace dlsched::capi {

namespace {

// Element i of a caller's array of view structs, at the caller's stride (its first struct_size).
template <class T>
const T& element(const T* base, std::size_t i)
{
	const std::size_t stride = base[0].struct_size;
	return *reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) + i * stride);
}

json::Value text(const char* s)
{
	return s ? json::Value::string(s) : json::Value::null();
}

json::Value num(double d)
{
	return json::Value::number(d);
}

json::Value integer(std::int64_t i)
{
	return json::Value::integer(i);
}

}  // namespace

// A job's or an action's GPUs per node as [[node_index, gpus], ...].
json::Value shares_json(const dlsched_share_t* shares, std::size_t count)
{
	json::Value out = json::Value::array();
	for (std::size_t k = 0; shares && k < count; ++k) {
		json::Value s = json::Value::array();
		s.push_back(integer(shares[k].node_index));
		s.push_back(integer(shares[k].gpus));
		out.push_back(s);
	}
	return out;
}

json::Value view_json(const dlsched_cluster_view_t& cv)
{
	json::Value v = json::Value::object();
	v.set("now", num(cv.now));
	v.set("cycle", integer(static_cast<std::int64_t>(cv.cycle)));
	v.set("inference_demand", num(cv.inference_demand));
	const bool has_samples = cv.struct_size >= offsetof(dlsched_cluster_view_t, epoch_sample_count) +
							   sizeof cv.epoch_sample_count;
	const bool has_delay =
		cv.struct_size >= offsetof(dlsched_cluster_view_t, requeue_delay) + sizeof cv.requeue_delay;
	v.set("requeue_delay", num(has_delay ? cv.requeue_delay : 0));
	// Version 9: the jobs' accounts and the accounts as the host gave them (FairnessPolicy=).
	const bool has_accounts =
		cv.struct_size >= offsetof(dlsched_cluster_view_t, account_count) + sizeof cv.account_count;
	const bool jobs_have_account =
		cv.job_count &&
		cv.jobs[0].struct_size >= offsetof(dlsched_job_view_t, account) + sizeof(const char*);
	json::Value nodes = json::Value::array();
	for (std::size_t i = 0; i < cv.node_count; ++i) {
		const dlsched_node_view_t& n = element(cv.nodes, i);
		json::Value o = json::Value::object();
		o.set("name", text(n.name));
		o.set("gpus_total", integer(n.gpus_total));
		o.set("gpus_free", integer(n.gpus_free));
		o.set("gpu_type", text(n.gpu_type));
		o.set("partition", text(n.partition));
		o.set("kind", integer(n.kind));
		o.set("loanable", integer(n.loanable));
		o.set("loaned", integer(n.loaned));
		o.set("up", integer(n.up));
		nodes.push_back(o);
	}
	v.set("nodes", nodes);
	json::Value jobs = json::Value::array();
	for (std::size_t i = 0; i < cv.job_count; ++i) {
		const dlsched_job_view_t& j = element(cv.jobs, i);
		json::Value o = json::Value::object();
		o.set("job_id", integer(j.job_id));
		o.set("user", text(j.user));
		o.set("partition", text(j.partition));
		o.set("qos", text(j.qos));
		o.set("model", text(j.model));
		o.set("submit_time", num(j.submit_time));
		o.set("gpus_requested", integer(j.gpus_requested));
		o.set("gpus_min", integer(j.gpus_min));
		o.set("gpus_max", integer(j.gpus_max));
		o.set("epochs_total", num(j.epochs_total));
		o.set("epochs_done", num(j.epochs_done));
		o.set("epoch_time_1gpu", num(j.epoch_time_1gpu));
		o.set("time_limit", num(j.time_limit));
		o.set("deadline", num(j.deadline));
		o.set("state", integer(j.state));
		o.set("gpus_allocated", integer(j.gpus_allocated));
		o.set("shares", shares_json(j.shares, j.share_count));
		o.set("start_time", num(j.start_time));
		o.set("attained_gpu_s", num(j.attained_gpu_s));
		o.set("executed_s", num(j.executed_s));
		o.set("restarts", integer(j.restarts));
		o.set("last_stop_time", num(j.last_stop_time));
		o.set("last_run_s", num(j.last_run_s));
		o.set("requeueable", integer(j.requeueable));
		o.set("admin_priority", integer(j.admin_priority));
		o.set("nice", integer(j.nice));
		o.set("checkpoint_requested_at", num(j.checkpoint_requested_at));
		o.set("time_min", num(j.time_min));
		o.set("account", text(jobs_have_account ? j.account : nullptr));
		jobs.push_back(o);
	}
	v.set("jobs", jobs);
	json::Value accounts = json::Value::array();
	for (std::size_t i = 0; has_accounts && cv.accounts && i < cv.account_count; ++i) {
		const dlsched_account_view_t& a = element(cv.accounts, i);
		json::Value o = json::Value::object();
		o.set("name", text(a.name));
		o.set("quota_gpus", num(a.quota_gpus));
		o.set("shares", num(a.shares));
		o.set("usage_gpu_s", num(a.usage_gpu_s));
		accounts.push_back(o);
	}
	v.set("accounts", accounts);
	json::Value samples = json::Value::array();
	for (std::size_t i = 0; has_samples && cv.epoch_samples && i < cv.epoch_sample_count; ++i) {
		const dlsched_epoch_sample_t& s = cv.epoch_samples[i];
		json::Value o = json::Value::object();
		o.set("node", json::Value::string(std::string(s.node, strnlen(s.node, sizeof s.node))));
		o.set("model", json::Value::string(std::string(s.model, strnlen(s.model, sizeof s.model))));
		o.set("gpus", integer(s.gpus));
		o.set("nodes", integer(s.nodes));
		o.set("epochs", integer(s.epochs));
		o.set("epoch_s", num(s.epoch_s));
		o.set("at", num(s.at));
		samples.push_back(o);
	}
	v.set("epoch_samples", samples);
	return v;
}

json::Value decisions_json(const dlsched_decisions_t* d)
{
	json::Value out = json::Value::object();
	json::Value actions = json::Value::array();
	const std::size_t n = dlsched_decisions_count(d);
	for (std::size_t i = 0; i < n; ++i) {
		dlsched_action_t a;
		std::memset(&a, 0, sizeof a);
		a.struct_size = sizeof a;
		dlsched_error_t err;
		if (dlsched_decisions_get(d, i, &a, &err) != DLSCHED_OK)
			continue;
		json::Value o = json::Value::object();
		o.set("kind", integer(a.kind));
		o.set("job_id", integer(a.job_id));
		o.set("node_index", integer(a.node_index));
		o.set("gpus", integer(a.gpus));
		o.set("shares", shares_json(a.shares, a.share_count));
		o.set("priority", num(a.priority));
		o.set("reason", text(a.reason));
		o.set("grace", num(a.grace));
		o.set("predicted_suspend", num(a.predicted_suspend));
		o.set("predicted_resume", num(a.predicted_resume));
		o.set("admission", integer(a.admission));
		actions.push_back(o);
	}
	out.set("actions", actions);
	json::Value order = json::Value::array();
	std::size_t count = 0;
	const uint32_t* ids = dlsched_decisions_order(d, &count);
	for (std::size_t i = 0; ids && i < count; ++i)
		order.push_back(integer(ids[i]));
	out.set("order", order);
	return out;
}

json::Value prepared_json(const Job& j)
{
	json::Value o = json::Value::object();
	o.set("job_id", integer(j.id));
	o.set("model", integer(j.model));
	o.set("epochs_total", num(j.epochs_total));
	o.set("epochs_done", num(j.epochs_done));
	o.set("epoch_time_1gpu", num(j.epoch_time_1gpu));
	o.set("runtime_cv", num(j.runtime_cv));
	o.set("runtime_from_limit", json::Value::boolean(j.runtime_from_limit));
	json::Value c = json::Value::object();
	c.set("to_safe_point", num(j.preempt_cost.to_safe_point));
	c.set("checkpoint_write", num(j.preempt_cost.checkpoint_write));
	c.set("resume", num(j.preempt_cost.resume));
	c.set("since_checkpoint", num(j.preempt_cost.since_checkpoint));
	c.set("stddev", num(j.preempt_cost.stddev));
	c.set("measured", json::Value::boolean(j.preempt_cost.measured));
	o.set("preempt_cost", c);
	return o;
}

namespace {

// Reads fields of one JSON object, naming `where` in errors.
struct Reader {
	const json::Value& o;
	std::string where;
	Status st;

	double number(const char* key, bool null_is_nan = false)
	{
		const json::Value v = o.get(key);
		if (null_is_nan && v.is_valid() && v.is_null())
			return std::numeric_limits<double>::quiet_NaN();
		const auto d = v.is_valid() ? v.as_number() : std::nullopt;
		if (!d && st.is_ok())
			st = parse_error(where + "." + key + ": missing or not a number");
		return d ? *d : 0;
	}
	template <class T>
	T integral(const char* key)
	{
		const double d = number(key);
		if (st.is_ok() &&
		    (d != std::floor(d) || d < static_cast<double>(std::numeric_limits<T>::lowest()) ||
		     d > static_cast<double>(std::numeric_limits<T>::max())))
			st = parse_error(where + "." + key + ": not an integer in range");
		return st.is_ok() ? static_cast<T>(d) : T{};
	}
	bool boolean(const char* key)
	{
		const json::Value v = o.get(key);
		const auto b = v.is_valid() ? v.as_bool() : std::nullopt;
		if (!b && st.is_ok())
			st = parse_error(where + "." + key + ": missing or not true/false");
		return b && *b;
	}
	// NULL for JSON null; else a string the owned view keeps.
	const char* string(const char* key, std::deque<std::string>& keep)
	{
		const json::Value v = o.get(key);
		if (v.is_valid() && v.is_null())
			return nullptr;
		const auto s = v.is_valid() ? v.as_string() : std::nullopt;
		if (!s) {
			if (st.is_ok())
				st = parse_error(where + "." + key + ": missing or not a string");
			return nullptr;
		}
		keep.push_back(*s);
		return keep.back().c_str();
	}
	json::Value array(const char* key)
	{
		json::Value v = o.get(key);
		if (!v.is_valid() || !v.is_array()) {
			if (st.is_ok())
				st = parse_error(where + "." + key + ": missing or not an array");
			return json::Value::array();
		}
		return v;
	}
};

Status pairs(const json::Value& a, const std::string& where, std::vector<dlsched_share_t>& out)
{
	for (std::size_t k = 0; k < a.size(); ++k) {
		const json::Value p = a.at(k);
		const bool pair = p.is_array() && p.size() == 2 && p.at(0).is_number() && p.at(1).is_number();
		const double node = pair ? p.at(0).as_number().value_or(-1) : -1;
		const double gpus = pair ? p.at(1).as_number().value_or(0) : 0;
		if (!pair || node < 0 || node > 4294967295.0 || std::fabs(gpus) > 1e9)
			return parse_error(where + "[" + std::to_string(k) + "]: not [node_index, gpus]");
		out.push_back({static_cast<uint32_t>(node), static_cast<int>(gpus)});
	}
	return Status::ok();
}

}  // namespace

Status apply_prepared(const json::Value& p, Job& j)
{
	Reader r{p, "prepared job " + std::to_string(j.id), Status::ok()};
	j.epochs_total = r.number("epochs_total");
	j.epochs_done = r.number("epochs_done");
	j.epoch_time_1gpu = r.number("epoch_time_1gpu");
	j.runtime_cv = r.number("runtime_cv");
	j.runtime_from_limit = r.boolean("runtime_from_limit");
	const json::Value c = p.get("preempt_cost");
	if (!c.is_valid() || !c.is_object())
		return parse_error(r.where + ".preempt_cost: missing or not an object");
	Reader rc{c, r.where + ".preempt_cost", Status::ok()};
	j.preempt_cost.to_safe_point = rc.number("to_safe_point");
	j.preempt_cost.checkpoint_write = rc.number("checkpoint_write");
	j.preempt_cost.resume = rc.number("resume");
	j.preempt_cost.since_checkpoint = rc.number("since_checkpoint");
	j.preempt_cost.stddev = rc.number("stddev");
	j.preempt_cost.measured = rc.boolean("measured");
	return r.st.is_ok() ? rc.st : r.st;
}

Status parse_view(const json::Value& v, const std::string& source, OwnedView& out)
{
	if (!v.is_valid() || !v.is_object())
		return parse_error(source + ": view: missing or not an object");
	Reader r{v, source + ": view", Status::ok()};
	dlsched_cluster_view_t& cv = out.view;
	std::memset(&cv, 0, sizeof cv);
	cv.struct_size = sizeof cv;
	cv.now = r.number("now");
	cv.cycle = r.integral<std::uint64_t>("cycle");
	cv.inference_demand = r.number("inference_demand", true);
	cv.requeue_delay = r.number("requeue_delay");
	const json::Value nodes = r.array("nodes");
	const json::Value jobs = r.array("jobs");
	const json::Value samples = r.array("epoch_samples");
	if (!r.st.is_ok())
		return r.st;
	out.nodes.assign(nodes.size(), dlsched_node_view_t{});
	for (std::size_t i = 0; i < nodes.size(); ++i) {
		const json::Value o = nodes.at(i);
		Reader n{o, r.where + ".nodes[" + std::to_string(i) + "]", Status::ok()};
		dlsched_node_view_t& d = out.nodes[i];
		d.struct_size = sizeof d;
		d.name = n.string("name", out.strings);
		d.gpus_total = n.integral<int>("gpus_total");
		d.gpus_free = n.integral<int>("gpus_free");
		d.gpu_type = n.string("gpu_type", out.strings);
		d.partition = n.string("partition", out.strings);
		d.kind = n.integral<int>("kind");
		d.loanable = n.integral<int>("loanable");
		d.loaned = n.integral<int>("loaned");
		d.up = n.integral<int>("up");
		if (!o.is_object())
			return parse_error(n.where + ": not an object");
		if (!n.st.is_ok())
			return n.st;
	}
	out.jobs.assign(jobs.size(), dlsched_job_view_t{});
	for (std::size_t i = 0; i < jobs.size(); ++i) {
		const json::Value o = jobs.at(i);
		if (!o.is_object())
			return parse_error(r.where + ".jobs[" + std::to_string(i) + "]: not an object");
		Reader j{o, r.where + ".jobs[" + std::to_string(i) + "]", Status::ok()};
		dlsched_job_view_t& d = out.jobs[i];
		d.struct_size = sizeof d;
		d.job_id = j.integral<uint32_t>("job_id");
		d.user = j.string("user", out.strings);
		d.partition = j.string("partition", out.strings);
		d.qos = j.string("qos", out.strings);
		d.model = j.string("model", out.strings);
		d.submit_time = j.number("submit_time");
		d.gpus_requested = j.integral<int>("gpus_requested");
		d.gpus_min = j.integral<int>("gpus_min");
		d.gpus_max = j.integral<int>("gpus_max");
		d.epochs_total = j.number("epochs_total");
		d.epochs_done = j.number("epochs_done");
		d.epoch_time_1gpu = j.number("epoch_time_1gpu");
		d.time_limit = j.number("time_limit");
		d.deadline = j.number("deadline");
		d.state = j.integral<int>("state");
		d.gpus_allocated = j.integral<int>("gpus_allocated");
		out.shares.emplace_back();
		if (Status s = pairs(j.array("shares"), j.where + ".shares", out.shares.back()); !s.is_ok())
			return s;
		d.shares = out.shares.back().empty() ? nullptr : out.shares.back().data();
		d.share_count = out.shares.back().size();
		d.start_time = j.number("start_time");
		d.attained_gpu_s = j.number("attained_gpu_s");
		d.executed_s = j.number("executed_s");
		d.restarts = j.integral<int>("restarts");
		d.last_stop_time = j.number("last_stop_time");
		d.last_run_s = j.number("last_run_s");
		d.requeueable = j.integral<int>("requeueable");
		d.admin_priority = j.integral<uint32_t>("admin_priority");
		d.nice = j.integral<int>("nice");
		d.checkpoint_requested_at = j.number("checkpoint_requested_at");
		d.time_min = j.number("time_min");
		// Recordings from before accounts were dumped have none.
		d.account = o.get("account").is_valid() ? j.string("account", out.strings) : nullptr;
		if (!j.st.is_ok())
			return j.st;
	}
	const json::Value accounts = v.get("accounts");
	for (std::size_t i = 0; accounts.is_valid() && accounts.is_array() && i < accounts.size(); ++i) {
		const json::Value o = accounts.at(i);
		Reader a{o, r.where + ".accounts[" + std::to_string(i) + "]", Status::ok()};
		dlsched_account_view_t d{};
		d.struct_size = sizeof d;
		d.name = a.string("name", out.strings);
		d.quota_gpus = a.number("quota_gpus");
		d.shares = a.number("shares");
		d.usage_gpu_s = a.number("usage_gpu_s");
		if (!o.is_object())
			return parse_error(a.where + ": not an object");
		if (!a.st.is_ok())
			return a.st;
		out.accounts.push_back(d);
	}
	out.samples.assign(samples.size(), dlsched_epoch_sample_t{});
	for (std::size_t i = 0; i < samples.size(); ++i) {
		const json::Value o = samples.at(i);
		Reader s{o, r.where + ".epoch_samples[" + std::to_string(i) + "]", Status::ok()};
		dlsched_epoch_sample_t& d = out.samples[i];
		std::deque<std::string> names;
		const char* node = s.string("node", names);
		const char* model = s.string("model", names);
		if (node && std::strlen(node) < sizeof d.node)
			std::memcpy(d.node, node, std::strlen(node) + 1);
		else if (s.st.is_ok())
			s.st = parse_error(s.where + ".node: missing or longer than 64 characters");
		if (model && std::strlen(model) < sizeof d.model)
			std::memcpy(d.model, model, std::strlen(model) + 1);
		else if (s.st.is_ok())
			s.st = parse_error(s.where + ".model: missing or longer than 64 characters");
		d.gpus = s.integral<int>("gpus");
		d.nodes = s.integral<int>("nodes");
		d.epochs = s.integral<int>("epochs");
		d.epoch_s = s.number("epoch_s");
		d.at = s.number("at");
		if (!s.st.is_ok())
			return s.st;
	}
	cv.nodes = out.nodes.empty() ? nullptr : out.nodes.data();
	cv.node_count = out.nodes.size();
	cv.jobs = out.jobs.empty() ? nullptr : out.jobs.data();
	cv.job_count = out.jobs.size();
	cv.epoch_samples = out.samples.empty() ? nullptr : out.samples.data();
	cv.epoch_sample_count = out.samples.size();
	cv.accounts = out.accounts.empty() ? nullptr : out.accounts.data();
	cv.account_count = out.accounts.size();
	return Status::ok();
}

}  // namespace dlsched::capi
