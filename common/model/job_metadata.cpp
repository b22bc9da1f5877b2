#include "model/job_metadata.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dlsched {

namespace {

bool separator(char c)
{
	return std::isspace(static_cast<unsigned char>(c)) || c == ',';
}

// The number that is the whole of `v`, if it lies in (0, max]: decimal digits, a point and an
// exponent only (no hex, inf or nan), finite. `integer`: digits only.
bool number(std::string_view v, double max, bool integer, double& out)
{
	if (v.empty() || v.size() >= 32)
		return false;
	for (char c : v)
		if (!std::isdigit(static_cast<unsigned char>(c)) &&
		    (integer || std::string_view(".eE+-").find(c) == std::string_view::npos))
			return false;
	const std::string s(v);
	char* end = nullptr;
	errno = 0;
	const double d = std::strtod(s.c_str(), &end);
	if (*end || errno || !std::isfinite(d) || !(d > 0 && d <= max))
		return false;
	out = d;
	return true;
}

bool model_name(std::string_view v)
{
	if (v.empty() || v.size() > kMaxModelName)
		return false;
	for (char c : v)
		if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
			return false;
	return true;
}

std::string bounds(double max, bool integer)
{
	char buf[64];
	std::snprintf(buf, sizeof buf, integer ? "a whole number in [1, %.0f]" : "a number in (0, %g]", max);
	return buf;
}

// One `key=value`: true when the key is one of ours (whether or not its value was good).
bool take(std::string_view key, std::string_view value, JobMetadata& m, const char* shown)
{
	double v = 0;
	auto bad = [&](const std::string& what) {
		m.problems.push_back(std::string(shown) + "=" + std::string(value) + ": " + what);
	};
	if (key == "model") {
		if (model_name(value))
			m.model = std::string(value);
		else
			bad("not a model name (1 to 64 letters, digits, '-', '_', '.')");
	} else if (key == "epochs") {
		if (number(value, kMaxEpochs, false, v))
			m.epochs = v;
		else
			bad("not " + bounds(kMaxEpochs, false));
	} else if (key == "epoch_time_1gpu") {
		if (number(value, kMaxEpochTime, false, v))
			m.epoch_time_1gpu = v;
		else
			bad("not " + bounds(kMaxEpochTime, false));
	} else if (key == "gpus_min" || key == "gpus_max") {
		if (number(value, kMaxJobGpus, true, v))
			(key == "gpus_min" ? m.gpus_min : m.gpus_max) = static_cast<int>(v);
		else
			bad("not " + bounds(kMaxJobGpus, true));
	} else if (key == "deadline") {
		if (number(value, kMaxDeadline, true, v))
			m.deadline = v;
		else
			bad("not a time in seconds since the epoch");
	} else {
		return false;
	}
	return true;
}

// A range given the wrong way round is no range.
void check_range(JobMetadata& m)
{
	if (m.gpus_min > 0 && m.gpus_max > 0 && m.gpus_min > m.gpus_max) {
		m.problems.push_back("gpus_min=" + std::to_string(m.gpus_min) + " gpus_max=" +
				     std::to_string(m.gpus_max) + ": MIN above MAX; not elastic");
		m.gpus_min = m.gpus_max = 0;
	}
}

}  // namespace

void parse_job_words(std::string_view comment, JobMetadata& m)
{
	std::size_t i = 0;
	while (i < comment.size()) {
		while (i < comment.size() && separator(comment[i]))
			++i;
		std::size_t end = i;
		while (end < comment.size() && !separator(comment[end]))
			++end;
		const std::string_view word = comment.substr(i, end - i);
		const std::size_t eq = word.find('=');
		if (eq != std::string_view::npos) {
			const std::string key(word.substr(0, eq));
			(void)take(key, word.substr(eq + 1), m, key.c_str());
		}
		i = end;
	}
	check_range(m);
}

void parse_job_env(const std::vector<std::string_view>& env, JobMetadata& m)
{
	for (std::string_view e : env) {
		if (e.substr(0, 6) == "SPANK_")
			e.remove_prefix(6);
		if (e.substr(0, 9) == "DL_MODEL=") {
			(void)take("model", e.substr(9), m, "DL_MODEL");
		} else if (e.substr(0, 10) == "DL_EPOCHS=") {
			(void)take("epochs", e.substr(10), m, "DL_EPOCHS");
		} else if (e.substr(0, 11) == "DL_ELASTIC=") {
			// MIN:MAX, both or neither.
			const std::string_view v = e.substr(11);
			const std::size_t colon = v.find(':');
			double lo = 0, hi = 0;
			if (colon != std::string_view::npos &&
			    number(v.substr(0, colon), kMaxJobGpus, true, lo) &&
			    number(v.substr(colon + 1), kMaxJobGpus, true, hi) && lo <= hi) {
				m.gpus_min = static_cast<int>(lo);
				m.gpus_max = static_cast<int>(hi);
			} else {
				m.problems.push_back("DL_ELASTIC=" + std::string(v) +
						     ": not MIN:MAX with 1 <= MIN <= MAX <= " +
						     std::to_string(kMaxJobGpus));
			}
		}
	}
	check_range(m);
}

DeadlineClaim judge_deadline_word(double word, double first_seen, double earliest_start, double time_min_s)
{
	DeadlineClaim c;
	if (!(word > 0))
		return c;
	auto secs = [](double t) { return std::to_string(static_cast<long long>(std::llround(t))); };
	if (first_seen > 0) {
		c.deadline = first_seen;
		if (std::llround(word) != std::llround(first_seen))
			c.problem = "deadline=" + secs(word) + " ignored: the deadline first seen, " +
				    secs(first_seen) + ", stands (a comment changed later does not move it)";
		return c;
	}
	const double earliest_end = earliest_start + std::max(0.0, time_min_s);
	if (word <= earliest_end) {
		c.problem = "deadline=" + secs(word) + " ignored: not after the job's earliest start" +
			    (time_min_s > 0 ? " + --time-min" : "") + " (" + secs(earliest_end) +
			    "), as Slurm refuses such a --deadline";
		return c;
	}
	c.deadline = word;
	return c;
}

}  // namespace dlsched
