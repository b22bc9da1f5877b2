#include "fairness.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <queue>
#include <set>

#include "config/quota_file.h"
#include "engine.h"
#include "util/csv.h"

namespace dlsched::sim {

std::vector<Account> workload_accounts(const Workload& w)
{
	std::set<std::string> names;
	for (const Job& j : w.jobs)
		names.insert(j.account);
	std::vector<Account> out;
	for (const std::string& n : names)
		out.push_back({n, 0, 1, 0});
	return out;
}

std::vector<Account> proportional_quotas(const Workload& w, const std::vector<double>& runtime, int gpus)
{
	std::map<std::string, double> gpu_s;
	double total = 0;
	for (std::size_t i = 0; i < w.jobs.size(); ++i) {
		const Job& j = w.jobs[i];
		const std::size_t k = static_cast<std::size_t>(j.id - 1);
		const double r = k < runtime.size()
					 ? runtime[k]
					 : (i < w.trace_runtime_s.size() ? w.trace_runtime_s[i] : 0);
		gpu_s[j.account] += j.gpus_requested * r;
		total += j.gpus_requested * r;
	}
	std::vector<Account> out;
	std::vector<std::pair<double, std::size_t>> remainder;  // (fraction left, index)
	int given = 0;
	for (const auto& [name, used] : gpu_s) {
		const double exact = total > 0 ? gpus * used / total : 0.0;
		const int whole = static_cast<int>(std::floor(exact));
		out.push_back({name, static_cast<double>(whole), static_cast<double>(whole), 0});
		remainder.push_back({exact - whole, out.size() - 1});
		given += whole;
	}
	// Largest remainders first; ties by name (the accounts' order).
	std::stable_sort(remainder.begin(), remainder.end(),
			 [](const auto& a, const auto& b) { return a.first > b.first; });
	for (std::size_t k = 0; given < gpus && k < remainder.size(); ++k, ++given)
		out[remainder[k].second].quota_gpus += 1;
	for (Account& a : out)
		a.shares = a.quota_gpus;
	return out;
}

Result<std::vector<Account>> load_quotas(const std::string& path, const Workload& w, int gpus)
{
	auto lines = read_quota_file(path);
	if (!lines.is_ok()) {
		if (lines.status().code() == StatusCode::kNotFound)
			return not_found("--quotas " + lines.status().message() +
					 " (or --quotas proportional)");
		return lines.status();
	}
	std::map<std::string, double> quota;
	double sum = 0;
	for (const AccountQuota& q : lines.value()) {
		quota[q.account] = q.gpus;
		sum += q.gpus;
	}
	if (sum > gpus + 1e-9)
		return invalid_argument("--quotas " + path + ": the quotas sum to " + std::to_string(sum) +
					" GPUs, more than the cluster's " + std::to_string(gpus) +
					" training GPUs: lower them so that every guarantee can be kept");
	std::vector<Account> out = workload_accounts(w);
	for (Account& a : out) {
		auto it = quota.find(a.name);
		a.quota_gpus = a.shares = it == quota.end() ? 0.0 : it->second;
		if (it != quota.end())
			quota.erase(it);
	}
	for (const auto& [name, g] : quota)  // listed, without jobs in this workload
		out.push_back({name, g, g, 0});
	std::sort(out.begin(), out.end(), [](const Account& a, const Account& b) { return a.name < b.name; });
	return out;
}

AccountLedger::AccountLedger(std::vector<double> quota, double timeout)
    : quota_(std::move(quota)), timeout_(timeout), below_since_(quota_.size(), -1), totals_(quota_.size())
{
}

void AccountLedger::advance(double from, double to, const std::vector<double>& demand,
			    const std::vector<double>& held)
{
	const double dt = to - from;
	if (!(dt > 0))
		return;
	for (std::size_t a = 0; a < quota_.size(); ++a) {
		const double owed = std::min(quota_[a], demand[a]);
		Totals& t = totals_[a];
		t.demanded_quota_gpu_s += owed * dt;
		t.held_gpu_s += held[a] * dt;
		t.borrowed_gpu_s += std::max(0.0, held[a] - quota_[a]) * dt;
		const double short_by = owed - held[a];
		if (short_by <= 1e-9) {
			below_since_[a] = -1;
			continue;
		}
		if (below_since_[a] < 0)
			below_since_[a] = from;
		const double counted = to - std::max(from, below_since_[a] + timeout_);
		if (counted > 0)
			t.below_quota_gpu_s += short_by * counted;
	}
}

double alone_avg_jct(std::vector<AloneJob> jobs, double quota)
{
	if (jobs.empty())
		return 0;
	if (quota < 1)
		return INFINITY;
	std::stable_sort(jobs.begin(), jobs.end(),
			 [](const AloneJob& a, const AloneJob& b) { return a.submit < b.submit; });
	using End = std::pair<double, double>;  // (end time, GPUs)
	std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
	double free = quota, last_start = 0, sum = 0;
	for (const AloneJob& j : jobs) {
		const double g = std::min<double>(j.gpus, quota);
		const double run = j.runtime * j.gpus / g;
		double t = std::max(j.submit, last_start);
		while (free + 1e-9 < g) {
			t = std::max(t, ends.top().first);
			free += ends.top().second;
			ends.pop();
		}
		while (!ends.empty() && ends.top().first <= t) {  // ended by then: free for later jobs too
			free += ends.top().second;
			ends.pop();
		}
		free -= g;
		ends.push({t + run, g});
		last_start = t;
		sum += t + run - j.submit;
	}
	return sum / static_cast<double>(jobs.size());
}

FairnessMetrics compute_fairness(const SimResult& r, const Workload& w, const std::vector<double>& bound)
{
	FairnessMetrics f;
	f.reclaims = r.quota_reclaims;
	f.reclaimed_gpus = r.quota_reclaimed_gpus;
	std::map<std::string, std::vector<const JobOutcome*>> by;
	for (const JobOutcome& o : r.jobs)
		by[o.account].push_back(&o);
	std::vector<double> x;
	for (std::size_t a = 0; a < r.accounts.size(); ++a) {
		const Account& acc = r.accounts[a];
		AccountMetrics m;
		m.quota_gpus = acc.quota_gpus;
		if (a < r.account_totals.size()) {
			const AccountLedger::Totals& t = r.account_totals[a];
			m.borrowed_gpu_s = t.borrowed_gpu_s;
			m.below_quota_gpu_s = t.below_quota_gpu_s;
			m.demanded_quota_gpu_s = t.demanded_quota_gpu_s;
			if (t.demanded_quota_gpu_s > 0)
				x.push_back(t.held_gpu_s / t.demanded_quota_gpu_s);
		}
		std::vector<AloneJob> alone;
		double jct = 0, queue = 0;
		std::size_t ran = 0;
		for (const JobOutcome* o : by[acc.name]) {
			++m.jobs;
			m.gpu_s += o->gpu_seconds;
			const std::size_t k = static_cast<std::size_t>(o->id - 1);
			if (o->cancelled || k >= w.jobs.size())
				continue;
			++ran;
			jct += o->finish - o->submit;
			queue += o->first_start - o->submit;
			alone.push_back({o->submit, w.jobs[k].gpus_requested,
					 bound.empty() ? w.trace_runtime_s[k] : bound[k]});
		}
		if (ran) {
			m.avg_jct_s = jct / static_cast<double>(ran);
			m.avg_queue_s = queue / static_cast<double>(ran);
			const double base = alone_avg_jct(alone, acc.quota_gpus);
			m.rho = base > 0 && std::isfinite(base) ? m.avg_jct_s / base : 0;
		}
		f.below_quota_gpu_s += m.below_quota_gpu_s;
		f.demanded_quota_gpu_s += m.demanded_quota_gpu_s;
		f.max_rho = std::max(f.max_rho, m.rho);
		f.by_account[acc.name] = m;
	}
	f.jain_index = jain_index(x);
	return f;
}

double jain_index(const std::vector<double>& x)
{
	if (x.empty())
		return 1;
	double s = 0, s2 = 0;
	for (double v : x) {
		s += v;
		s2 += v * v;
	}
	return s2 > 0 ? s * s / (static_cast<double>(x.size()) * s2) : 1;
}

}  // namespace dlsched::sim
