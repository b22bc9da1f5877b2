// dlsched-sim's accounts (teams): the quotas --quotas sets, the timeline of what each account is
// owed and holds, and the fairness figures of a run (doc/results.md, "Teams, shares and quotas").
#ifndef DLSCHED_SIM_FAIRNESS_H
#define DLSCHED_SIM_FAIRNESS_H

#include <map>
#include <string>
#include <vector>

#include "model/account.h"
#include "util/status.h"
#include "workload/workload.h"

namespace dlsched::sim {

// Every account of the workload, by name, with equal shares and no quota: what fair-share reads
// when no quotas are given.
std::vector<Account> workload_accounts(const Workload& w);

// --quotas proportional: each account guaranteed GPUs in proportion to its GPU-hours in the
// workload (requested GPUs x `runtime`, per job by job id - 1), whole GPUs by largest remainder,
// summing to `gpus`. Shares are the quotas.
std::vector<Account> proportional_quotas(const Workload& w, const std::vector<double>& runtime, int gpus);

// --quotas FILE: `account,gpus` lines (# comments, blank lines and an `account,gpus` header allowed).
// Accounts of the workload the file does not list get no quota. Errors name FILE:LINE and the fix:
// a malformed line, a negative or non-numeric count, an account listed twice, quotas summing to more
// than `gpus`.
Result<std::vector<Account>> load_quotas(const std::string& path, const Workload& w, int gpus);

// Integrates each account's state over time: quota, demand (GPUs its pending and running jobs ask
// for) and GPUs held.
class AccountLedger {
public:
	struct Totals {
		double demanded_quota_gpu_s = 0;  // integral of min(quota, demand)
		double below_quota_gpu_s =
			0;                  // of min(quota, demand) - held where positive, beyond the timeout
		double held_gpu_s = 0;      // of held
		double borrowed_gpu_s = 0;  // of held - quota where positive
	};
	AccountLedger(std::vector<double> quota, double timeout);
	// The state from `from` to `to` (one value per account). A shortfall counts once it has lasted
	// `timeout` seconds without a break.
	void advance(double from, double to, const std::vector<double>& demand,
		     const std::vector<double>& held);
	const std::vector<Totals>& totals() const { return totals_; }

private:
	std::vector<double> quota_;
	double timeout_;
	std::vector<double> below_since_;  // -1: not below its quota
	std::vector<Totals> totals_;
};

// One job as the finish-time fairness baseline sees it: alone on its account's quota.
struct AloneJob {
	double submit = 0;
	int gpus = 1;
	double runtime = 0;  // alone at its requested GPUs
};
// The mean JCT of `jobs` (by submit time) run alone, first come first served, on `quota` GPUs
// counted as a pool: a job starts when its GPUs are free and every earlier job has started; a job
// asking for more than the quota runs on all of it, slower in proportion (runtime x gpus / quota).
// 0 for no jobs; infinite for a quota below one GPU.
double alone_avg_jct(std::vector<AloneJob> jobs, double quota);

struct AccountMetrics {
	std::size_t jobs = 0;
	double avg_jct_s = 0, avg_queue_s = 0, gpu_s = 0, quota_gpus = 0, borrowed_gpu_s = 0,
	       below_quota_gpu_s = 0;
	double demanded_quota_gpu_s = 0;
	double rho = 0;  // avg JCT / avg JCT alone on its quota (0: no quota)
};

struct FairnessMetrics {
	std::map<std::string, AccountMetrics> by_account;
	double below_quota_gpu_s = 0, demanded_quota_gpu_s = 0;
	double jain_index = 0;  // over accounts with demanded quota time: held / min(quota, demand) time
	double max_rho = 0;     // the largest account's rho
	long reclaims = 0;      // jobs requeued to give borrowed GPUs back (FairnessPolicy=quota's reclaim)
	double reclaimed_gpus = 0;
};

struct SimResult;
// The figures of a run with --quotas: per account, and over them (doc/results.md says how each one
// is computed). `bound`: bound_runtimes() by job id - 1 (empty: the workload's trace runtimes).
FairnessMetrics compute_fairness(const SimResult& r, const Workload& w, const std::vector<double>& bound);

// Jain's fairness index of `x`: (sum x)^2 / (n sum x^2); 1 for no values.
double jain_index(const std::vector<double>& x);

}  // namespace dlsched::sim

#endif
