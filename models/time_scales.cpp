#include "time_scales.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "policy/estimates.h"

namespace dlsched::models {

void QuantileWindow::add(double v)
{
	if (!std::isfinite(v) || v < 0 || capacity_ == 0)
		return;
	if (values_.size() < capacity_) {
		values_.push_back(v);
		return;
	}
	values_[next_] = v;
	next_ = (next_ + 1) % capacity_;
}

double QuantileWindow::quantile(double q) const
{
	if (values_.empty())
		return 0;
	std::vector<double> v = values_;
	const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
	const auto k = static_cast<std::ptrdiff_t>(std::floor(at));
	std::nth_element(v.begin(), v.begin() + k, v.end());
	return v[static_cast<std::size_t>(k)];
}

std::vector<double> QuantileWindow::points(std::size_t n) const
{
	std::vector<double> out;
	if (values_.empty() || n == 0)
		return out;
	std::vector<double> v = values_;
	std::sort(v.begin(), v.end());
	for (std::size_t i = 0; i < n; ++i) {
		// The midpoints of n equal slices of the ranks, to the nearest rank.
		const double at = (static_cast<double>(i) + 0.5) / static_cast<double>(n) *
				  static_cast<double>(v.size() - 1);
		out.push_back(v[static_cast<std::size_t>(std::lround(at))]);
	}
	return out;
}

TimeScales::TimeScales(const ScalePrior& prior, double time_scale)
    : default_s_(3600.0 / (time_scale > 0 ? time_scale : 1.0)),
      last_now_(-std::numeric_limits<double>::infinity())
{
	const double k = time_scale > 0 ? time_scale : 1.0;
	for (double v : prior.length_s)
		if (v > 0)
			lengths_.add(v / k);
	for (double v : prior.wait_s)
		waits_.add(v / k);
	update();
}

double estimated_length(const ClusterView& view, const Job& j)
{
	if (j.epoch_time_1gpu <= 0 || j.epochs_total <= 0 || !view.models)
		return 0;
	const int req = std::max(1, j.gpus_requested);
	const int per_node = node_size_hint(view);
	const int nodes = (req + per_node - 1) / per_node;
	const double s = view.models->speedup(j.model, req, nodes);
	const double t = j.epochs_total * j.epoch_time_1gpu / (s > 0 ? s : 1.0);
	return std::isfinite(t) ? t : 0;
}

void TimeScales::observe(const ClusterView& view)
{
	if (!(view.now > last_now_))
		return;
	auto seen = [&](const Job& j) {
		if (j.submit_time > last_now_) {
			const double len = estimated_length(view, j);
			if (len > 0)
				lengths_.add(len);
		}
		if (j.first_start_time >= 0 && j.first_start_time > last_now_ &&
		    j.first_start_time <= view.now)
			waits_.add(std::max(0.0, j.first_start_time - j.submit_time));
	};
	for (const Job* j : view.pending)
		seen(*j);
	for (const Job* j : view.running)
		seen(*j);
	last_now_ = view.now;
	update();
}

void TimeScales::update()
{
	const double len = lengths_.size() ? lengths_.quantile(0.5) : 0;
	length_ = len > 0 ? len : default_s_;
	const double w = waits_.size() ? waits_.quantile(0.9) : length_;
	wait_ = std::max(w, length_ / 10);
}

ScalePrior TimeScales::prior() const
{
	return ScalePrior{lengths_.points(kPriorPoints), waits_.points(kPriorPoints)};
}

}  // namespace dlsched::models
