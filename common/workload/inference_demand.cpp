#include "workload/inference_demand.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "util/csv.h"

namespace dlsched {

Result<InferenceDemand> InferenceDemand::load(const std::string& path)
{
	std::ifstream in(path);
	if (!in)
		return not_found(path +
				 ": cannot open the inference demand file (a CSV of time_s,demand rows)");
	std::ostringstream text;
	text << in.rdbuf();
	return parse(text.str(), path);
}

Result<InferenceDemand> InferenceDemand::parse(const std::string& text, const std::string& source)
{
	std::istringstream in(text);
	CsvReader csv(in, source);
	std::vector<CsvField> f;
	Status err;
	InferenceDemand d;
	bool first = true;
	while (csv.next(f, err)) {
		if (!err.is_ok())
			return err;
		if (first && !f.empty() && f[0].text == "time_s") {
			first = false;
			continue;
		}
		first = false;
		if (f.size() != 2)
			return invalid_argument(csv.where(1) + "expected 2 fields (time_s,demand), found " +
						std::to_string(f.size()));
		double t = 0, v = 0;
		if (!parse_number(f[0].text, t) || t < 0 || t > 1e10)
			return invalid_argument(csv.where(f[0].column) + "time_s '" + f[0].text +
						"' is not a number of seconds in [0, 1e10]");
		if (!parse_number(f[1].text, v) || v < 0 || v > 1)
			return invalid_argument(
				csv.where(f[1].column) + "demand '" + f[1].text +
				"' is not a fraction in [0, 1] (of the inference partition's GPUs)");
		if (!d.points_.empty() && t <= d.points_.back().time)
			return invalid_argument(csv.where(f[0].column) + "time_s " + f[0].text +
						" does not increase (times must be strictly increasing)");
		d.points_.push_back({t, v});
	}
	if (d.points_.empty())
		return invalid_argument(source + ": no demand rows (expected time_s,demand lines)");
	const std::size_t n = d.points_.size();
	d.period_ = n >= 2 ? d.points_[n - 1].time + (d.points_[n - 1].time - d.points_[n - 2].time)
			   : std::max(86400.0, d.points_[0].time + 1);
	return d;
}

double InferenceDemand::at(Seconds t) const
{
	if (points_.empty())
		return 0;
	if (t < 0)
		t = 0;
	t = std::fmod(t, period_);
	auto it = std::upper_bound(points_.begin(), points_.end(), t,
				   [](Seconds x, const Point& p) { return x < p.time; });
	if (it == points_.begin())
		return points_.front().demand;
	return std::prev(it)->demand;
}

Seconds InferenceDemand::next_change(Seconds t) const
{
	if (points_.size() < 2 && (points_.empty() || points_[0].time <= 0))
		return INFINITY;
	if (t < 0)
		return 0;
	const Seconds base = std::floor(t / period_) * period_;
	const Seconds in = t - base;
	auto it = std::upper_bound(points_.begin(), points_.end(), in,
				   [](Seconds x, const Point& p) { return x < p.time; });
	if (it != points_.end())
		return base + it->time;
	// Wraps: the series starts again at the next period (its first point's time, usually 0).
	return base + period_ + points_.front().time;
}

}  // namespace dlsched
