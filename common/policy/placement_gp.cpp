// `gp-placement`: speed-aware placement, the placement agent of the dual-agent scheduler (Xing et
// al., KDD'23). On a heterogeneous cluster the node a job gets decides how fast it runs: a ResNet
// trains ten times slower on a K80 than on a V100, a recommendation model faster on a P100 than on
// either, and machines of one type differ by a few per cent to tens of per cent (thermal limits,
// links, neighbours). `pack` sees none of that; this policy ranks nodes by the speed that
// GpSpeedModel predicts for the job's model on each: the catalog's Gavel speed of the node's GPU
// type, corrected by what the cluster has measured (a Gaussian process with a random-walk kernel on
// the machine graph, Smola & Kondor 2003). With no measurements it is the catalog's type speed:
// still speed-aware, never worse informed than a type table.
//
// The same shapes as `pack`, because a synchronous data-parallel job runs at its slowest GPU and
// spanning nodes costs scaling: a job that fits on one node gets one node, the fastest predicted
// one with room (equally fast ones: best fit, keeping big holes for big jobs, then the lowest
// index), or waits for one; a larger job takes, among the fastest nodes, the fewest that hold it,
// trading a slower slowest node against fewer nodes by the model's measured speedup.
//
// Taking the fastest node free now is not always best: a week-long job that lands on a K80 because
// the V100s are busy for another hour runs for ten weeks. So a one-node job also waits when a
// faster node that is busy now would, by when its running jobs end (their remaining time at their
// predicted speeds), still finish it sooner than the best node free now would (by kWaitGain: the
// estimate is optimistic, other jobs may take that node first). A job never waits longer than it
// would run on the node free now; a job of unknown length (no epoch time) never waits.
//
// Deterministic (ties by node index; the fit depends only on the view) and cheap: the model is
// fitted on the first place() call of a cycle that brings new measurements (other cycles reuse it),
// and each (node, model) prediction is computed once per fit.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "policy/builtin_policies.h"
#include "policy/estimates.h"

namespace dlsched {

namespace {

// Most nested prefixes a multi-node placement compares (each costs a sort of the prefix).
constexpr int kMaxPrefixes = 64;
// A job waits for a busy faster node only when that finishes it at least this much sooner.
constexpr double kWaitGain = 0.8;

struct Candidate {
	NodeIndex node;
	int free;
	double speed;
};

}  // namespace

bool GpPlacement::FitKey::operator==(const FitKey& o) const
{
	return nodes == o.nodes && node_count == o.node_count && node_hash == o.node_hash &&
	       models == o.models && observations == o.observations &&
	       observation_count == o.observation_count && last.node == o.last.node &&
	       last.model == o.last.model &&
	       std::memcmp(&last.speed, &o.last.speed, sizeof last.speed) == 0 &&
	       last.at == o.last.at;  // the speed bitwise: a NaN measurement still matches itself
}

bool GpPlacement::CycleKey::operator==(const CycleKey& o) const
{
	return cycle == o.cycle && now == o.now && nodes == o.nodes && pending == o.pending &&
	       running == o.running && observations == o.observations &&
	       observation_count == o.observation_count;
}

GpSpeedModel& GpPlacement::model_for(const ClusterView& view) const
{
	CycleKey ck;
	ck.cycle = view.cycle;
	ck.now = view.now;
	ck.nodes = view.nodes.begin();
	ck.pending = view.pending.size();
	ck.running = view.running.size();
	ck.observations = view.observations.begin();
	ck.observation_count = view.observations.size();
	if (fitted_ && ck == cycle_key_)
		return model_;
	cycle_key_ = ck;

	FitKey k;
	k.nodes = view.nodes.begin();
	k.node_count = view.nodes.size();
	k.node_hash = 14695981039346656037ull;  // FNV-1a over the nodes' GPU types and partitions
	auto mix = [&k](unsigned char ch) { k.node_hash = (k.node_hash ^ ch) * 1099511628211ull; };
	for (const Node& node : view.nodes) {
		for (char ch : node.gpu_type)
			mix(static_cast<unsigned char>(ch));
		mix('\n');
		for (char ch : node.partition)
			mix(static_cast<unsigned char>(ch));
		mix('\n');
	}
	k.models = view.models;
	k.observations = view.observations.begin();
	k.observation_count = view.observations.size();
	if (!view.observations.empty())
		k.last = view.observations[view.observations.size() - 1];
	if (!fitted_ || !(k == fit_key_)) {
		model_.fit(view);
		fit_key_ = k;
		fitted_ = true;
	}

	// When each running job ends, at its predicted speed (its slowest node's).
	releases_.assign(view.nodes.size(), {});
	for (const Job* r : view.running) {
		double slowest = INFINITY;
		for (const NodeShare& sh : r->placement)
			if (sh.node < view.nodes.size())
				slowest = std::min(slowest, model_.predicted_speed(sh.node, r->model));
		const double left = view.models ? remaining_time(view, *r, r->gpus_allocated) / slowest : 0.0;
		for (const NodeShare& sh : r->placement)
			if (sh.node < view.nodes.size())
				releases_[sh.node].push_back({left, sh.gpus});
	}
	for (auto& list : releases_)
		std::sort(list.begin(), list.end());
	return model_;
}

double GpPlacement::seconds_until_free(NodeIndex node, int gpus, int free_now) const
{
	int have = free_now;
	for (const auto& rel : releases_[node]) {
		have += rel.second;
		if (have >= gpus)
			return rel.first;
	}
	return INFINITY;
}

bool GpPlacement::place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
			std::vector<NodeShare>& out) const
{
	out.clear();
	if (gpus <= 0)
		return false;
	std::lock_guard<std::mutex> lock(mutex_);
	GpSpeedModel& gp = model_for(view);
	const std::size_t n = free.node_count();

	// One node: the fastest predicted with room; equally fast: best fit, then lowest index.
	int best = -1;
	double best_speed = 0;
	for (std::size_t i = 0; i < n; ++i) {
		const NodeIndex node = static_cast<NodeIndex>(i);
		const int f = free.free(node);
		if (f < gpus || !free.eligible(job, node))
			continue;
		const double s = gp.predicted_speed(node, job.model);
		if (best < 0 || s > best_speed ||
		    (s == best_speed && f < free.free(static_cast<NodeIndex>(best)))) {
			best = static_cast<int>(i);
			best_speed = s;
		}
	}
	if (best >= 0) {
		// Wait for a faster node that is busy now, when that still finishes the job clearly sooner.
		const double work = view.models ? remaining_time(view, job, gpus) : 0.0;
		if (work > 0 && std::isfinite(work)) {
			const double finish_now = work / best_speed;
			for (std::size_t i = 0; i < n; ++i) {
				const NodeIndex node = static_cast<NodeIndex>(i);
				if (free.free(node) >= gpus || view.nodes[i].gpus_total < gpus ||
				    !free.eligible(job, node))
					continue;
				const double s = gp.predicted_speed(node, job.model);
				if (s <= best_speed || work / s >= kWaitGain * finish_now)
					continue;
				if (seconds_until_free(node, gpus, free.free(node)) + work / s <
				    kWaitGain * finish_now)
					return false;
			}
		}
		out.push_back({static_cast<NodeIndex>(best), gpus});
		return true;
	}
	int largest = 0;
	for (std::size_t i = 0; i < n; ++i)
		if (free.eligible(job, static_cast<NodeIndex>(i)))
			largest = std::max(largest, view.nodes[i].gpus_total);
	if (gpus <= largest)
		return false;  // fits on one node: wait for one

	// Several nodes. Fastest first (equally fast: most free, then index); for each prefix that can
	// hold the job, the fewest of its nodes that do (most free first) and the job's speed there:
	// speedup at that node count x the slowest node's speed. The best prefix wins (the shortest of
	// equal ones).
	std::vector<Candidate> cands;
	int total = 0, most_free = 0;
	for (std::size_t i = 0; i < n; ++i) {
		const NodeIndex node = static_cast<NodeIndex>(i);
		const int f = free.free(node);
		if (f > 0 && free.eligible(job, node)) {
			cands.push_back({node, f, gp.predicted_speed(node, job.model)});
			total += f;
			most_free = std::max(most_free, f);
		}
	}
	if (total < gpus)
		return false;
	std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
		return a.speed != b.speed ? a.speed > b.speed : a.free > b.free;
	});
	const int fewest_possible = (gpus + most_free - 1) / most_free;
	double best_rate = -1;
	std::vector<Candidate> prefix;
	int held = 0, compared = 0;
	for (std::size_t k = 0; k < cands.size(); ++k) {
		held += cands[k].free;
		if (held < gpus)
			continue;
		prefix.assign(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(k) + 1);
		std::stable_sort(prefix.begin(), prefix.end(),
				 [](const Candidate& a, const Candidate& b) { return a.free > b.free; });
		std::vector<NodeShare> shares;
		double slowest = INFINITY;
		int left = gpus;
		for (const Candidate& c : prefix) {
			if (left == 0)
				break;
			const int take = std::min(left, c.free);
			shares.push_back({c.node, take});
			slowest = std::min(slowest, c.speed);
			left -= take;
		}
		const int used = static_cast<int>(shares.size());
		const double rate = (view.models ? view.models->speedup(job.model, gpus, used)
						 : static_cast<double>(gpus)) *
				    slowest;
		if (rate > best_rate) {
			best_rate = rate;
			out = std::move(shares);
		}
		// Longer prefixes only add slower nodes: once at the fewest nodes possible, nothing improves.
		if (used <= fewest_possible || ++compared >= kMaxPrefixes)
			break;
	}
	return !out.empty();
}

}  // namespace dlsched
