// FairnessPolicy= (policy/fairness.h). The fair-share factor follows the formula Slurm documents for
// priority/multifactor's classic algorithm (doc/html/priority_multifactor.shtml: "F = 2**(-U/S)"),
// on a flat tree of accounts; our own code.
#include "policy/fairness.h"

#include <algorithm>
#include <cmath>

namespace dlsched {

Result<FairnessKind> parse_fairness(const std::string& name)
{
	if (name == "none" || name.empty())
		return FairnessKind::kNone;
	if (name == "quota")
		return FairnessKind::kQuota;
	if (name == "fairshare")
		return FairnessKind::kFairshare;
	return invalid_argument("unknown fairness policy '" + name + "' (known: none, quota, fairshare)");
}

std::unordered_map<std::string, double> fairshare_factors(Span<const Account> accounts)
{
	double shares = 0, usage = 0;
	for (const Account& a : accounts) {
		shares += std::max(0.0, a.shares);
		usage += std::max(0.0, a.usage_gpu_s);
	}
	std::unordered_map<std::string, double> out;
	for (const Account& a : accounts) {
		const double s = shares > 0 ? std::max(0.0, a.shares) / shares : 0.0;
		const double u = usage > 0 ? std::max(0.0, a.usage_gpu_s) / usage : 0.0;
		out[a.name] = s > 0 ? std::exp2(-u / s) : 0.0;
	}
	return out;
}

void order_by_fairshare(const ClusterView& view, std::vector<const Job*>& jobs)
{
	if (view.accounts.empty())
		return;
	const auto factor = fairshare_factors(view.accounts);
	auto of = [&](const Job* j) {
		auto it = factor.find(j->account);
		return it == factor.end() ? 0.0 : it->second;
	};
	std::stable_sort(jobs.begin(), jobs.end(), [&](const Job* a, const Job* b) { return of(a) > of(b); });
}

QuotaBook::QuotaBook(const ClusterView& view)
{
	for (const Account& a : view.accounts)
		quota_[a.name] = std::max(0.0, a.quota_gpus);
	for (const Job* r : view.running)
		if (!r->stopping())
			held_[r->account] += r->gpus_allocated;
}

double QuotaBook::quota(const std::string& account) const
{
	auto it = quota_.find(account);
	return it == quota_.end() ? 0.0 : it->second;
}

double QuotaBook::held(const std::string& account) const
{
	auto it = held_.find(account);
	return it == held_.end() ? 0.0 : it->second;
}

std::unordered_set<JobId> quota_guaranteed(const ClusterView& view, const std::vector<const Job*>& candidates,
					   const std::vector<const Job*>& holding)
{
	std::unordered_set<JobId> out;
	if (view.accounts.empty())
		return out;
	const QuotaBook book(view);
	std::unordered_map<std::string, double> used;  // GPUs counted against each quota so far
	for (const Job* r : holding)
		if (!r->stopping())
			used[r->account] += r->gpus_allocated;
	for (const Job* j : candidates) {
		const double q = book.quota(j->account);
		double& u = used[j->account];
		// Within the quota; or the first job of an account whose quota is smaller than it (else such
		// an account would never be served from its quota). A job that does not fit what is left
		// of its quota borrows, and does not count against it: a later, smaller job of the same
		// account that fits is within quota (else one large job ahead in the order would leave
		// the account below its quota with work that fits it).
		const double g = j->running() ? j->gpus_allocated : j->gpus_requested;
		if (u + g <= q || (u == 0 && q > 0 && g > q)) {
			out.insert(j->id);
			u += g;
		}
	}
	return out;
}

std::unordered_set<JobId> quota_owed(const ClusterView& view, const std::vector<const Job*>& candidates,
				     const std::unordered_set<JobId>& guaranteed, Seconds timeout,
				     Seconds grace)
{
	std::unordered_set<JobId> out;
	if (guaranteed.empty())
		return out;
	const QuotaBook book(view);
	Seconds lead = 0;  // how long borrowed GPUs take to come back
	for (const Job* r : view.running)
		if (!r->stopping() && r->requeueable && book.held(r->account) > book.quota(r->account))
			lead = std::max(lead, r->preempt_cost.stop_delay(grace));
	// The guarantee is the account's: once one of its jobs within quota has waited long enough, every
	// one of them is owed (a job that arrives while its account is short does not wait again).
	std::unordered_set<std::string> short_long_enough;
	for (const Job* j : candidates) {
		if (!guaranteed.count(j->id) || j->running())
			continue;
		const Seconds waited = std::max(0.0, view.now - std::max(j->submit_time, j->last_stop_time));
		if (waited + lead >= timeout)
			short_long_enough.insert(j->account);
	}
	for (const Job* j : candidates)
		if (guaranteed.count(j->id) && (j->running() || short_long_enough.count(j->account)))
			out.insert(j->id);
	return out;
}

}  // namespace dlsched
