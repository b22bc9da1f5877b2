#include "policy/scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "policy/builtin_policies.h"
#include "policy/estimates.h"

namespace dlsched {

namespace {

// A config key that overrides one kind of the preset, when set.
void override_from(const Config& c, const char* key, std::string& field)
{
	if (c.is_set(key))
		field = c.get_string(key);
}

template <class T>
Status take(Result<std::unique_ptr<T>> r, std::unique_ptr<T>& out)
{
	if (!r.is_ok())
		return r.status();
	out = std::move(r).value();
	return Status::ok();
}

// Appends `resizes` to `actions` in an order a host can apply one by one: each resize fits in the GPUs
// left free after the requeues and the resizes before it (a job may grow onto GPUs another one gives
// up by shrinking or moving). Resizes that wait on each other in a cycle cannot be ordered: one of
// those jobs is requeued instead (it starts again in a later cycle), which frees the others.
void order_resizes(const ClusterView& view, std::vector<Action>& actions, std::vector<Action>& resizes)
{
	if (resizes.empty())
		return;
	std::unordered_map<JobId, const Job*> running;
	for (const Job* r : view.running)
		running[r->id] = r;
	FreeMap free(view);
	for (const Action& a : actions)
		if (a.kind == ActionKind::kRequeue)
			free.release(running[a.job]->placement);
	auto fits = [&](const Action& a) {
		FreeMap trial = free;
		trial.release(running[a.job]->placement);
		for (const NodeShare& sh : a.placement)
			if (trial.free(sh.node) < sh.gpus)
				return false;
		return true;
	};
	std::vector<bool> done(resizes.size(), false);
	std::size_t left = resizes.size();
	while (left > 0) {
		bool progress = false;
		for (std::size_t i = 0; i < resizes.size(); ++i) {
			if (done[i] || !fits(resizes[i]))
				continue;
			free.release(running[resizes[i].job]->placement);
			free.take(resizes[i].placement);
			actions.push_back(std::move(resizes[i]));
			done[i] = true;
			--left;
			progress = true;
		}
		if (progress)
			continue;
		// A cycle: requeue the first waiting job, which frees its GPUs for the others. Requeues go
		// first, before resizes already emitted.
		for (std::size_t i = 0; i < resizes.size(); ++i) {
			if (done[i])
				continue;
			Action a;
			a.kind = ActionKind::kRequeue;
			a.job = resizes[i].job;
			a.reason = "requeued to resize (resizes wait on each other)";
			free.release(running[a.job]->placement);
			actions.insert(actions.begin(), std::move(a));
			done[i] = true;
			--left;
			break;
		}
	}
}

// What a policy's order cannot override, in this order: a place an administrator pinned (ahead of
// every ordered job, or behind them, highest admin priority first), the job's priority class (its
// QoS, PriorityQos=), then its nice value (higher goes behind jobs of the same standing). Stable:
// the policy's order stays among equals.
template <class ClassOf>
void apply_standing(std::vector<const Job*>& jobs, ClassOf class_of)
{
	const bool any = std::any_of(jobs.begin(), jobs.end(), [&](const Job* j) {
		return j->admin_pin != 0 || j->nice != 0 || class_of(*j) != 0;
	});
	if (!any)
		return;
	auto group = [](const Job* j) { return j->admin_pin > 0 ? 0 : j->admin_pin < 0 ? 2 : 1; };
	std::stable_sort(jobs.begin(), jobs.end(), [&](const Job* a, const Job* b) {
		const int ga = group(a), gb = group(b);
		if (ga != gb)
			return ga < gb;
		if (ga != 1)
			return a->admin_priority > b->admin_priority;
		const int ca = class_of(*a), cb = class_of(*b);
		if (ca != cb)
			return ca > cb;
		return a->nice < b->nice;
	});
}

// Block numbers parallel to `jobs` (in apply_standing's order): jobs in different blocks differ in
// standing (administrator's place, priority class), and an allocation that reorders jobs keeps the
// blocks in order.
template <class ClassOf>
std::vector<int> standing_blocks(const std::vector<const Job*>& jobs, ClassOf class_of)
{
	std::vector<int> out(jobs.size(), 0);
	auto group = [](const Job* j) { return j->admin_pin > 0 ? 0 : j->admin_pin < 0 ? 2 : 1; };
	for (std::size_t i = 1; i < jobs.size(); ++i) {
		const Job* a = jobs[i - 1];
		const Job* b = jobs[i];
		const bool same_place = group(a) != 1 ? a->admin_priority == b->admin_priority : true;
		const bool same = group(a) == group(b) && same_place && class_of(*a) == class_of(*b);
		out[i] = out[i - 1] + (same ? 0 : 1);
	}
	return out;
}

std::vector<std::string> split_names(const std::string& s)
{
	std::vector<std::string> out;
	std::size_t start = 0;
	while (start <= s.size()) {
		std::size_t comma = s.find(',', start);
		std::string item =
			s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
		item.erase(0, item.find_first_not_of(" \t"));
		item.erase(item.find_last_not_of(" \t") + 1);
		if (!item.empty())
			out.push_back(item);
		if (comma == std::string::npos)
			break;
		start = comma + 1;
	}
	return out;
}

bool same_placement(std::vector<NodeShare> a, std::vector<NodeShare> b)
{
	auto by_node = [](const NodeShare& x, const NodeShare& y) { return x.node < y.node; };
	std::sort(a.begin(), a.end(), by_node);
	std::sort(b.begin(), b.end(), by_node);
	return a == b;
}

// FairnessPolicy=quota under an allocation that does not keep the order's blocks (elastic ones: a
// learned or knapsack allocation picks its own jobs): a job whose quota is owed (`owed`) that the
// plan leaves waiting takes the GPUs the plan gives borrowing jobs (not in `guaranteed`): first those
// it starts, the latest in the order first, then, when the plan reconsiders running jobs, those of
// running borrowing jobs it keeps, least lost time first (stop_loss(grace), as reclaim_for), never
// leaving their account below its quota; as many as it needs, and no running job it fits without;
// never a job of a higher priority class (`class_of`) than its own. `free` is what the allocation
// planned on.
void serve_guaranteed_first(const ClusterView& view, const std::vector<const Job*>& ordered,
			    const std::unordered_set<JobId>& guaranteed,
			    const std::unordered_set<JobId>& owed, const FreeMap& free, bool reconsider,
			    const Placement& placement, Seconds grace,
			    const std::function<int(const Job&)>& class_of, Plan& plan)
{
	std::unordered_map<JobId, std::size_t> at;
	for (std::size_t i = 0; i < plan.size(); ++i)
		at[plan[i].job->id] = i;
	FreeMap after = free;
	for (const Assignment& a : plan)
		if (reconsider || !a.job->running())
			after.take(a.placement);
	std::vector<std::size_t> borrowers;  // the plan's borrowing starts, latest in the order first
	for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
		auto f = at.find((*it)->id);
		if (!(*it)->running() && !guaranteed.count((*it)->id) && f != at.end())
			borrowers.push_back(f->second);
	}
	const std::size_t starts = borrowers.size();
	if (reconsider) {  // then running borrowing jobs the plan keeps, cheapest to stop first
		std::vector<std::size_t> running;
		for (std::size_t i = 0; i < plan.size(); ++i)
			if (plan[i].job->running() && !guaranteed.count(plan[i].job->id) &&
			    plan[i].job->requeueable && !plan[i].job->stopping())
				running.push_back(i);
		auto loss = [&](std::size_t i) {
			return plan[i].job->preempt_cost.stop_loss(grace) * plan[i].job->gpus_allocated;
		};
		std::stable_sort(running.begin(), running.end(), [&](std::size_t a, std::size_t b) {
			if (loss(a) != loss(b))
				return loss(a) < loss(b);
			return plan[a].job->id < plan[b].job->id;
		});
		borrowers.insert(borrowers.end(), running.begin(), running.end());
	}
	QuotaBook book(view);
	std::vector<bool> dropped(plan.size(), false);
	// GPUs the borrowers hold (running ones by account): a job needing more than they and the free
	// GPUs together cannot be served, and is not tried (each try is a placement per borrower).
	double lendable = 0;
	std::unordered_map<std::string, double> lendable_of;
	for (std::size_t k = 0; k < borrowers.size(); ++k) {
		lendable += plan[borrowers[k]].gpus;
		if (k >= starts)
			lendable_of[plan[borrowers[k]].job->account] += plan[borrowers[k]].gpus;
	}
	Plan added;
	for (const Job* w : ordered) {
		if (w->running() || !owed.count(w->id) || at.count(w->id))
			continue;
		auto own = lendable_of.find(w->account);
		if (w->gpus_requested >
		    after.total_free() + lendable - (own == lendable_of.end() ? 0.0 : own->second))
			continue;
		FreeMap trial = after;
		std::vector<std::size_t> given;
		std::vector<NodeShare> where;
		bool fits = placement.place(view, *w, w->gpus_requested, trial, where);
		std::unordered_map<std::string, double> taken;  // from running borrowers' accounts, here
		for (std::size_t k = 0; !fits && k < borrowers.size(); ++k) {
			const std::size_t i = borrowers[k];
			if (dropped[i])
				continue;
			const Job* r = plan[i].job;
			if (class_of(*r) > class_of(*w))  // quota orders work within a priority class
				continue;
			if (k >= starts && (r->account == w->account ||
					    book.held(r->account) - taken[r->account] - r->gpus_allocated <
						    book.quota(r->account)))
				continue;
			if (k >= starts)
				taken[r->account] += r->gpus_allocated;
			trial.release(plan[i].placement);
			given.push_back(i);
			fits = placement.place(view, *w, w->gpus_requested, trial, where);
		}
		if (!fits)
			continue;
		// No running job stopped that it fits without: the dearest first.
		for (std::size_t g = given.size(); g-- > 0;) {
			if (!plan[given[g]].job->running())
				continue;
			FreeMap without = after;
			for (std::size_t m = 0; m < given.size(); ++m)
				if (m != g)
					without.release(plan[given[m]].placement);
			std::vector<NodeShare> w2;
			if (placement.place(view, *w, w->gpus_requested, without, w2))
				given.erase(given.begin() + static_cast<std::ptrdiff_t>(g));
		}
		trial = after;
		for (std::size_t i : given)
			trial.release(plan[i].placement);
		if (!placement.place(view, *w, w->gpus_requested, trial, where))
			continue;
		for (std::size_t i : given) {
			dropped[i] = true;
			lendable -= plan[i].gpus;
			if (plan[i].job->running()) {
				book.add_held(plan[i].job->account, -plan[i].job->gpus_allocated);
				lendable_of[plan[i].job->account] -= plan[i].gpus;
			}
		}
		trial.take(where);
		after = trial;
		added.push_back({w, w->gpus_requested, std::move(where)});
	}
	if (added.empty())
		return;
	Plan kept;
	for (std::size_t i = 0; i < plan.size(); ++i)
		if (!dropped[i])
			kept.push_back(std::move(plan[i]));
	for (Assignment& a : added)
		kept.push_back(std::move(a));
	plan = std::move(kept);
}

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::create(const Config& config, const PolicyRegistry& registry)
{
	std::unique_ptr<Scheduler> s(new Scheduler());
	s->preset_ = config.get_string("Policy");
	// A policy name that the registry does not know is a configuration error: name where it was
	// set (dlsched.conf:LINE, --policy), as for any other bad value.
	auto located = [&config](const char* key, const Status& st) -> Status {
		const std::string where = config.origin(key);
		if (st.is_ok() || where.empty())
			return st;
		return Status(st.code(), where + ": " + key + ": " + st.message());
	};
	Result<SchedulerSpec> spec = registry.preset(s->preset_);
	if (!spec.is_ok())
		return located("Policy", spec.status());
	s->spec_ = spec.value();
	override_from(config, "OrderingPolicy", s->spec_.ordering);
	override_from(config, "AllocationPolicy", s->spec_.allocation);
	override_from(config, "PlacementPolicy", s->spec_.placement);
	override_from(config, "AdmissionPolicy", s->spec_.admission);
	override_from(config, "PreemptionPolicy", s->spec_.preemption);
	override_from(config, "LoaningPolicy", s->spec_.loaning);
	override_from(config, "FairnessPolicy", s->spec_.fairness);

	// A part the preset chose is located at Policy= (named as the preset's), one set by its own key
	// there.
	auto part = [&](const char* key, const Status& st) -> Status {
		if (st.is_ok() || config.is_set(key))
			return located(key, st);
		return located("Policy", Status(st.code(), "preset '" + s->preset_ + "': " + st.message()));
	};
	const SchedulerSpec& sp = s->spec_;
	Status st = part("OrderingPolicy", take(registry.make_ordering(sp.ordering, config), s->ordering_));
	if (st.is_ok())
		st = part("AllocationPolicy",
			  take(registry.make_allocation(sp.allocation, config), s->allocation_));
	if (st.is_ok())
		st = part("PlacementPolicy",
			  take(registry.make_placement(sp.placement, config), s->placement_));
	if (st.is_ok())
		st = part("AdmissionPolicy",
			  take(registry.make_admission(sp.admission, config), s->admission_));
	if (st.is_ok())
		st = part("PreemptionPolicy",
			  take(registry.make_preemption(sp.preemption, config), s->preemption_));
	if (st.is_ok())
		st = part("LoaningPolicy", take(registry.make_loaning(sp.loaning, config), s->loaning_));
	if (st.is_ok()) {
		Result<FairnessKind> f = parse_fairness(sp.fairness);
		st = part("FairnessPolicy", f.status());
		if (f.is_ok())
			s->fairness_ = f.value();
	}
	if (!st.is_ok())
		return st;
	// A preset whose ordering is preemptive or whose allocation is elastic reconsiders running jobs
	// itself (their GPUs go back into the plan): a Preemption policy would never be asked. Say so
	// rather than log it as on and ignore it.
	if (sp.preemption != "none" && (s->ordering_->preemptive() || s->allocation_->elastic()))
		return part(
			"PreemptionPolicy",
			invalid_argument("'" + sp.preemption + "' is never consulted with ordering '" +
					 sp.ordering + "' and allocation '" + sp.allocation + "', which " +
					 (s->ordering_->preemptive()
						  ? "preempt by their order"
						  : "reconsider running jobs (deadline-autoscale, elastic)") +
					 "; priority classes preempt there through the order: set "
					 "PreemptionPolicy=none"));
	s->priority_qos_ = split_names(config.get_string("PriorityQos"));
	s->deadline_z_ = normal_quantile(config.get_double("DeadlineConfidence"));
	s->quota_reclaim_timeout_ = config.get_double("QuotaReclaimTimeout");
	s->preempt_grace_ = config.get_double("PreemptGrace");
	s->resize_payback_ = config.get_double("ResizePayback");
	return s;
}

int Scheduler::priority_class(const Job& job) const
{
	if (job.qos.empty())
		return 0;
	for (std::size_t i = 0; i < priority_qos_.size(); ++i)
		if (priority_qos_[i] == job.qos)
			return static_cast<int>(priority_qos_.size() - i);
	return 0;
}

bool Scheduler::protects(const ClusterView& view, const Job& r, const Job& w, double* slack_out,
			 double* delay_out) const
{
	if (!r.has_deadline() || priority_class(r) >= priority_class(w))
		return false;
	const double margin = 1 + std::max(0.0, deadline_z_) * std::max(0.0, r.runtime_cv);
	const double slack =
		r.deadline - view.now - remaining_time(view, r, std::max(1, r.gpus_allocated)) * margin;
	if (!(slack >= 0))
		return false;  // late already at its size: stopping it does not make it late
	// How long the waiting job holds the GPUs: its predicted run, else its time limit.
	double hold = remaining_time(view, w, std::max(1, w.gpus_requested));
	if (!(hold > 0) || !std::isfinite(hold))
		hold = w.time_limit;
	const double delay = r.preempt_cost.suspend() + r.preempt_cost.resume + hold;
	if (slack >= delay)
		return false;
	if (slack_out)
		*slack_out = slack;
	if (delay_out)
		*delay_out = delay;
	return true;
}

std::string Scheduler::protected_reason(const ClusterView& view, const Job& w,
					const std::vector<const Job*>& running) const
{
	std::string out;
	for (const Job* r : running) {
		double slack = 0, delay = 0;
		if (!protects(view, *r, w, &slack, &delay))
			continue;
		out += out.empty() ? "waits for deadline work it would make late: " : ", ";
		out += "job " + std::to_string(r->id) + " (" + format_duration(slack) + " slack, needs " +
		       format_duration(delay) + ")";
	}
	return out;
}

void Scheduler::explain_wait(const ClusterView& view, const Job& w, const FreeMap& after,
			     const std::vector<const Job*>& running, std::vector<Action>& actions) const
{
	std::vector<const Job*> held_back;
	for (const Job* r : running)
		if (!r->stopping() && protects(view, *r, w))
			held_back.push_back(r);
	if (held_back.empty())
		return;
	// Only when those GPUs are what it misses: lower-class jobs it may stop are counted free too.
	FreeMap trial = after;
	for (const Job* r : running)
		if (!r->stopping() && r->requeueable && priority_class(*r) < priority_class(w))
			trial.release(r->placement);
	std::vector<NodeShare> where;
	if (!placement_->place(view, w, w.gpus_requested, trial, where))
		return;
	Action a;
	a.kind = ActionKind::kAdmission;
	a.job = w.id;
	a.admission = AdmissionAction::kWait;
	a.reason = protected_reason(view, w, held_back);
	actions.push_back(std::move(a));
}

void Scheduler::preempt_for(const ClusterView& view, const std::vector<const Job*>& waiting, FreeMap& after,
			    std::vector<Action>& actions) const
{
	// The running jobs that may be stopped: the host can requeue them and they are not stopping.
	std::vector<const Job*> pool;
	for (const Job* r : view.running)
		if (r->requeueable && !r->stopping())
			pool.push_back(r);
	std::vector<bool> taken(pool.size(), false);
	for (const Job* w : waiting) {
		const int cw = priority_class(*w);
		if (cw == 0)
			continue;
		// On GPUs free or freeing (stopping jobs, earlier choices) it needs nobody else's: keep them.
		std::vector<NodeShare> where;
		if (placement_->place(view, *w, w->gpus_requested, after, where)) {
			after.take(where);
			continue;
		}
		std::vector<const Job*> candidates;
		std::vector<int> classes;
		for (std::size_t i = 0; i < pool.size(); ++i) {
			const int c = priority_class(*pool[i]);
			if (!taken[i] && c < cw && !protects(view, *pool[i], *w)) {
				candidates.push_back(pool[i]);
				classes.push_back(c);
			}
		}
		// A waiting job that cannot be served blocks those behind it, as the allocation would
		// (it holds the queue's head): preempting for them would free GPUs they cannot take.
		if (candidates.empty()) {
			if (spec_.preemption != "none")
				explain_wait(view, *w, after, view.running, actions);
			break;
		}
		const VictimChoice c =
			preemption_->select_victims({view, *w, candidates, classes, after, *placement_});
		if (c.empty()) {
			if (spec_.preemption != "none")
				explain_wait(view, *w, after, view.running, actions);
			break;
		}
		// A choice that does not make room is not acted on.
		FreeMap trial = after;
		for (const Victim& v : c.victims)
			trial.release(v.job->placement);
		for (const Job* a : c.awaited)
			trial.release(a->placement);
		if (!placement_->place(view, *w, w->gpus_requested, trial, where))
			break;
		trial.take(where);
		after = trial;
		auto mark = [&](const Job* j) {
			for (std::size_t i = 0; i < pool.size(); ++i)
				if (pool[i] == j)
					taken[i] = true;
		};
		for (const Job* a : c.awaited)
			mark(a);
		for (const Victim& v : c.victims) {
			mark(v.job);
			Action a;
			a.kind = ActionKind::kRequeue;
			a.job = v.job->id;
			a.grace = v.grace;
			a.predicted_suspend = v.job->preempt_cost.suspend();
			a.predicted_resume = v.job->preempt_cost.resume;
			a.reason = "preempted for job " + std::to_string(w->id) + " (" + preemption_->name() +
				   ")";
			actions.push_back(std::move(a));
		}
	}
}

namespace {

// The reason of a requeue that gives borrowed GPUs back to `owner`'s account.
std::string reclaim_reason(const Job& owner)
{
	return std::string(kQuotaReclaimed) + " for account '" + owner.account + "' (job " +
	       std::to_string(owner.id) + ")";
}

std::string gpus_text(double gpus)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%g", gpus);
	return buf;
}

}  // namespace

void Scheduler::explain_quota_waits(const ClusterView& view, const std::vector<const Job*>& waiting,
				    const std::unordered_set<JobId>& guaranteed,
				    std::vector<Action>& actions) const
{
	std::unordered_set<JobId> explained;
	std::vector<const Action*> reclaims;
	for (const Action& a : actions) {
		if (a.kind == ActionKind::kAdmission)
			explained.insert(a.job);
		else if (a.kind == ActionKind::kRequeue &&
			 a.reason.compare(0, std::strlen(kQuotaReclaimed), kQuotaReclaimed) == 0)
			reclaims.push_back(&a);
	}
	const QuotaBook book(view);
	std::vector<Action> waits;
	for (const Job* w : waiting) {
		if (w->account.empty() || explained.count(w->id))
			continue;
		Action a;
		a.kind = ActionKind::kAdmission;
		a.job = w->id;
		a.admission = AdmissionAction::kWait;
		const std::string acct = "'" + w->account + "'";
		const std::string held = gpus_text(book.held(w->account));
		const std::string quota = gpus_text(book.quota(w->account));
		if (guaranteed.count(w->id)) {
			std::string victims;
			const std::string mine = reclaim_reason(*w);
			for (const Action* r : reclaims)
				if (r->reason == mine)
					victims += (victims.empty() ? "" : " ") + std::to_string(r->job);
			if (!victims.empty())
				a.reason = "quota reclaim for account " + acct +
					   ": borrowed GPUs of job(s) " + victims +
					   " are being checkpointed and requeued for it";
			else
				a.reason = "within account " + acct +
					   "'s quota: waiting for borrowed GPUs (" + held + " of its " +
					   quota + " GPUs held; jobs ending within QuotaReclaimTimeout=" +
					   gpus_text(quota_reclaim_timeout_) +
					   " s of its wait are awaited, then the cheapest borrowing jobs are "
					   "requeued)";
		} else {
			a.reason = "over account " + acct +
				   "'s quota: borrows idle GPUs only (the account holds " + held +
				   " GPUs; quota " + quota + ")";
		}
		waits.push_back(std::move(a));
	}
	for (Action& a : waits)
		actions.push_back(std::move(a));
}

void Scheduler::reclaim_for(const ClusterView& view, const std::vector<const Job*>& waiting,
			    const std::unordered_set<JobId>& guaranteed, FreeMap& after,
			    std::vector<Action>& actions, std::unordered_set<JobId> moved) const
{
	QuotaBook book(view);
	std::unordered_set<JobId> gone = std::move(moved);  // resized or requeued this cycle, or chosen here
	for (const Action& a : actions)
		if (a.kind == ActionKind::kRequeue)
			gone.insert(a.job);
	for (const Action& a : actions)
		if (a.kind == ActionKind::kRequeue)
			for (const Job* r : view.running)
				if (r->id == a.job && !r->stopping())
					book.add_held(r->account, -r->gpus_allocated);
	for (const Job* w : waiting) {
		if (!guaranteed.count(w->id))
			continue;
		std::vector<NodeShare> where;
		// On GPUs free or freeing: it waits for them, and takes nobody's.
		if (placement_->place(view, *w, w->gpus_requested, after, where)) {
			after.take(where);
			continue;
		}
		// Within QuotaReclaimTimeout= of its wait, running jobs predicted to end by then are awaited:
		// when they make room, nothing is stopped (their GPUs are reserved for it).
		const Seconds waited = view.now - std::max(w->submit_time, w->last_stop_time);
		const Seconds budget = quota_reclaim_timeout_ - waited;
		if (budget > 0) {
			FreeMap trial = after;
			bool any = false;
			for (const Job* r : view.running) {
				if (gone.count(r->id) || r->stopping())
					continue;
				const double left = remaining_time(view, *r, std::max(1, r->gpus_allocated));
				if (left > 0 && left <= budget) {
					trial.release(r->placement);
					any = true;
				}
			}
			if (any && placement_->place(view, *w, w->gpus_requested, trial, where))
				continue;  // it waits for them
		}
		// Victims: borrowing jobs of other accounts, above their quota even without them.
		struct Cand {
			const Job* job;
			double loss;
		};
		std::vector<Cand> pool;
		for (const Job* r : view.running) {
			if (gone.count(r->id) || r->stopping() || !r->requeueable || r->account == w->account)
				continue;
			// Quota orders work within a priority class: a borrower of a higher one is not
			// stopped.
			if (priority_class(*r) > priority_class(*w))
				continue;
			if (book.held(r->account) - r->gpus_allocated < book.quota(r->account))
				continue;
			pool.push_back({r, r->preempt_cost.stop_loss(preempt_grace_) * r->gpus_allocated});
		}
		// Least lost GPU time first; ties: fewer GPUs, then the one started last, then the lower id.
		std::sort(pool.begin(), pool.end(), [](const Cand& a, const Cand& b) {
			if (a.loss != b.loss)
				return a.loss < b.loss;
			if (a.job->gpus_allocated != b.job->gpus_allocated)
				return a.job->gpus_allocated < b.job->gpus_allocated;
			if (a.job->start_time != b.job->start_time)
				return a.job->start_time > b.job->start_time;
			return a.job->id < b.job->id;
		});
		// Cheapest first until it fits, each account kept at its quota or above.
		std::vector<const Job*> chosen;
		std::unordered_map<std::string, double> taken;  // GPUs taken from each account here
		FreeMap trial = after;
		bool fits = false;
		for (const Cand& c : pool) {
			const Job* r = c.job;
			if (book.held(r->account) - taken[r->account] - r->gpus_allocated <
			    book.quota(r->account))
				continue;
			trial.release(r->placement);
			taken[r->account] += r->gpus_allocated;
			chosen.push_back(r);
			if (placement_->place(view, *w, w->gpus_requested, trial, where)) {
				fits = true;
				break;
			}
		}
		if (!fits)
			continue;  // borrowed GPUs cannot make room for it: it waits for GPUs to free
		// No more than it needs: drop the dearest victims it fits without.
		for (std::size_t k = chosen.size(); k-- > 0;) {
			FreeMap without = after;
			for (std::size_t m = 0; m < chosen.size(); ++m)
				if (m != k)
					without.release(chosen[m]->placement);
			std::vector<NodeShare> w2;
			if (placement_->place(view, *w, w->gpus_requested, without, w2))
				chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(k));
		}
		trial = after;
		for (const Job* r : chosen)
			trial.release(r->placement);
		if (!placement_->place(view, *w, w->gpus_requested, trial, where))
			continue;
		trial.take(where);
		after = trial;
		for (const Job* r : chosen) {
			gone.insert(r->id);
			book.add_held(r->account, -r->gpus_allocated);
			Action a;
			a.kind = ActionKind::kRequeue;
			a.job = r->id;
			a.grace = -1;
			a.predicted_suspend = r->preempt_cost.suspend();
			a.predicted_resume = r->preempt_cost.resume;
			a.reason = reclaim_reason(*w);
			actions.push_back(std::move(a));
		}
	}
}

bool Scheduler::too_young_to_resize(const ClusterView& view, const Job& r) const
{
	// What the resize loses: the checkpoint written and read back, Slurm's requeue delay (in
	// resume). Not the time on to its safe point: the job trains meanwhile, and that time swings
	// from nothing to an epoch from one cycle to the next.
	const Seconds restart = r.preempt_cost.restart_loss();
	return resize_payback_ > 0 && restart > 0 && r.start_time >= 0 &&
	       view.now - r.start_time < resize_payback_ * restart;
}

Decisions Scheduler::decide(const ClusterView& view) const
{
	// Loaning first: nodes lent now serve this cycle's plan, nodes taken back do not, and the jobs
	// the Loaning policy stops or shrinks to free them are not planned again this cycle.
	std::vector<Action> loans;
	loaning_->plan(view, loans);
	if (loans.empty())
		return decide_jobs(view);

	std::vector<Node> nodes(view.nodes.begin(), view.nodes.end());
	std::unordered_map<JobId, const Action*> touched;
	for (const Action& a : loans) {
		if (a.kind == ActionKind::kLoan && a.node < nodes.size())
			nodes[a.node].loaned = true;
		else if (a.kind == ActionKind::kReclaim && a.node < nodes.size())
			nodes[a.node].loaned = false;
		else if (a.kind == ActionKind::kRequeue || a.kind == ActionKind::kResize)
			touched[a.job] = &a;
	}
	std::deque<Job> copies;
	ClusterView after = view;
	after.nodes = Span<const Node>(nodes.data(), nodes.size());
	for (const Job*& r : after.running) {
		auto it = touched.find(r->id);
		if (it == touched.end())
			continue;
		copies.push_back(*r);
		Job& c = copies.back();
		if (it->second->kind == ActionKind::kRequeue) {
			c.checkpoint_requested_at = view.now;  // stopping: keeps its GPUs until it frees them
		} else {
			// Shrunk off the returned nodes: its shares there are free (for inference), and it
			// keeps its new size this cycle (not requeueable for the plan).
			for (const NodeShare& s : c.placement) {
				bool kept = false;
				for (const NodeShare& k : it->second->placement)
					kept = kept || k.node == s.node;
				if (!kept && s.node < nodes.size())
					nodes[s.node].gpus_free += s.gpus;
			}
			c.gpus_allocated = it->second->gpus;
			c.placement = it->second->placement;
			c.requeueable = false;
		}
		r = &c;
	}
	Decisions d = decide_jobs(after);
	d.actions.insert(d.actions.begin(), loans.begin(), loans.end());
	return d;
}

Decisions Scheduler::decide_jobs(const ClusterView& view) const
{
	Decisions d;

	// Admission: jobs it holds back stay pending, behind every admitted job.
	// Best-effort jobs (a deadline they cannot meet, by default) are scheduled behind every other
	// candidate; the host is told which, and why, as it is told of the jobs to hold or cancel.
	std::vector<const Job*> candidates;
	std::vector<const Job*> held;
	std::unordered_set<JobId> best_effort;
	candidates.reserve(view.pending.size() + view.running.size());
	for (const Job* j : view.pending) {
		AdmissionVerdict v = admission_->admit(view, *j);
		if (v.admit)
			candidates.push_back(j);
		else
			held.push_back(j);
		const AdmissionAction act = v.cancel                   ? AdmissionAction::kCancel
					    : v.hold                   ? AdmissionAction::kHold
					    : v.admit && v.best_effort ? AdmissionAction::kBestEffort
								       : AdmissionAction::kNone;
		if (act == AdmissionAction::kBestEffort)
			best_effort.insert(j->id);
		if (act != AdmissionAction::kNone) {
			Action a;
			a.kind = ActionKind::kAdmission;
			a.job = j->id;
			a.admission = act;
			a.reason = std::move(v.reason);
			d.actions.push_back(std::move(a));
		}
	}

	// Preemptive orderings and elastic allocations reconsider running jobs as candidates: their
	// GPUs go back into the pool the plan is made from. A job the host cannot requeue, or one that
	// is stopping already, is never reconsidered: it keeps its GPUs and its place.
	const bool reconsider = ordering_->preemptive() || allocation_->elastic();
	FreeMap free(view);
	std::vector<const Job*> pinned;
	// Deadline work that a waiting job of a higher class may not stop (protects()) keeps its GPUs
	// and its place this cycle, as a job that cannot be requeued does: only while such a job does
	// not fit on the free GPUs (otherwise the deadline job stays free to be resized).
	std::vector<const Job*> contending;
	if (reconsider) {
		const FreeMap now_free(view);
		for (const Job* w : candidates) {
			std::vector<NodeShare> where;
			if (priority_class(*w) > 0 &&
			    !placement_->place(view, *w, w->gpus_requested, now_free, where))
				contending.push_back(w);
		}
	}
	auto is_protected = [&](const Job* r) {
		for (const Job* w : contending)
			if (protects(view, *r, *w))
				return true;
		return false;
	};
	if (reconsider) {
		for (const Job* r : view.running) {
			if (!r->requeueable || r->stopping() || is_protected(r)) {
				pinned.push_back(r);
				// A stopping job's GPUs are as good as free for the plan: a job planned on
				// them starts when they are (the host waits for the checkpoint), and no other
				// running job is preempted for it meanwhile.
				if (r->stopping())
					free.release(r->placement);
				continue;
			}
			candidates.push_back(r);
			free.release(r->placement);
		}
	}
	ordering_->order(view, candidates);
	// FairnessPolicy=: fair-share before the policy's order; quota: within each priority class,
	// the jobs within their account's quota ahead of the borrowing ones (a standing the allocation
	// keeps, as it keeps the classes).
	if (fairness_ == FairnessKind::kFairshare)
		order_by_fairshare(view, candidates);
	std::unordered_set<JobId> guaranteed;
	std::unordered_set<JobId> owed;  // the guaranteed jobs that go ahead of borrowing work now
	if (fairness_ == FairnessKind::kQuota) {
		std::vector<const Job*> holding = pinned;
		if (!reconsider)
			holding.assign(view.running.begin(), view.running.end());
		guaranteed = quota_guaranteed(view, candidates, holding);
		owed = reconsider ? quota_owed(view, candidates, guaranteed, quota_reclaim_timeout_,
					       preempt_grace_)
				  : guaranteed;
	}
	if (!best_effort.empty())
		std::stable_partition(candidates.begin(), candidates.end(),
				      [&](const Job* j) { return !best_effort.count(j->id); });
	auto standing_of = [&](const Job& j) {
		const int c = priority_class(j);
		return fairness_ == FairnessKind::kQuota ? 2 * c + (owed.count(j.id) ? 1 : 0) : c;
	};
	apply_standing(candidates, standing_of);
	std::vector<int> standing = standing_blocks(candidates, standing_of);

	// A learned allocation records its round in the view's recorder: only the plan kept is recorded.
	StepLog rounds;
	ClusterView planned_view = view;
	if (view.recorder)
		planned_view.recorder = &rounds;
	Plan plan;
	auto allocate = [&]() {
		plan.clear();
		rounds.steps.clear();
		AllocationInput in{planned_view, candidates, *placement_, free, reconsider, &standing};
		allocation_->allocate(in, plan);
		if (!guaranteed.empty() && allocation_->elastic())
			serve_guaranteed_first(
				planned_view, candidates, guaranteed, owed, free, reconsider, *placement_,
				preempt_grace_, [this](const Job& j) { return priority_class(j); }, plan);
	};
	allocate();
	// ResizePayback=: a running job whose current run has not yet paid back the restart a resize
	// costs it keeps its size and nodes: when the plan resizes or moves one, it is pinned where it
	// is (as a job that cannot be requeued) and the others are planned again around it. Else an
	// allocation that changes its mind from one cycle to the next (a job started small on what was
	// free and grown the next cycle; in Slurm, started small again after the requeue of that
	// resize, ...) restarts it again and again without progress. A job the plan leaves out is
	// requeued as before: preemptions follow the order's own rules. Each pass pins at least one
	// more job, so this ends.
	while (reconsider && resize_payback_ > 0) {
		std::unordered_map<JobId, const Assignment*> at;
		for (const Assignment& a : plan)
			at[a.job->id] = &a;
		std::unordered_set<JobId> settle;
		for (const Job* c : candidates) {
			auto it = at.find(c->id);
			if (c->running() && it != at.end() && too_young_to_resize(view, *c) &&
			    (it->second->gpus != c->gpus_allocated ||
			     !same_placement(it->second->placement, c->placement)))
				settle.insert(c->id);
		}
		if (settle.empty())
			break;
		std::vector<const Job*> rest;
		for (const Job* c : candidates) {
			if (!settle.count(c->id)) {
				rest.push_back(c);
				continue;
			}
			pinned.push_back(c);
			free.take(c->placement);
		}
		candidates.swap(rest);
		standing = standing_blocks(candidates, standing_of);
		allocate();
	}
	if (view.recorder)
		for (PolicyStep& step : rounds.steps)
			view.recorder->record(std::move(step));
	for (const Job* r : pinned)
		plan.push_back({r, r->gpus_allocated, r->placement});

	std::unordered_map<JobId, const Assignment*> planned;
	planned.reserve(plan.size());
	for (const Assignment& a : plan)
		planned[a.job->id] = &a;

	// Stop first (frees GPUs), then resize, then start: hosts apply actions in order.
	std::vector<Action> resizes;
	std::vector<Action> starts;
	for (const Job* r : view.running) {
		auto it = planned.find(r->id);
		if (it == planned.end()) {
			Action a;
			a.kind = ActionKind::kRequeue;
			a.job = r->id;
			// A borrowing job behind work within quota: the order takes its GPUs back.
			a.reason = fairness_ == FairnessKind::kQuota && !guaranteed.empty() &&
						   !guaranteed.count(r->id)
					   ? std::string(kQuotaReclaimed) + " from account '" + r->account +
						     "' (preempted by ordering)"
					   : "preempted by ordering";
			a.predicted_suspend = r->preempt_cost.suspend();
			a.predicted_resume = r->preempt_cost.resume;
			d.actions.push_back(std::move(a));
		} else if (it->second->gpus != r->gpus_allocated ||
			   !same_placement(it->second->placement, r->placement)) {
			Action a;
			a.kind = ActionKind::kResize;
			a.job = r->id;
			a.gpus = it->second->gpus;
			a.placement = it->second->placement;
			a.reason = "resize";
			a.predicted_suspend = r->preempt_cost.suspend();
			a.predicted_resume = r->preempt_cost.resume;
			resizes.push_back(std::move(a));
		}
	}
	std::vector<const Job*> waiting;  // admitted pending jobs the plan does not start, in order
	for (const Job* j : candidates) {
		if (j->running())
			continue;
		auto it = planned.find(j->id);
		if (it == planned.end()) {
			waiting.push_back(j);
			continue;
		}
		Action a;
		a.kind = ActionKind::kStart;
		a.job = j->id;
		a.gpus = it->second->gpus;
		a.placement = it->second->placement;
		starts.push_back(std::move(a));
	}

	// A non-preemptive ordering may still preempt through the Preemption policy: waiting jobs of a
	// higher priority class, most urgent first, each take what the policy frees for it (PickyMan's
	// ordered division of the running jobs).
	if (!reconsider && !waiting.empty() && !view.running.empty()) {
		FreeMap after(view);
		for (const Action& a : starts)
			after.take(a.placement);
		for (const Job* r : view.running)
			if (r->stopping())
				after.release(r->placement);
		preempt_for(view, waiting, after, d.actions);
		if (!guaranteed.empty())
			reclaim_for(view, waiting, guaranteed, after, d.actions);
	} else if (reconsider) {
		// FairnessPolicy=quota: jobs within quota the plan could not place (the GPUs they need are
		// spread over borrowing jobs it keeps) take them back as with a non-preemptive ordering, on
		// the cluster after the plan.
		// Not under elastic allocations: they choose their own jobs, and GPUs taken back for a job
		// they then leave waiting would be taken back again every cycle.
		std::vector<const Job*> owing;
		for (const Job* w : waiting)
			if (owed.count(w->id) && !allocation_->elastic())
				owing.push_back(w);
		if (!owing.empty()) {
			std::unordered_map<JobId, const Job*> running;
			for (const Job* r : view.running)
				running[r->id] = r;
			FreeMap after(view);
			std::unordered_set<JobId> moved;
			for (const Action& a : d.actions)
				if (a.kind == ActionKind::kRequeue && running.count(a.job) &&
				    !running[a.job]->stopping())
					after.release(running[a.job]->placement);
			for (const Action& a : resizes) {
				after.release(running[a.job]->placement);
				moved.insert(a.job);
			}
			for (const Job* r : view.running)
				if (r->stopping())
					after.release(r->placement);
			for (const Action& a : resizes)
				after.take(a.placement);
			for (const Action& a : starts)
				after.take(a.placement);
			reclaim_for(view, owing, guaranteed, after, d.actions, std::move(moved));
		}
		// The order preempts here: say why a waiting job of a higher class did not take the GPUs
		// of deadline work it may not stop. The cluster after the plan: requeued, stopping and
		// resized jobs' GPUs freed, then the resizes' and the starts' taken.
		std::vector<const Job*> explain;
		for (const Job* w : waiting)
			if (priority_class(*w) > 0 &&
			    std::any_of(view.running.begin(), view.running.end(),
					[&](const Job* r) { return protects(view, *r, *w); }))
				explain.push_back(w);
		if (!explain.empty()) {
			std::unordered_map<JobId, const Job*> running;
			for (const Job* r : view.running)
				running[r->id] = r;
			FreeMap after(view);
			for (const Action& a : d.actions)
				if (a.kind == ActionKind::kRequeue && running.count(a.job))
					after.release(running[a.job]->placement);
			for (const Action& a : resizes)
				after.release(running[a.job]->placement);
			for (const Job* r : view.running)
				if (r->stopping())
					after.release(r->placement);
			for (const Action& a : resizes)
				after.take(a.placement);
			for (const Action& a : starts)
				after.take(a.placement);
			for (const Job* w : explain)
				explain_wait(view, *w, after, view.running, d.actions);
		}
	}
	if (fairness_ == FairnessKind::kQuota && !view.accounts.empty())
		explain_quota_waits(view, waiting, guaranteed, d.actions);
	order_resizes(view, d.actions, resizes);
	for (Action& a : starts)
		d.actions.push_back(std::move(a));

	// Queue order and priorities of the jobs still pending: most urgent gets the highest value.
	for (const Job* j : waiting)
		d.order.push_back(j->id);
	for (const Job* j : held)
		d.order.push_back(j->id);
	const double n = static_cast<double>(d.order.size());
	for (std::size_t i = 0; i < d.order.size(); ++i) {
		Action a;
		a.kind = ActionKind::kSetPriority;
		a.job = d.order[i];
		a.priority = n - static_cast<double>(i);
		d.actions.push_back(std::move(a));
	}

	return d;
}

}  // namespace dlsched
