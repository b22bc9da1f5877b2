#include "returns.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace dlsched::train {

RoundChanges round_changes(const PolicyStep& s)
{
	RoundChanges c;
	const std::size_t n = s.ids.size();
	if (s.held.size() != n || s.size.size() != n)
		return c;
	std::unordered_map<JobId, int> got;  // running job -> GPUs its picked units reach
	for (std::size_t r = 0; r < n; ++r)
		if (s.held[r] > 0)
			got.emplace(s.ids[r], 0);
	for (int p : s.order) {
		const auto r = static_cast<std::size_t>(p);
		if (p < 0 || r >= n || s.held[r] <= 0)
			continue;
		int& g = got[s.ids[r]];
		g = std::max(g, s.size[r]);
	}
	for (std::size_t r = 0; r < n; ++r) {
		if (s.held[r] <= 0 || s.unit[r] != 0)
			continue;  // one count per running job: at its first unit's row
		const int g = got[s.ids[r]];
		if (g == 0)
			++c.preempted;
		else if (g != s.held[r])
			++c.resized;
	}
	return c;
}

double round_reward(const PolicyStep& s, double dt, const Reward& r)
{
	double penalty = 0;
	if (r.preemption_penalty_s > 0 || r.resize_penalty_s > 0) {
		const RoundChanges c = round_changes(s);
		penalty = static_cast<double>(c.preempted) * r.preemption_penalty_s +
			  static_cast<double>(c.resized) * r.resize_penalty_s;
	}
	return -(s.in_system * dt + penalty) / 3600.0;
}

std::vector<double> episode_returns(const std::vector<PolicyStep>& steps, Seconds end, const Reward& r)
{
	std::vector<double> ret(steps.size(), 0.0);
	double g = 0;
	for (std::size_t k = steps.size(); k-- > 0;) {
		const PolicyStep& s = steps[k];
		const Seconds next = k + 1 < steps.size() ? steps[k + 1].now : std::max(end, s.now);
		const double dt = std::max(0.0, next - s.now);
		g = round_reward(s, dt, r) + std::exp(-dt / r.horizon_s) * g;
		ret[k] = g;
	}
	return ret;
}

double return_at(const std::vector<PolicyStep>& steps, const std::vector<double>& ret, Seconds end, Seconds t,
		 double horizon_s)
{
	if (steps.empty())
		return 0;
	// The last step at or before t (the first one when t is earlier).
	std::size_t lo = 0, hi = steps.size();
	while (hi - lo > 1) {
		const std::size_t mid = (lo + hi) / 2;
		(steps[mid].now <= t ? lo : hi) = mid;
	}
	if (t < steps[lo].now)
		return ret[lo];
	const Seconds next = lo + 1 < steps.size() ? steps[lo + 1].now : std::max(end, t);
	const double dt = std::max(0.0, next - t);
	const double tail = lo + 1 < steps.size() ? ret[lo + 1] : 0.0;
	return -steps[lo].in_system * dt / 3600.0 + std::exp(-dt / horizon_s) * tail;
}

std::vector<double> sibling_advantages(const std::vector<Rollout>& group, std::size_t i, double horizon_s)
{
	const std::vector<PolicyStep>& steps = *group[i].steps;
	const std::vector<double>& ret = *group[i].ret;
	std::vector<double> a(ret);
	if (group.size() < 2)
		return a;
	for (std::size_t k = 0; k < steps.size(); ++k) {
		double b = 0;
		for (std::size_t j = 0; j < group.size(); ++j)
			if (j != i)
				b += return_at(*group[j].steps, *group[j].ret, group[j].end, steps[k].now,
					       horizon_s);
		a[k] = ret[k] - b / static_cast<double>(group.size() - 1);
	}
	return a;
}

double stddev(const std::vector<double>& v)
{
	if (v.size() < 2)
		return 1;
	const double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
	double s = 0;
	for (double x : v)
		s += (x - m) * (x - m);
	return std::max(1e-6, std::sqrt(s / static_cast<double>(v.size() - 1)));
}

void normalise(std::vector<double>& v)
{
	if (v.empty())
		return;
	const double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
	const double sd = stddev(v);
	for (double& x : v)
		x = (x - m) / sd;
}

}  // namespace dlsched::train
