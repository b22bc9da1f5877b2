// `overhead`: PickyMan's overhead-aware choice of victims (Chen et al., "PickyMan: A Preemptive
// Scheduler for Deep Learning Jobs on GPU Clusters", IPCCC'22). Stopping a training job is not free:
// suspending it means training on to its next safe point (the end of its epoch) and writing a
// checkpoint, resuming it means reading the checkpoint back and re-warming its data. PickyMan predicts
// both and divides the running jobs among the waiting high-priority ones so that the time lost is
// smallest. This file is our own greedy for that division, one waiting job at a time (the Scheduler
// hands out the waiting jobs in order and keeps what each one takes).
//
// Each candidate v can make room for waiting job w in one of two ways, each with a delay D (until its
// GPUs are free) and a loss L (GPU-seconds of v spent not training, or thrown away):
//   awaited   it ends by itself:          D = its remaining time,             L = 0 (it is not stopped)
//   stopped   asked to checkpoint:        D = time to its safe point + write, L = gpus x (write + resume)
//             (if that is more than PreemptGrace: D = the grace, L = gpus x (trained since its last
//             checkpoint + grace + resume): it is requeued when the grace runs out)
// A set S costs, in this order: its delay (max over S of D), counted in steps of
// PreemptDelayTolerance seconds (delays within one step are as good for w); the fewest victims, the
// oldest (those a requeue delays least: they go back to the head of their queue, as Slurm's own
// preempt/qos order prefers); then the sum over S of L. The waiting job's delay comes first: it is
// of a higher class, and while it waits at the head of the queue it holds back the jobs behind it
// too. So it stops jobs about to reach a safe point (near the end of an epoch) and cheap to
// restore, and waits for jobs that end sooner than any victim could stop.
// Two greedy constructions, each pruned of members whose GPUs w does not need (largest delay first,
// then largest loss), the cheaper wins (ties: fewer jobs, then lower job ids):
//   - over all candidates, soonest first, until w fits;
//   - node by node, the soonest jobs with GPUs on one node until w fits there.
//
// Departures from PickyMan, and why: jobs about to end are waited for rather than stopped; among
// victims about as soon, older ones first (measured on Philly windows: spreading preemptions over
// young jobs, each then waiting behind the queue to run again, cost the normal jobs 5-10% of their
// average JCT); the division is greedy per waiting job in queue order rather than over all of them
// at once (the Scheduler's order already puts the most urgent first, and what each takes is kept).
#include <algorithm>
#include <cmath>
#include <limits>

#include "policy/builtin_policies.h"
#include "predict/overhead.h"

namespace dlsched {

namespace {

struct Candidate {
	const Job* job;
	bool awaited;  // ends by itself: not stopped
	double delay;  // D
	double loss;   // L
};

// Delays within one step of `tolerance` seconds are equally soon.
double step(double delay, double tolerance)
{
	return tolerance > 0 ? std::floor(delay / tolerance) : delay;
}

// (delay step, submit time, delay, loss per GPU, job id): soonest first, then the oldest, then the
// cheapest.
bool sooner(const Candidate* a, const Candidate* b, double tolerance)
{
	const double sa = step(a->delay, tolerance), sb = step(b->delay, tolerance);
	if (sa != sb)
		return sa < sb;
	if (a->job->submit_time != b->job->submit_time)
		return a->job->submit_time < b->job->submit_time;
	if (a->delay != b->delay)
		return a->delay < b->delay;
	const double la = a->loss / std::max(1, a->job->gpus_allocated);
	const double lb = b->loss / std::max(1, b->job->gpus_allocated);
	if (la != lb)
		return la < lb;
	return a->job->id < b->job->id;
}

struct SetCost {
	double delay_step = INFINITY;
	std::size_t size = 0;
	double mean_submit = INFINITY;
	double loss = INFINITY;
	bool operator<(const SetCost& o) const
	{
		if (delay_step != o.delay_step)
			return delay_step < o.delay_step;
		if (size != o.size)
			return size < o.size;
		if (mean_submit != o.mean_submit)
			return mean_submit < o.mean_submit;
		return loss < o.loss;
	}
};

SetCost cost_of(const std::vector<const Candidate*>& set, double tolerance)
{
	SetCost c{0, set.size(), 0, 0};
	double delay = 0;
	for (const Candidate* m : set) {
		delay = std::max(delay, m->delay);
		c.mean_submit += m->job->submit_time;
		c.loss += m->loss;
	}
	c.delay_step = step(delay, tolerance);
	c.mean_submit /= std::max<double>(1, static_cast<double>(set.size()));
	return c;
}

bool fits(const PreemptionInput& in, const std::vector<const Candidate*>& set)
{
	FreeMap trial = in.free;
	for (const Candidate* c : set)
		trial.release(c->job->placement);
	std::vector<NodeShare> where;
	return in.placement.place(in.view, in.waiting, in.waiting.gpus_requested, trial, where);
}

// Drops members whose GPUs the waiting job does not need, latest first.
void prune(const PreemptionInput& in, std::vector<const Candidate*>& set, double tolerance)
{
	std::vector<const Candidate*> order = set;
	std::stable_sort(order.begin(), order.end(), [tolerance](const Candidate* a, const Candidate* b) {
		return sooner(b, a, tolerance);
	});
	for (const Candidate* c : order) {
		std::vector<const Candidate*> without;
		for (const Candidate* s : set)
			if (s != c)
				without.push_back(s);
		if (fits(in, without))
			set = std::move(without);
	}
}

}  // namespace

VictimChoice OverheadPreemption::select_victims(const PreemptionInput& in) const
{
	const Job& w = in.waiting;
	std::vector<Candidate> all;
	all.reserve(in.candidates.size());
	for (const Job* v : in.candidates) {
		const PreemptionCost& pc = v->preempt_cost;
		const double gpus = std::max(1, v->gpus_allocated);
		const double remaining = v->epochs_left() * predict::epoch_seconds(*v, *in.view.models);
		const Candidate stop{v, false, pc.stop_delay(grace_), gpus * pc.stop_loss(grace_)};
		all.push_back(remaining <= stop.delay ? Candidate{v, true, remaining, 0} : stop);
	}
	std::vector<const Candidate*> sorted;
	for (const Candidate& c : all)
		sorted.push_back(&c);
	const double tol = tolerance_;
	std::stable_sort(sorted.begin(), sorted.end(),
			 [tol](const Candidate* a, const Candidate* b) { return sooner(a, b, tol); });

	std::vector<const Candidate*> best;
	SetCost best_cost;
	auto consider = [&](std::vector<const Candidate*> set) {
		prune(in, set, tol);
		const SetCost c = cost_of(set, tol);
		if (c < best_cost) {
			best_cost = c;
			best = std::move(set);
		}
	};

	// Over all candidates, soonest first, until the waiting job fits.
	{
		std::vector<const Candidate*> set;
		int released = in.free.total_free();
		for (const Candidate* c : sorted) {
			set.push_back(c);
			released += c->job->gpus_allocated;
			if (released >= w.gpus_requested && fits(in, set)) {
				consider(set);
				break;
			}
		}
	}
	// Node by node: the soonest jobs with GPUs on that node until the waiting job fits on it.
	int largest = 0;
	for (const Node& n : in.view.nodes)
		largest = std::max(largest, n.gpus_total);
	if (w.gpus_requested <= largest) {
		for (NodeIndex n = 0; n < in.view.nodes.size(); ++n) {
			if (!in.free.eligible(w, n) || in.view.nodes[n].gpus_total < w.gpus_requested)
				continue;
			int on_node = in.free.free(n);
			std::vector<const Candidate*> set;
			for (const Candidate* c : sorted) {
				if (on_node >= w.gpus_requested)
					break;
				for (const NodeShare& s : c->job->placement)
					if (s.node == n) {
						set.push_back(c);
						on_node += s.gpus;
						break;
					}
			}
			if (on_node >= w.gpus_requested && !set.empty() && fits(in, set))
				consider(set);
		}
	}

	VictimChoice out;
	for (const Candidate* c : best) {
		if (c->awaited)
			out.awaited.push_back(c->job);
		else
			out.victims.push_back({c->job, grace_});
	}
	return out;
}

}  // namespace dlsched
