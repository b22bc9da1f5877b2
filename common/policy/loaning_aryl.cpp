// `aryl`: capacity loaning (Li et al., "Lyra: Elastic Scheduling for Deep Learning Clusters",
// EuroSys'23; the system was called Aryl in its preprint). Inference servers that inference does not
// need are lent to training; when inference demand rises, loaned servers are taken back in
// increasing order of their server preemption cost, and the costs are updated as servers are chosen.
//
// Our reading, written from the paper:
//   - Inference needs ceil(demand x inference nodes) + LoanHeadroom= nodes; non-loanable inference
//     nodes serve it first, the loanable rest is lent. Only fully idle nodes are lent (a node still
//     draining from a reclaim is not lent again before it is free).
//   - The cost of returning node n, given the nodes already chosen: for each training job on n that
//     is not stopping already, nothing when it is elastic and what it keeps off the returned nodes
//     is at least the size it asked for (the node held only elastic surplus: it is shrunk); a
//     resize's loss (checkpoint write + resume, x GPUs) when it keeps less but at least its minimum
//     (shrunk below its size, a restart); otherwise the
//     GPU-seconds preempting it loses (PreemptionCost::stop_loss, as the overhead preemption
//     counts it: checkpoint write + resume, or, when its safe point lies beyond ReclaimTimeout=,
//     the work since its last checkpoint + the timeout + resume), counted once per job. Ties: the node
//     holding fewer training GPUs, then the lower index.
//   - Jobs to shrink get a resize to what they keep; jobs to preempt are requeued with
//     ReclaimTimeout= as their grace, so every returned node is free within the timeout.
// Jobs that cannot be requeued never run on loaned nodes (FreeMap::eligible), so a reclaim never has
// to kill one.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "policy/builtin_policies.h"

namespace dlsched {

namespace {

// GPU-seconds lost when `j` is asked to checkpoint and stop within `grace` seconds, or is resized.
double preempt_loss(const Job& j, double grace)
{
	return std::max(1, j.gpus_allocated) * j.preempt_cost.stop_loss(grace);
}

double resize_loss(const Job& j)
{
	return std::max(1, j.gpus_allocated) * j.preempt_cost.restart_loss();
}

// Down to here an elastic job holds only surplus above the size it asked for.
int surplus_floor(const Job& j)
{
	return std::clamp(j.gpus_requested, j.gpus_min, j.gpus_max);
}

}  // namespace

int ArylLoaning::inference_nodes_needed(const ClusterView& view) const
{
	int inference = 0;
	for (const Node& n : view.nodes)
		if (n.kind == PartitionKind::kInference)
			++inference;
	const double d = std::clamp(view.inference_demand, 0.0, 1.0);
	const int need = static_cast<int>(std::ceil(d * inference - 1e-9)) + headroom_;
	return std::min(need, inference);
}

void ArylLoaning::plan(const ClusterView& view, std::vector<Action>& out) const
{
	int inference = 0, fixed = 0;  // inference nodes; those that cannot be lent
	std::vector<NodeIndex> loaned, lendable;
	for (const Node& n : view.nodes) {
		if (n.kind != PartitionKind::kInference)
			continue;
		++inference;
		if (n.loaned) {  // even when down: it is taken back like any other
			loaned.push_back(n.index);
			continue;
		}
		if (!n.loanable || !n.up) {
			++fixed;
			continue;
		}
		if (n.gpus_free == n.gpus_total)
			lendable.push_back(n.index);
	}
	if (inference == 0)
		return;
	const int need = inference_nodes_needed(view);
	// Loanable nodes that may be lent: all of them but what inference needs beyond the nodes that
	// are never lent.
	const int allowed = std::max(0, (inference - fixed) - std::max(0, need - fixed));
	const int have = static_cast<int>(loaned.size());
	if (have < allowed) {
		for (std::size_t k = 0; k < lendable.size() && have + static_cast<int>(k) < allowed; ++k) {
			Action a;
			a.kind = ActionKind::kLoan;
			a.node = lendable[k];
			a.reason = "lent to training (inference needs " + std::to_string(need) + " of " +
				   std::to_string(inference) + " nodes)";
			out.push_back(std::move(a));
		}
		return;
	}
	if (have == allowed)
		return;

	// Reclaim have - allowed nodes, cheapest first, costs updated after each choice.
	std::map<const Job*, int> off;   // GPUs each affected job loses on the nodes chosen
	std::set<const Job*> preempted;  // jobs the chosen nodes preempt
	std::vector<std::vector<const Job*>> on(view.nodes.size());
	for (const Job* r : view.running)
		for (const NodeShare& s : r->placement)
			if (s.node < on.size())
				on[s.node].push_back(r);
	auto share_on = [](const Job* j, NodeIndex n) {
		int g = 0;
		for (const NodeShare& s : j->placement)
			if (s.node == n)
				g += s.gpus;
		return g;
	};
	std::vector<NodeIndex> chosen;
	std::vector<bool> taken(view.nodes.size(), false);
	for (int k = 0; k < have - allowed; ++k) {
		NodeIndex best = 0;
		double best_cost = INFINITY;
		int best_held = 0;
		bool found = false;
		for (NodeIndex n : loaned) {
			if (taken[n])
				continue;
			double cost = 0;
			int held = 0;
			for (const Job* j : on[n]) {
				held += share_on(j, n);
				if (j->stopping() || preempted.count(j))
					continue;
				auto it = off.find(j);
				const int lost = (it == off.end() ? 0 : it->second) + share_on(j, n);
				const int keeps = j->gpus_allocated - lost;
				if (j->elastic() && j->requeueable && keeps >= surplus_floor(*j))
					continue;  // only surplus: shrunk at no cost
				if (j->elastic() && j->requeueable && keeps >= j->gpus_min)
					cost += resize_loss(*j);  // shrunk below its size: a restart
				else
					cost += preempt_loss(*j, timeout_);
			}
			if (!found || cost < best_cost || (cost == best_cost && held < best_held)) {
				best = n;
				best_cost = cost;
				best_held = held;
				found = true;
			}
		}
		if (!found)
			break;
		taken[best] = true;
		chosen.push_back(best);
		for (const Job* j : on[best]) {
			if (j->stopping() || preempted.count(j))
				continue;
			const int lost = (off.count(j) ? off[j] : 0) + share_on(j, best);
			if (j->elastic() && j->requeueable && j->gpus_allocated - lost >= j->gpus_min)
				off[j] = lost;
			else {
				preempted.insert(j);
				off.erase(j);
			}
		}
	}
	// Jobs first (the host frees the nodes), then the nodes.
	for (const Job* r : view.running) {
		if (preempted.count(r)) {
			Action a;
			a.kind = ActionKind::kRequeue;
			a.job = r->id;
			a.grace = timeout_;
			a.predicted_suspend = r->preempt_cost.suspend();
			a.predicted_resume = r->preempt_cost.resume;
			a.reason = "preempted: its loaned node returns to inference (aryl)";
			out.push_back(std::move(a));
			continue;
		}
		auto it = off.find(r);
		if (it == off.end())
			continue;
		Action a;
		a.kind = ActionKind::kResize;
		a.job = r->id;
		for (const NodeShare& s : r->placement)
			if (!taken[s.node])
				a.placement.push_back(s);
		a.gpus = r->gpus_allocated - it->second;
		a.grace = timeout_;
		a.predicted_suspend = r->preempt_cost.suspend();
		a.predicted_resume = r->preempt_cost.resume;
		a.reason = "shrunk: its loaned node returns to inference (aryl)";
		out.push_back(std::move(a));
	}
	for (NodeIndex n : chosen) {
		Action a;
		a.kind = ActionKind::kReclaim;
		a.node = n;
		a.reason = "returned to inference (inference needs " + std::to_string(need) + " of " +
			   std::to_string(inference) + " nodes)";
		out.push_back(std::move(a));
	}
}

}  // namespace dlsched
