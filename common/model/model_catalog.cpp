#include "model/model_catalog.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace dlsched {

namespace {

// Node counts are tabulated 1..kMaxNodes; more nodes use the last column (never faster anyway).
constexpr int kMaxNodes = 64;

// A profile's measurements grouped by node count: node count -> sorted (log gpus, per-GPU efficiency).
using Curves = std::map<int, std::vector<std::pair<double, double>>>;

Curves group_by_nodes(const ModelProfile& p)
{
	std::map<int, std::map<int, std::pair<double, int>>> sums;  // nodes -> gpus -> (sum, count)
	for (const ScalingPoint& s : p.points) {
		auto& e = sums[s.nodes][s.gpus];
		e.first += s.speedup / s.gpus;
		e.second += 1;
	}
	Curves c;
	for (const auto& n : sums)
		for (const auto& g : n.second)
			c[n.first].push_back(
				{std::log(static_cast<double>(g.first)), g.second.first / g.second.second});
	return c;
}

// The curve measured at the node count nearest to `nodes` (in log space; ties: fewer nodes).
const std::vector<std::pair<double, double>>* nearest_curve(const Curves& c, int nodes)
{
	const std::vector<std::pair<double, double>>* best = nullptr;
	double best_d = INFINITY;
	for (const auto& kv : c) {
		double d = std::fabs(std::log(static_cast<double>(kv.first)) -
				     std::log(static_cast<double>(nodes)));
		if (d < best_d - 1e-12) {
			best_d = d;
			best = &kv.second;
		}
	}
	return best;
}

// Per-GPU efficiency at `gpus` on a curve: linear in log(gpus), constant outside the measured range.
double efficiency(const std::vector<std::pair<double, double>>* curve, int gpus)
{
	if (!curve || curve->empty())
		return 1.0;
	const double x = std::log(static_cast<double>(gpus));
	if (x <= curve->front().first)
		return curve->front().second;
	if (x >= curve->back().first)
		return curve->back().second;
	for (std::size_t i = 1; i < curve->size(); ++i) {
		const auto& b = (*curve)[i];
		if (x <= b.first) {
			const auto& a = (*curve)[i - 1];
			return a.second + (b.second - a.second) * (x - a.first) / (b.first - a.first);
		}
	}
	return curve->back().second;
}

}  // namespace

int ModelCatalog::add(ModelProfile profile)
{
	// Tabulate speedup[nodes][gpus] once so that speedup() is O(1) in policies' inner loops.
	std::vector<std::vector<double>> t(kMaxNodes + 1, std::vector<double>(kMaxGpus + 1, 0.0));
	const Curves curves = group_by_nodes(profile);
	for (int n = 1; n <= kMaxNodes; ++n) {
		const auto* curve = nearest_curve(curves, n);
		for (int g = n; g <= kMaxGpus; ++g) {  // fewer GPUs than nodes is impossible
			double s = g * efficiency(curve, g);
			// Guarantees (clips): another GPU never lowers throughput; more nodes are never
			// faster.
			if (g > n)
				s = std::max(s, t[n][g - 1]);
			if (n > 1)
				s = std::min(s, t[n - 1][g]);
			t[n][g] = s;
		}
		for (int g = 1; g < n; ++g)
			t[n][g] = t[g][g];
	}
	// Normalise so that one GPU on one node is exactly 1.
	const double base = t[1][1] > 0 ? t[1][1] : 1.0;
	for (auto& row : t)
		for (double& v : row)
			v /= base;

	int index = find(profile.name);
	if (index >= 0) {
		profiles_[index] = std::move(profile);
		table_[index] = std::move(t);
		return index;
	}
	profiles_.push_back(std::move(profile));
	table_.push_back(std::move(t));
	return static_cast<int>(profiles_.size()) - 1;
}

int ModelCatalog::find(std::string_view name) const
{
	for (std::size_t i = 0; i < profiles_.size(); ++i)
		if (profiles_[i].name == name)
			return static_cast<int>(i);
	return -1;
}

double ModelCatalog::speedup(int model, int gpus, int nodes) const
{
	if (gpus <= 0)
		return 0.0;
	if (model < 0 || model >= size())
		return static_cast<double>(gpus);
	const int g = std::min(gpus, kMaxGpus);
	const int n = std::max(1, std::min(nodes, std::min(g, kMaxNodes)));
	return table_[model][n][g];  // beyond kMaxGpus: no further gain
}

double ModelCatalog::epoch_time_1gpu(int model) const
{
	if (model < 0 || model >= size())
		return 0.0;
	const ModelProfile& p = profiles_[static_cast<std::size_t>(model)];
	return p.samples_per_s_1gpu > 0 && p.samples_per_epoch > 0
		       ? p.samples_per_epoch / p.samples_per_s_1gpu
		       : 0.0;
}

double ModelCatalog::gpu_speed(int model, const std::string& gpu_type) const
{
	if (model < 0 || model >= size() || gpu_type.empty())
		return 1.0;
	const auto& m = profiles_[model].gpu_speed;
	auto it = m.find(gpu_type);
	return it == m.end() ? 1.0 : it->second;
}

double ModelCatalog::placed_speedup(int model, int gpus, int nodes,
				    const std::vector<std::string>& gpu_types) const
{
	double slowest = gpu_types.empty() ? 1.0 : INFINITY;
	for (const std::string& t : gpu_types)
		slowest = std::min(slowest, gpu_speed(model, t));
	return speedup(model, gpus, nodes) * slowest;
}

std::vector<std::string> ModelCatalog::gpu_types() const
{
	std::set<std::string> types;
	for (const ModelProfile& p : profiles_)
		for (const auto& kv : p.gpu_speed)
			types.insert(kv.first);
	return {types.begin(), types.end()};
}

}  // namespace dlsched
