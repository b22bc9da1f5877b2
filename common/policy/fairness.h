// FairnessPolicy=: what the accounts (teams) sharing the cluster are owed, composed with any ordering
// and allocation (doc/admin-guide.md, "Teams, shares and quotas").
//
//   none       the policies' order alone (dlsched before accounts).
//   quota      each account is guaranteed its quota of GPUs while it has work. Jobs are split in two:
//              guaranteed (in the policy's order, its GPUs and its account's guaranteed jobs' before
//              it stay within its quota: a job too large for what is left borrows, and a later one
//              that fits is guaranteed; an account holding nothing whose quota is smaller than its
//              job gets that one job, else it would never be served from its quota) and borrowing
//              (the rest). Guaranteed jobs go ahead of the borrowing ones of the same priority class; idle
//              GPUs are lent to borrowing jobs. A guaranteed job that finds no free GPUs takes borrowed ones
//              back: with a non-preemptive ordering, once no running job is predicted to end within
//              QuotaReclaimTimeout= of its wait, the reclaim picks victims among the borrowing jobs of
//              accounts above their quota, least lost time first (PreemptionCost::stop_loss(), the overhead
//              model of PreemptionPolicy=overhead), never one the host cannot requeue nor one whose account
//              it would leave below its quota, and drops every victim the job does not need. Preemptive
//              orderings and elastic allocations take them back through their own plan first; there
//              a pending guaranteed job goes ahead of borrowing work only once its account's quota
//              is owed (quota_owed(): the wait of one of its guaranteed jobs and the borrowed GPUs'
//              time to come back reach QuotaReclaimTimeout=), and until then the policy's own order
//              serves it, as it would without quotas; running guaranteed jobs always stay ahead. A
//              job owed its quota that the plan of a rigid allocation cannot place (its GPUs spread
//              over borrowing jobs the plan keeps) reclaims as above. Elastic allocations (dl2, mckp,
//              optimus) choose their own jobs: there the plan's borrowing starts, then its running borrowing
//              jobs (least lost time first, no account left below its quota, none the job fits without) give
//              way to jobs owed their quota that it left waiting, which start in their place.
//   fairshare  Slurm's fair-share factor (priority/multifactor, classic: 2^(-U/S)) first, highest
//              first, then the policy's order among equal factors.
#ifndef DLSCHED_POLICY_FAIRNESS_H
#define DLSCHED_POLICY_FAIRNESS_H

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/cluster_view.h"
#include "util/status.h"

namespace dlsched {

// The start of the reason of every requeue that gives borrowed GPUs back (hosts count them).
inline constexpr char kQuotaReclaimed[] = "quota reclaimed";

enum class FairnessKind { kNone, kQuota, kFairshare };

// "none", "quota", "fairshare" (as FairnessPolicy= writes them); anything else is kInvalidArgument.
Result<FairnessKind> parse_fairness(const std::string& name);

// Slurm's classic fair-share factor of each account in `accounts`: F = 2^(-U/S), where S is its
// shares over the sum of all accounts' shares and U its decayed usage over the sum of all accounts'
// usage (0 when nobody used anything). An account without shares gets 0 (it only runs on what
// nobody else wants), as in Slurm. Accounts not listed: 0.
std::unordered_map<std::string, double> fairshare_factors(Span<const Account> accounts);

// Stable-sorts `jobs` by their account's fair-share factor, highest first.
void order_by_fairshare(const ClusterView& view, std::vector<const Job*>& jobs);

// Each account's quota, and the GPUs its running jobs hold.
class QuotaBook {
public:
	explicit QuotaBook(const ClusterView& view);
	double quota(const std::string& account) const;
	// GPUs held by running jobs that are not stopping.
	double held(const std::string& account) const;
	void add_held(const std::string& account, double gpus) { held_[account] += gpus; }

private:
	std::unordered_map<std::string, double> quota_;
	std::unordered_map<std::string, double> held_;
};

// The candidates (in the policy's order) within their account's quota. `holding`: the running jobs
// that keep their GPUs whatever the plan (not candidates), counted first.
std::unordered_set<JobId> quota_guaranteed(const ClusterView& view, const std::vector<const Job*>& candidates,
					   const std::vector<const Job*>& holding);

// Of the `guaranteed` candidates, those whose quota is owed now, under a preemptive ordering or an
// elastic allocation (which take GPUs back through their own plan): every running one (its GPUs stay
// with it), and every pending one of an account once the wait of one of them (since submission or
// its last stop) and the time borrowed GPUs take to come back - the longest stop_delay(grace) among
// the running jobs of accounts above their quota - reach `timeout` (QuotaReclaimTimeout=): the
// guarantee is the account's, and a job that arrives while its account waits does not wait again.
// Before that the policy's own order serves them, as it would without quotas: a job of the account
// may end, or the order may start them anyway.
std::unordered_set<JobId> quota_owed(const ClusterView& view, const std::vector<const Job*>& candidates,
				     const std::unordered_set<JobId>& guaranteed, Seconds timeout,
				     Seconds grace);

}  // namespace dlsched

#endif
