#include "profiledb/experience.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace dlsched::db {

namespace {

template <class T>
json::Value number_array(const std::vector<T>& v)
{
	json::Value a = json::Value::array();
	for (const T& x : v)
		a.push_back(json::Value::number(static_cast<double>(x)));
	return a;
}

template <class T>
json::Value integer_array(const std::vector<T>& v)
{
	json::Value a = json::Value::array();
	for (const T& x : v)
		a.push_back(json::Value::integer(static_cast<std::int64_t>(x)));
	return a;
}

Status bad(const char* what, const std::string& why)
{
	return parse_error(std::string(what) + ": " + why);
}

Status number_field(const json::Value& o, const char* key, double& out)
{
	const json::Value v = o.get(key);
	const auto d = v.is_valid() ? v.as_number() : std::nullopt;
	if (!d || !std::isfinite(*d))
		return bad("state", std::string("\"") + key + "\" is missing or not a finite number");
	out = *d;
	return Status::ok();
}

Status int_field(const json::Value& o, const char* key, double lo, double hi, std::int64_t& out)
{
	double d = 0;
	Status st = number_field(o, key, d);
	if (!st.is_ok())
		return st;
	if (std::floor(d) != d || d < lo || d > hi)
		return bad("state", std::string("\"") + key + "\" is not an integer in [" +
					    std::to_string(static_cast<long long>(lo)) + ", " +
					    std::to_string(static_cast<long long>(hi)) + "]");
	out = static_cast<std::int64_t>(d);
	return Status::ok();
}

// Reads array `key` of `o` into `out`, each element a finite number in [lo, hi] (integral when
// `integral`), and exactly `want` elements.
template <class T>
Status array_field(const char* part, const json::Value& o, const char* key, std::size_t want, bool integral,
		   double lo, double hi, std::vector<T>& out)
{
	const json::Value a = o.get(key);
	if (!a.is_valid() || !a.is_array())
		return bad(part, std::string("\"") + key + "\" is missing or not an array");
	if (a.size() != want)
		return bad(part, std::string("\"") + key + "\" has " + std::to_string(a.size()) +
					 " entries, expected " + std::to_string(want));
	out.clear();
	out.reserve(want);
	for (std::size_t i = 0; i < want; ++i) {
		const auto d = a.at(i).as_number();
		if (!d || !std::isfinite(*d) || (integral && std::floor(*d) != *d) || *d < lo || *d > hi)
			return bad(part, std::string("\"") + key + "\"[" + std::to_string(i) +
						 "] is not a valid " + (integral ? "integer" : "number"));
		out.push_back(static_cast<T>(*d));
	}
	return Status::ok();
}

}  // namespace

json::Value experience_state(const PolicyStep& s)
{
	json::Value o = json::Value::object();
	o.set("schema", json::Value::integer(s.schema));
	o.set("rows", json::Value::integer(s.rows));
	o.set("features", json::Value::integer(s.features));
	o.set("x", number_array(s.x));
	o.set("context", number_array(s.context));
	o.set("ids", integer_array(s.ids));
	o.set("need", integer_array(s.need));
	const auto rows = static_cast<std::size_t>(std::max(0, s.rows));
	if (s.unit.size() == rows && s.after.size() == rows && s.size.size() == rows &&
	    s.held.size() == rows) {
		o.set("unit", integer_array(s.unit));  // allocation units (feature schema 2)
		o.set("after", integer_array(s.after));
		o.set("size", integer_array(s.size));
		o.set("held", integer_array(s.held));
	}
	o.set("free_gpus", json::Value::integer(s.free_gpus));
	o.set("in_system", json::Value::integer(s.in_system));
	o.set("value", json::Value::number(s.value));
	o.set("log_prob", json::Value::number(s.log_prob));
	o.set("sampled", json::Value::boolean(s.sampled));
	return o;
}

json::Value experience_action(const PolicyStep& s)
{
	json::Value o = json::Value::object();
	o.set("order", integer_array(s.order));
	return o;
}

double experience_reward(const PolicyStep& s)
{
	return -static_cast<double>(s.in_system);
}

Status parse_experience(const std::string& state_text, const std::string& action_text, PolicyStep& out)
{
	// Parse errors read "state:LINE:COLUMN: ..." (or "action:...").
	auto state = json::Value::parse(state_text, "state");
	if (!state.is_ok())
		return state.status();
	auto action = json::Value::parse(action_text, "action");
	if (!action.is_ok())
		return action.status();
	const json::Value& st = state.value();
	const json::Value& ac = action.value();
	if (!st.is_object())
		return bad("state", "not a JSON object");
	if (!ac.is_object())
		return bad("action", "not a JSON object");

	constexpr double kMaxInt = std::numeric_limits<int>::max();
	PolicyStep s;
	std::int64_t v = 0;
	Status r = int_field(st, "schema", 0, kMaxInt, v);
	if (!r.is_ok())
		return r;
	s.schema = static_cast<int>(v);
	if (!(r = int_field(st, "rows", 0, kMaxInt, v)).is_ok())
		return r;
	s.rows = static_cast<int>(v);
	if (!(r = int_field(st, "features", 0, kMaxInt, v)).is_ok())
		return r;
	s.features = static_cast<int>(v);
	if (!(r = int_field(st, "free_gpus", 0, kMaxInt, v)).is_ok())
		return r;
	s.free_gpus = static_cast<int>(v);
	if (!(r = int_field(st, "in_system", 0, kMaxInt, v)).is_ok())
		return r;
	s.in_system = static_cast<int>(v);
	if (!(r = number_field(st, "value", s.value)).is_ok())
		return r;
	if (!(r = number_field(st, "log_prob", s.log_prob)).is_ok())
		return r;
	const auto sampled = st.get("sampled").as_bool();
	if (!sampled)
		return bad("state", "\"sampled\" is missing or not a boolean");
	s.sampled = *sampled;

	const auto rows = static_cast<std::size_t>(s.rows);
	const double inf = std::numeric_limits<double>::infinity();
	const json::Value ctx = st.get("context");
	if (!(r = array_field("state", st, "x", rows * static_cast<std::size_t>(s.features), false, -inf, inf,
			      s.x))
		     .is_ok())
		return r;
	if (!(r = array_field("state", st, "context", ctx.is_array() ? ctx.size() : 0, false, -inf, inf,
			      s.context))
		     .is_ok())
		return r;
	if (!(r = array_field("state", st, "ids", rows, true, 0, std::numeric_limits<JobId>::max(), s.ids))
		     .is_ok())
		return r;
	if (!(r = array_field("state", st, "need", rows, true, 0, kMaxInt, s.need)).is_ok())
		return r;
	// Allocation units (feature schema 2): a row's unit, the row before it, the size it brings its
	// job to, the GPUs its job held. Rows of schema 1 have none: one row per job, its first unit.
	if (st.get("unit").is_valid()) {
		if (!(r = array_field("state", st, "unit", rows, true, -1, kMaxInt, s.unit)).is_ok())
			return r;
		if (!(r = array_field("state", st, "after", rows, true, -1,
				      rows ? static_cast<double>(rows - 1) : -1, s.after))
			     .is_ok())
			return r;
		if (!(r = array_field("state", st, "size", rows, true, 0, kMaxInt, s.size)).is_ok())
			return r;
		if (!(r = array_field("state", st, "held", rows, true, 0, kMaxInt, s.held)).is_ok())
			return r;
	} else {
		s.unit.assign(rows, 0);
		s.after.assign(rows, -1);
		s.size = s.need;
		s.held.assign(rows, 0);
	}
	// The rows picked, in order: at most every row, each once.
	const json::Value picks = ac.get("order");
	if (!(r = array_field("action", ac, "order",
			      picks.is_array() ? std::min<std::size_t>(picks.size(), rows) : 0, true, 0,
			      rows ? static_cast<double>(rows - 1) : 0, s.order))
		     .is_ok())
		return r;
	if (picks.is_array() && picks.size() > rows)
		return bad("action", "\"order\" has " + std::to_string(picks.size()) + " picks for " +
					     std::to_string(rows) + " rows");
	std::vector<bool> seen(rows, false);
	for (int o : s.order) {
		if (seen[static_cast<std::size_t>(o)])
			return bad("action", "\"order\" names row " + std::to_string(o) + " twice");
		seen[static_cast<std::size_t>(o)] = true;
	}
	s.cycle = out.cycle;
	s.now = out.now;
	out = std::move(s);
	return Status::ok();
}

}  // namespace dlsched::db
