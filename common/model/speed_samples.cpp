#include "model/speed_samples.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace dlsched {

namespace {

// The median of positive numbers in log space: the middle one, or the geometric mean of the middle
// two (a speed twice and half another's are equally far from it).
double log_median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	const std::size_t n = v.size();
	if (n == 0)
		return 0;
	return n % 2 ? v[n / 2] : std::sqrt(v[n / 2 - 1] * v[n / 2]);
}

bool positive(double x)
{
	return x > 0 && std::isfinite(x);
}

}  // namespace

double steady_epoch_seconds(const std::vector<double>& epoch_seconds)
{
	if (epoch_seconds.size() < 2)
		return 0;
	std::vector<double> steady(epoch_seconds.begin() + 1, epoch_seconds.end());
	for (double s : steady)
		if (!positive(s))
			return 0;
	std::sort(steady.begin(), steady.end());
	const std::size_t n = steady.size();
	return n % 2 ? steady[n / 2] : (steady[n / 2 - 1] + steady[n / 2]) / 2;
}

std::vector<SpeedObservation> speed_observations(const std::vector<EpochSample>& samples,
						 Span<const Node> nodes, const ModelCatalog& models)
{
	struct Usable {
		const EpochSample* sample;
		int model;         // catalog index, -1 unknown
		double one_gpu_s;  // its epoch on one GPU of its node
	};
	// By model name: the usable samples, and per node the reference-GPU epoch times its runs imply.
	std::map<std::string, std::vector<Usable>> by_model;
	std::map<std::string, std::map<NodeIndex, std::vector<double>>> implied;
	for (const EpochSample& s : samples) {
		if (s.node >= nodes.size() || s.nodes != 1 || s.gpus < 1 || !positive(s.epoch_s) ||
		    !std::isfinite(s.at))
			continue;
		const int m = s.model.empty() ? -1 : models.find(s.model);
		const double one_gpu_s = s.epoch_s * models.speedup(m, s.gpus, 1);
		if (!positive(one_gpu_s))
			continue;
		by_model[s.model].push_back({&s, m, one_gpu_s});
		// A node of the reference type at its catalog speed would take this long: faster types
		// (speed > 1) did the same epoch in less time.
		implied[s.model][s.node].push_back(one_gpu_s * models.gpu_speed(m, nodes[s.node].gpu_type));
	}
	// Each observation with its model's name, for a deterministic order.
	std::vector<std::pair<std::string, SpeedObservation>> named;
	for (const auto& [name, usable] : by_model) {
		const auto& per_node = implied[name];
		if (per_node.size() < 2)
			continue;  // one node: nothing to compare it with
		std::vector<double> node_refs;
		for (const auto& kv : per_node)
			node_refs.push_back(log_median(kv.second));
		const double reference_s = log_median(node_refs);  // one reference GPU's epoch of this model
		for (const Usable& u : usable) {
			SpeedObservation o;
			o.node = u.sample->node;
			o.model = u.model;
			o.speed = reference_s / u.one_gpu_s;
			o.at = u.sample->at;
			named.emplace_back(name, o);
		}
	}
	// Oldest first (ClusterView::observations); equal times by node, then by the model's name.
	std::stable_sort(named.begin(), named.end(), [](const auto& a, const auto& b) {
		if (a.second.at != b.second.at)
			return a.second.at < b.second.at;
		if (a.second.node != b.second.node)
			return a.second.node < b.second.node;
		return a.first < b.first;
	});
	std::vector<SpeedObservation> out;
	out.reserve(named.size());
	for (const auto& n : named)
		out.push_back(n.second);
	return out;
}

}  // namespace dlsched
