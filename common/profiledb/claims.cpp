#include "profiledb/claims.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace dlsched::db {

namespace {

std::string num(double v)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.1f", v);
	return buf;
}

// One time a batch claims, and what it is, for the messages.
struct Claim {
	double t;
	std::string what;
};

std::vector<Claim> claimed_times(const Batch& b)
{
	std::vector<Claim> out;
	if (b.job)
		out.push_back({b.job->start_s, "the job record's start"});
	for (const EpochRecord& e : b.epochs) {
		out.push_back({e.start_s, "epoch " + std::to_string(e.epoch) + "'s start"});
		out.push_back({e.end_s, "epoch " + std::to_string(e.epoch) + "'s end"});
	}
	for (const CheckpointRecord& c : b.checkpoints)
		out.push_back({c.at_s, "the " + c.kind + " of epoch " + num(c.epoch) + "'s time"});
	if (b.job_end)
		out.push_back({b.job_end->end_s, "the job_end record's end"});
	return out;
}

double median(std::vector<double> v)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	const std::size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

bool SlurmJob::holds_nodes() const
{
	static const char* const kHolding[] = {"RUNNING",   "SUSPENDED", "COMPLETING", "SIGNALING",
					       "STAGE_OUT", "RESIZING",  "STOPPED"};
	for (const char* s : kHolding)
		if (state == s)
			return true;
	return false;
}

Status check_not_future(const Batch& b, double now_s, double skew_s)
{
	for (const Claim& c : claimed_times(b))
		if (c.t > now_s + skew_s)
			return invalid_argument(c.what + " " + num(c.t) +
						" is in the future (the service's clock says " + num(now_s) +
						"; " + num(skew_s) + " s of skew are allowed)");
	return Status::ok();
}

namespace {

// The median GPU-seconds of a run's first steady epochs (each run's first left out), at most
// kReferenceEpochs of them; 0 with fewer than kMinSteadyEpochs.
double first_steady_gpu_s(const std::vector<EpochRecord>& epochs)
{
	std::vector<double> v;
	std::set<int> runs_seen;
	for (const EpochRecord& e : epochs) {
		if (runs_seen.insert(e.run).second)
			continue;  // a run's first epoch
		if (v.size() < kReferenceEpochs)
			v.push_back(e.seconds() * std::max(1, e.gpus));
	}
	return v.size() >= kMinSteadyEpochs ? median(v) : 0;
}

}  // namespace

double peer_reference_gpu_s(const std::vector<JobProfile>& history, const std::string& user)
{
	std::map<std::string, int> per_user;
	std::vector<double> refs;
	for (const JobProfile& p : history) {
		if (p.job.user == user || ++per_user[p.job.user] > 3)
			continue;
		const double r = first_steady_gpu_s(p.epochs);
		if (r > 0)
			refs.push_back(r);
	}
	return refs.empty() ? 0 : median(refs);
}

double model_reference_gpu_s(const std::vector<JobProfile>& history, const std::string& user,
			     double profile_epoch_gpu_s, std::string* what)
{
	const double peers = peer_reference_gpu_s(history, user);
	if (peers > 0) {
		if (what)
			*what = "other users' jobs of its model";
		return peers;
	}
	if (profile_epoch_gpu_s > 0) {
		if (what)
			*what = "its model's profile";
		return profile_epoch_gpu_s;
	}
	return 0;
}

Status check_claims(const Batch& b, const SlurmJob& job, const JobProfile* recorded, double now_s,
		    double skew_s, double peer_gpu_s, const std::string& peer_what)
{
	Status st = check_not_future(b, now_s, skew_s);
	if (!st.is_ok())
		return st;
	const std::string id = "job " + std::to_string(b.job_id);
	const bool pending = job.state == "PENDING" || job.state == "REQUEUED" || job.state == "REQUEUE_HOLD";
	// A pending job has not started, or was requeued: Slurm's start and nodes are not its last
	// run's (a backfill estimate, none), whose last records may come now. Otherwise the records lie
	// in the run Slurm knows.
	if (!pending && job.start_s > 0) {
		for (const Claim& c : claimed_times(b))
			if (c.t < job.start_s - skew_s)
				return invalid_argument(c.what + " " + num(c.t) + " is before " + id +
							" started (Slurm: " + num(job.start_s) + ")");
	}
	if (!pending && job.start_s <= 0 && !claimed_times(b).empty())
		return invalid_argument(id + " has not started (Slurm: " + job.state +
					"): it has nothing to report");
	// Ended, or requeued and pending since its last run ended (a pending job's end in the future
	// is the backfill's guess, not an end).
	if (!job.holds_nodes() && job.end_s > 0 && (!pending || job.end_s <= now_s + skew_s)) {
		for (const Claim& c : claimed_times(b))
			if (c.t > job.end_s + skew_s)
				return invalid_argument(c.what + " " + num(c.t) + " is after " + id +
							(pending ? "'s last run" : "") + " ended (Slurm: " +
							job.state + ", end " + num(job.end_s) + ")");
	}
	if (!pending && !job.nodes.empty() &&
	    std::find(job.nodes.begin(), job.nodes.end(), b.node) == job.nodes.end())
		return invalid_argument("node " + b.node + " is not one of " + id + "'s nodes (Slurm: " +
					std::to_string(job.nodes.size()) + " node(s), not this one)");

	if (!pending && job.gpus >= 0) {
		if (b.job && b.job->gpus > job.gpus)
			return invalid_argument("the job record claims " + std::to_string(b.job->gpus) +
						" GPUs; " + id + " holds " + std::to_string(job.gpus) +
						" (Slurm)");
		for (const EpochRecord& e : b.epochs)
			if (e.gpus > job.gpus)
				return invalid_argument("epoch " + std::to_string(e.epoch) + " claims " +
							std::to_string(e.gpus) + " GPUs; " + id + " holds " +
							std::to_string(job.gpus) + " (Slurm)");
	}

	// Progress. The epochs already recorded and those of the batch, by number.
	struct Span {
		double start, end;
		int run;
		bool claimed;  // from this batch
		int gpus;      // the GPUs it ran on (0: unknown, taken as 1)
	};
	std::map<int, Span> epochs;
	double saved = 0;     // the furthest save recorded
	double progress = 0;  // the furthest epoch or save recorded: a load resumes from at most there
	double resumed = -1;  // the furthest load, recorded or claimed
	if (recorded) {
		for (const EpochRecord& e : recorded->epochs) {
			epochs[e.epoch] = {e.start_s, e.end_s, e.run, false, e.gpus};
			progress = std::max<double>(progress, e.epoch);
		}
		for (const CheckpointRecord& c : recorded->checkpoints) {
			if (c.kind == "save")
				saved = std::max(saved, c.epoch);
			else
				resumed = std::max(resumed, c.epoch);
		}
		progress = std::max(progress, saved);
	}
	for (const CheckpointRecord& c : b.checkpoints)
		if (c.kind == "load") {
			if (c.epoch > progress + 1 + 1e-6)
				return invalid_argument(
					"the load at epoch " + num(c.epoch) + " is ahead of " + id +
					"'s progress: the furthest it reported is " + num(progress) +
					" (a checkpoint holds at most one epoch more)");
			resumed = std::max(resumed, c.epoch);
		}
	for (const EpochRecord& e : b.epochs)
		if (!epochs.count(e.epoch))
			epochs[e.epoch] = {e.start_s, e.end_s, e.run, true, e.gpus};
	// Each run's first epoch may be the rest of one a checkpoint interrupted: any length.
	std::set<int> first_of_run;
	{
		std::map<int, int> first;
		for (const auto& [n, s] : epochs)
			if (!first.count(s.run))
				first[s.run] = n;
		for (const auto& [run, n] : first)
			first_of_run.insert(n);
	}
	// The job's reference speed: its earliest steady epochs recorded (each run's first left out: a
	// warm-up, or part of one), in GPU-seconds (an epoch on g GPUs at most g times faster). The
	// earliest only: epochs accepted later never lower it, so quick forged epochs cannot make the
	// next ones look plausible (the soak test's: 0.1-s epochs after three real 3-s ones, each batch
	// then checked against a median they had pulled down).
	// The same reference as other users' jobs give (peer_reference_gpu_s()), from what is recorded.
	const double typical = recorded ? first_steady_gpu_s(recorded->epochs) : 0;
	const Span* prev = nullptr;
	int prev_n = 0;
	for (const auto& [n, s] : epochs) {
		if (prev && (s.claimed || prev->claimed) && s.start < prev->end - skew_s)
			return invalid_argument("epoch " + std::to_string(n) + " starts at " + num(s.start) +
						", before epoch " + std::to_string(prev_n) + " ended (" +
						num(prev->end) + "): " + id + "'s epochs cannot overlap");
		// Epoch numbers do not jump: the one before was reported, or the run resumed past it.
		if (s.claimed && n > 1 && !epochs.count(n - 1) && resumed < n - 1 - 1e-6)
			return invalid_argument("epoch " + std::to_string(n) + " follows no epoch " +
						std::to_string(n - 1) + " of " + id +
						" and no checkpoint load at " + std::to_string(n - 1) +
						" or later: progress does not jump");
		if (s.claimed && typical > 0 && !first_of_run.count(n) &&
		    (s.end - s.start) * std::max(1, s.gpus) < kFastestEpochFraction * typical)
			return invalid_argument(
				"epoch " + std::to_string(n) + " took " + num(s.end - s.start) + " s on " +
				std::to_string(std::max(1, s.gpus)) + " GPU(s), under a tenth of " + id +
				"'s first steady epochs (median " + num(typical) +
				" GPU-s): faster than plausible");
		// Too young for a reference of its own: other users' jobs of its model bound it.
		if (s.claimed && typical <= 0 && peer_gpu_s > 0 && !first_of_run.count(n) &&
		    (s.end - s.start) * std::max(1, s.gpus) < kFastestPeerFraction * peer_gpu_s)
			return invalid_argument(
				"epoch " + std::to_string(n) + " took " + num(s.end - s.start) + " s on " +
				std::to_string(std::max(1, s.gpus)) + " GPU(s), under a twentieth of " +
				peer_what + " (" + num(peer_gpu_s) + " GPU-s): faster than plausible");
		prev = &s;
		prev_n = n;
	}
	const int last_epoch = epochs.empty() ? 0 : epochs.rbegin()->first;
	for (const CheckpointRecord& c : b.checkpoints)
		if (c.kind == "save" && c.epoch > std::max<double>(last_epoch, resumed) + 1 + 1e-6)
			return invalid_argument("the save at epoch " + num(c.epoch) + " is ahead of " + id +
						"'s progress: its last epoch reported is " +
						std::to_string(last_epoch) +
						" (a checkpoint holds at most one epoch more)");
	return Status::ok();
}

}  // namespace dlsched::db
