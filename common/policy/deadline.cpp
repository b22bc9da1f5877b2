// Deadline policies: the QoS-oriented framework of "A QoS-oriented Scheduling and Autoscaling
// Framework for Deep Learning" (IJCNN'19): a job's training time is predicted from its measured
// epochs; jobs are admitted when their deadline can be met, ordered by least slack, and each is given
// the GPU count its deadline needs. Written from the paper's description; the details below (the
// confidence margin, the shrink order, best-effort jobs) are ours.
//  - Admission `deadline`: a pending job with a deadline is admitted when, started now at its best
//    size in its range, it likely finishes in time (predicted remaining time x (1 + z x cv), z the
//    normal quantile of DeadlineConfidence=). Otherwise DeadlineInfeasible= decides: best-effort
//    (behind every admitted job), hold, or cancel; the reason says what it needs and what is left.
//  - Ordering `least-slack`: jobs with a deadline first, by slack = deadline - now - predicted
//    remaining time (at the GPUs it asked for, at the low end of its spread: x (1 - z x cv), so
//    that a runtime nobody measured does not buy first place); the rest follow by LeastSlackBase=.
//  - Allocation `deadline-autoscale`: in order, running jobs included, a deadline job gets the
//    smallest GPU count in its range that meets its deadline (a running one grows to it when it
//    drifts behind, its restart cost counted; one above it keeps its size until the surplus is
//    needed), taking GPUs that over-provisioned deadline jobs ahead of it can give up when the free
//    ones do not suffice; other jobs get the size they run at or asked for on what is left, and a
//    running one that nothing is left for is requeued, as under srtf.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "policy/builtin_policies.h"
#include "policy/estimates.h"

namespace dlsched {

double normal_quantile(double p)
{
	if (!(p > 0 && p < 1))
		return p >= 1 ? INFINITY : -INFINITY;
	// Bisection on the normal CDF, 0.5 erfc(-z / sqrt 2): 60 halvings of [-10, 10] are exact to
	// the last bit that matters here.
	double lo = -10, hi = 10;
	for (int i = 0; i < 60; ++i) {
		const double mid = 0.5 * (lo + hi);
		if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

std::string format_duration(double s)
{
	char buf[32];
	if (!std::isfinite(s))
		return "forever";
	if (s < 600)
		std::snprintf(buf, sizeof buf, "%.0f s", std::max(0.0, s));
	else if (s < 7200)
		std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
	else
		std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
	return buf;
}

DeadlineFit deadline_fit(const ClusterView& view, const Job& job, double z)
{
	DeadlineFit f;
	if (!job.has_deadline())
		return f;
	f.left = job.deadline - view.now;
	const double margin = 1 + std::max(0.0, z) * std::max(0.0, job.runtime_cv);
	// A running job keeps its size for free; any other size costs it a checkpoint and restart.
	const double restart = job.preempt_cost.suspend() + job.preempt_cost.resume;
	const int lo = std::max(1, job.gpus_min), hi = std::max(lo, job.gpus_max);
	f.best_time = INFINITY;
	for (int g = lo; g <= hi; ++g) {
		const double t = remaining_time(view, job, g) * margin +
				 (job.running() && g != job.gpus_allocated ? restart : 0.0);
		if (t < f.best_time) {
			f.best_time = t;
			f.best_gpus = g;
		}
		if (f.need == 0 && t <= f.left)
			f.need = g;
	}
	return f;
}

AdmissionVerdict DeadlineAdmission::admit(const ClusterView& view, const Job& job) const
{
	AdmissionVerdict v;
	if (!job.has_deadline() || job.epoch_time_1gpu <= 0)
		return v;  // nothing to meet, or nothing to predict it with: admitted as any job
	const DeadlineFit f = deadline_fit(view, job, z_);
	if (f.need > 0)
		return v;
	v.reason = "deadline infeasible: needs " + format_duration(f.best_time) + " at " +
		   std::to_string(f.best_gpus) + (f.best_gpus == 1 ? " GPU, " : " GPUs, ") +
		   format_duration(f.left) + " left";
	Infeasible how = on_infeasible_;
	// Known by its time limit alone (assumed to run all of it): it may run as little as its
	// --time-min, as Slurm's own deadline check counts. While that still fits, it is not held or
	// cancelled on the assumption: it runs best-effort.
	if (how != Infeasible::kBestEffort && job.runtime_from_limit && job.time_min > 0 &&
	    view.now + job.time_min <= job.deadline) {
		how = Infeasible::kBestEffort;
		v.reason += " (its time limit; its --time-min of " + format_duration(job.time_min) +
			    " still fits)";
	}
	switch (how) {
		case Infeasible::kBestEffort:
			v.best_effort = true;
			v.reason += "; runs best-effort";
			break;
		case Infeasible::kHold:
			v.admit = false;
			v.hold = true;
			v.reason += "; held";
			break;
		case Infeasible::kCancel:
			v.admit = false;
			v.cancel = true;
			v.reason += "; cancelled";
			break;
	}
	return v;
}

void LeastSlackOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	auto split = std::stable_partition(jobs.begin(), jobs.end(),
					   [](const Job* j) { return j->has_deadline(); });
	std::vector<const Job*> with(jobs.begin(), split), without(split, jobs.end());
	// Slack at the size the job asked for, running or not: at the size it runs at, a job scaled up
	// would look less urgent once started than while it waited, be stopped for that, and look
	// urgent again (a restart per cycle).
	// The remaining time at the low end of its spread: an unmeasured runtime does not buy urgency.
	sort_by_key(with, [&](const Job& j) {
		const double low = std::max(0.0, 1 - std::max(0.0, z_) * std::max(0.0, j.runtime_cv));
		return j.deadline - view.now - remaining_time(view, j, j.gpus_requested) * low;
	});
	base_->order(view, without);
	std::copy(with.begin(), with.end(), jobs.begin());
	std::copy(without.begin(), without.end(), jobs.begin() + static_cast<std::ptrdiff_t>(with.size()));
}

void DeadlineAutoscaleAllocation::allocate(const AllocationInput& in, Plan& plan) const
{
	// Running jobs are candidates like pending ones (elastic): in order, each claims GPUs from the
	// whole pool; a running job that nothing is left for is requeued (srtf's rule, for the jobs
	// without a deadline).
	// Urgent deadline jobs first, in the ordering's order (least slack); a deadline job with more
	// slack than DeadlineUrgency= x its remaining time (at its requested size) can still wait: it
	// goes among the jobs without a deadline by its remaining time, as srtf would place it. So
	// deadline work takes GPUs from other work only when waiting longer would cost its deadline.
	// All of this within each block of equal standing (a priority class, an administrator's place):
	// a job of a higher class goes before deadline work of a lower one (whose GPUs the scheduler
	// left out of the plan when stopping it would make it late).
	std::unordered_map<const Job*, int> needs;  // deadline_fit(...).need of each deadline job, once
	std::vector<const Job*> ordered;
	ordered.reserve(in.ordered.size());
	// Jobs [first, last) of one block, urgent deadline jobs first, then the rest by remaining time.
	auto order_block = [&](std::size_t first, std::size_t last) {
		std::vector<const Job*> waiting_ok;  // deadline jobs that can wait, in order
		std::vector<const Job*> rest;
		for (std::size_t k = first; k < last; ++k) {
			const Job* j = in.ordered[k];
			const int nj = j->has_deadline() ? needs[j] = deadline_fit(in.view, *j, z_).need : 0;
			// No deadline, or one it cannot meet (best-effort: the scheduler placed it last).
			if (nj == 0) {
				rest.push_back(j);
				continue;
			}
			const double rt = remaining_time(in.view, *j, j->gpus_requested);
			const double slack = j->deadline - in.view.now - rt;
			// A running deadline job stays among the urgent ones once started: as it runs (at
			// more GPUs than it asked for, or ahead of plan) its slack grows, and putting it back
			// among the others would stop it, only for it to become urgent again: a restart per
			// cycle.
			if (j->running() || slack <= urgency_ * rt || !std::isfinite(rt))
				ordered.push_back(j);
			else
				waiting_ok.push_back(j);
		}
		auto key = [&](const Job* j) { return remaining_time(in.view, *j, j->gpus_requested); };
		std::stable_sort(waiting_ok.begin(), waiting_ok.end(),
				 [&](const Job* a, const Job* b) { return key(a) < key(b); });
		std::size_t w = 0;
		for (const Job* r : rest) {
			while (w < waiting_ok.size() && key(waiting_ok[w]) < key(r))
				ordered.push_back(waiting_ok[w++]);
			ordered.push_back(r);
		}
		while (w < waiting_ok.size())
			ordered.push_back(waiting_ok[w++]);
	};
	for (std::size_t first = 0; first < in.ordered.size();) {
		std::size_t last = first + 1;
		auto same_block = [&](std::size_t k) {
			return !in.standing || (*in.standing)[k] == (*in.standing)[first];
		};
		while (last < in.ordered.size() && same_block(last))
			++last;
		order_block(first, last);
		first = last;
	}
	const std::size_t n = ordered.size();
	std::vector<int> targets(n, 0), need(n, 0);
	int left = in.free.training_free();  // not the inference nodes' GPUs
	for (std::size_t i = 0; i < n; ++i) {
		const auto it = needs.find(ordered[i]);
		need[i] = it == needs.end() ? 0 : it->second;
	}
	// GPUs for job i: free ones first, then what over-provisioned deadline jobs ahead of it can give
	// up (the least urgent first), down to their own need.
	auto take = [&](std::size_t i, int want) {
		if (want <= left) {
			left -= want;
			return true;
		}
		int surplus = 0;
		for (std::size_t k = 0; k < i; ++k)
			if (need[k] > 0 && targets[k] > need[k])
				surplus += targets[k] - need[k];
		if (left + surplus < want)
			return false;
		for (std::size_t k = i; k-- > 0 && left < want;) {
			if (need[k] <= 0 || targets[k] <= need[k])
				continue;
			const int give = std::min(targets[k] - need[k], want - left);
			targets[k] -= give;
			left += give;
		}
		left -= want;
		return true;
	};
	for (std::size_t i = 0; i < n; ++i) {
		const Job* j = ordered[i];
		const int current = j->running() ? j->gpus_allocated : 0;
		if (need[i] > 0) {
			// The fewest GPUs that meet its deadline; a running job above that keeps its size
			// until someone needs the surplus, and one below it grows (or keeps what it has).
			// Short of that, a running one shrinks to what is left, down to its need.
			const int want = std::max(need[i], current);
			const int fallback = std::max(need[i], std::min(current, left));
			if (take(i, want))
				targets[i] = want;
			else if (fallback < want && take(i, fallback))
				targets[i] = fallback;
			continue;
		}
		// No deadline, or one it cannot meet: the size it runs at or asked for.
		const int want =
			current > 0 ? current : std::clamp(j->gpus_requested, j->gpus_min, j->gpus_max);
		if (want <= left) {
			targets[i] = want;
			left -= want;
		}
	}
	FreeMap free = in.free;
	const AllocationInput reordered{in.view, ordered, in.placement, in.free, in.reconsider_running,
					nullptr};
	realize_targets(reordered, targets, free, plan);
}

}  // namespace dlsched
