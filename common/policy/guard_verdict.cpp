// The guard's verdict file: parse, format, staleness (guard_verdict.h).
#include "policy/guard_verdict.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace dlsched {

namespace {

// A finite number, the whole value.
bool parse_number(const std::string& s, double& out)
{
	if (s.empty())
		return false;
	errno = 0;
	char* end = nullptr;
	const double v = std::strtod(s.c_str(), &end);
	if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v))
		return false;
	out = v;
	return true;
}

std::string trim(const std::string& s)
{
	const auto b = s.find_first_not_of(" \t\r");
	if (b == std::string::npos)
		return "";
	const auto e = s.find_last_not_of(" \t\r");
	return s.substr(b, e - b + 1);
}

// At most 40 printable bytes of `s`, for an error message (the file is another process's claim).
std::string shown(const std::string& s)
{
	std::string out;
	for (char c : s.substr(0, 40))
		out += (c >= 0x20 && c < 0x7f) ? c : '?';
	return out;
}

}  // namespace

Result<GuardVerdictFile> parse_guard_verdict(const std::string& text, const std::string& name)
{
	GuardVerdictFile v;
	bool have_choice = false, have_at = false;
	std::istringstream in(text);
	std::string raw;
	int line = 0;
	while (std::getline(in, raw)) {
		++line;
		const std::string s = trim(raw);
		if (s.empty() || s[0] == '#')
			continue;
		const std::string where = name + ":" + std::to_string(line) + ": ";
		const auto eq = s.find('=');
		if (eq == std::string::npos)
			return parse_error(
				where + "'" + shown(s) +
				"' is not key=value; the verdict file is written by dlsched-guard(1)");
		const std::string key = trim(s.substr(0, eq));
		const std::string value = trim(s.substr(eq + 1));
		if (key == "choice") {
			if (value == "learned")
				v.choice = GuardChoice::kLearned;
			else if (value == "heuristic")
				v.choice = GuardChoice::kHeuristic;
			else
				return parse_error(where + "choice='" + shown(value) +
						   "' is neither learned nor heuristic");
			have_choice = true;
			continue;
		}
		double number = 0;
		if (key != "at" && key != "learned_jct" && key != "heuristic_jct" && key != "jobs" &&
		    key != "switches")
			return parse_error(where + "unknown key '" + shown(key) +
					   "' (choice, at, learned_jct, heuristic_jct, jobs, switches)");
		// Counts and times far beyond any real one are refused before they are converted.
		if (!parse_number(value, number) || number < 0 || number > 1e15)
			return parse_error(where + key + "='" + shown(value) +
					   "' is not a number in [0, 1e15]");
		if (key == "at") {
			v.at = number;
			have_at = true;
		} else if (key == "learned_jct") {
			v.learned_jct = number;
		} else if (key == "heuristic_jct") {
			v.heuristic_jct = number;
		} else if (key == "jobs") {
			v.jobs = static_cast<std::uint64_t>(number);
		} else {
			v.switches = static_cast<std::uint64_t>(number);
		}
	}
	if (!have_choice || !have_at)
		return parse_error(name + ": no " + (have_choice ? "at=" : "choice=") +
				   " line; the verdict file is written by dlsched-guard(1)");
	return v;
}

std::string format_guard_verdict(const GuardVerdictFile& v)
{
	char buf[512];
	std::snprintf(buf, sizeof(buf),
		      "# dlsched-guard verdict: who schedules until the next evaluation "
		      "(sched/dlsched, GuardVerdictFile=)\n"
		      "choice=%s\nat=%.0f\nlearned_jct=%.3f\nheuristic_jct=%.3f\njobs=%llu\nswitches=%llu\n",
		      guard_choice_name(v.choice), v.at, v.learned_jct, v.heuristic_jct,
		      static_cast<unsigned long long>(v.jobs), static_cast<unsigned long long>(v.switches));
	return buf;
}

std::string guard_verdict_stale(double at, double now, double interval)
{
	char buf[256];
	if (at > now + kGuardVerdictSkew) {
		std::snprintf(buf, sizeof(buf), "evaluated %.0f s in the future (clocks apart?): stale",
			      at - now);
		return buf;
	}
	if (now - at > 2 * interval) {
		std::snprintf(buf, sizeof(buf),
			      "evaluated %.0f s ago, more than twice GuardInterval=%.0f (is dlsched-guard "
			      "running?): stale",
			      now - at, interval);
		return buf;
	}
	return "";
}

}  // namespace dlsched
