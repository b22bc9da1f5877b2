// The owner of a job, asked of Slurm through its own commands: squeue for a job slurmctld still
// holds, then sacct for one it has already forgotten. Not through libslurm in this process:
// slurm_load_job() loads slurm.conf's select plugin into the caller, and a controller-side plugin
// (select/dlsched_cons_tres needs slurmctld's globals) fails to load there, which libslurm answers
// with fatal(), ending the service. A command that fails only fails its lookup (503, retried).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "owner_lookup.h"
#include "util/command.h"

namespace dlsched::ingest {

namespace {

constexpr double kCommandLimitS = 10;  // each of squeue and sacct; they run in the background
constexpr std::size_t kMaxInFlight = 16;  // lookups running at once; more wait (kPending)
// A lookup answered in the background is kept this long for its sender's next try (Retry-After
// 1 s; the collector's backoff reaches 60 s), and at most this many: then it is dropped, so that
// senders who never come back cannot fill the table (they did: 16 of them stopped every lookup).
constexpr double kKeepAnswerS = 120;
constexpr std::size_t kMaxKept = 1024;

// The first line of `out` as a uid, if it is one.
bool first_uid(const std::string& out, uid_t& uid)
{
	const std::string line = out.substr(0, out.find('\n'));
	if (line.empty() || line.find_first_not_of("0123456789") != std::string::npos || line.size() > 9)
		return false;
	uid = static_cast<uid_t>(std::strtoul(line.c_str(), nullptr, 10));
	return true;
}

class SlurmOwnerLookup : public OwnerLookup {
public:
	OwnerAnswer owner_of(std::int64_t job_id, double wait_s) override
	{
		// Lookups of other jobs move on too (squeue, then sacct; children reaped), without
		// waiting; their answers wait for their senders, for a while.
		const Clock::time_point now = Clock::now();
		std::size_t running = 0, kept = 0;
		for (auto it = lookups_.begin(); it != lookups_.end();) {
			Lookup& l = it->second;
			if (it->first != job_id && !l.answered) {
				const OwnerAnswer a = step(it->first, l, 0);
				if (a.kind != OwnerAnswer::Kind::kPending) {
					l.answered = true;
					l.answer = a;
					l.answered_at = now;
				}
			}
			if (it->first != job_id && l.answered &&
			    (now - l.answered_at > std::chrono::duration<double>(kKeepAnswerS) || kept >= kMaxKept)) {
				it = lookups_.erase(it);
				continue;
			}
			++(l.answered ? kept : running);
			++it;
		}
		auto it = lookups_.find(job_id);
		if (it == lookups_.end()) {
			if (running >= kMaxInFlight) {
				// Not slurmctld failing (that would pause every lookup for 30 s): many new
				// jobs at once, a job array starting say. Asked again in a second.
				OwnerAnswer a;
				a.kind = OwnerAnswer::Kind::kPending;
				a.message = std::to_string(running) + " owner lookups are running already; job " +
					    std::to_string(job_id) + " waits its turn";
				return a;
			}
			Lookup l;
			l.cmd = Command::start(squeue(job_id), kCommandLimitS, 65536, true);
			it = lookups_.emplace(job_id, std::move(l)).first;
			++started_;
		}
		Lookup& l = it->second;
		const OwnerAnswer a = l.answered ? l.answer : step(job_id, l, wait_s);
		if (a.kind != OwnerAnswer::Kind::kPending)
			lookups_.erase(it);
		return a;
	}

	std::uint64_t lookups_started() const override { return started_; }

private:
	using Clock = std::chrono::steady_clock;
	struct Lookup {
		std::unique_ptr<Command> cmd;
		bool in_sacct = false;
		CommandResult squeue;  // once in_sacct
		bool answered = false;  // in the background: `answer` waits for the sender
		OwnerAnswer answer;
		Clock::time_point answered_at{};
	};

	static std::vector<std::string> squeue(std::int64_t job_id)
	{
		// squeue knows the jobs slurmctld holds (running, pending, recently ended).
		return {"squeue", "-h", "-t", "all", "-j", std::to_string(job_id), "-o", "%U"};
	}
	static std::vector<std::string> sacct(std::int64_t job_id)
	{
		// sacct (slurmdbd) knows the ones slurmctld has purged; -a: any user's job.
		return {"sacct", "-n", "-X", "-P", "-a", "-j", std::to_string(job_id), "-o", "UID"};
	}
	static std::string how(const CommandResult& r)
	{
		if (!r.started)
			return r.error;
		if (r.timed_out)
			return "did not answer within " + std::to_string(static_cast<int>(kCommandLimitS)) + " s";
		const std::string line = r.out.substr(0, std::min<std::size_t>(r.out.find('\n'), 200));
		return "exit " + std::to_string(r.status) + (line.empty() ? std::string() : ": " + line);
	}
	// squeue exits 1 both for a job slurmctld does not know and when it cannot reach slurmctld
	// ("Unable to contact slurm controller"): only the first is an answer. Taking the second for
	// one made a new job's batches 403 unknown_job (rejected by the collector) while slurmctld
	// restarted and slurmdbd had not heard of the job yet.
	static bool squeue_answered(const CommandResult& r)
	{
		return r.started && !r.timed_out &&
		       (r.status == 0 || (r.status == 1 && r.out.find("Invalid job id specified") != std::string::npos));
	}

	// Moves l on (squeue, then sacct) for at most wait_s in all.
	static OwnerAnswer step(std::int64_t job_id, Lookup& l, double wait_s)
	{
		OwnerAnswer a;
		const std::string id = std::to_string(job_id);
		const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
		if (!l.in_sacct) {
			if (!l.cmd->poll(wait_s)) {
				a.kind = OwnerAnswer::Kind::kPending;
				a.message = "asking slurmctld (squeue) for job " + id + "'s owner";
				return a;
			}
			l.squeue = l.cmd->result();
			if (l.squeue.ok() && first_uid(l.squeue.out, a.uid)) {
				a.kind = OwnerAnswer::Kind::kFound;
				return a;
			}
			l.in_sacct = true;
			l.cmd = Command::start(sacct(job_id), kCommandLimitS, 65536, true);
		}
		const double left = std::chrono::duration<double>(until - std::chrono::steady_clock::now()).count();
		if (!l.cmd->poll(left > 0 ? left : 0)) {
			a.kind = OwnerAnswer::Kind::kPending;
			a.message = "asking accounting (sacct) for job " + id + "'s owner";
			return a;
		}
		const CommandResult& s = l.cmd->result();
		if (s.ok() && first_uid(s.out, a.uid)) {
			a.kind = OwnerAnswer::Kind::kFound;
			return a;
		}
		// sacct -n prints nothing for a job it does not know; anything else (a warning on
		// standard error) leaves the question open: retried, never a reason to refuse.
		if (s.ok() && s.out.find_first_not_of(" \t\r\n") == std::string::npos && squeue_answered(l.squeue)) {
			a.kind = OwnerAnswer::Kind::kNoSuchJob;
			a.message = "neither slurmctld (squeue) nor accounting (sacct) knows job " + id;
		} else {
			a.kind = OwnerAnswer::Kind::kError;
			a.message = "could not ask Slurm for job " + id + "'s owner (squeue " + how(l.squeue) +
				    ", sacct " + how(s) + "); is slurmctld up, and SLURM_CONF right?";
		}
		return a;
	}

	std::map<std::int64_t, Lookup> lookups_;
	std::uint64_t started_ = 0;
};

}  // namespace

Result<std::unique_ptr<OwnerLookup>> make_slurm_owner_lookup()
{
	const char* env = std::getenv("SLURM_CONF");
	const std::string conf = env && *env ? env : "/etc/slurm/slurm.conf";
	if (access(conf.c_str(), R_OK) != 0)
		return not_found("--owner-lookup slurm: cannot read " + conf + " (" + std::strerror(errno) +
		                 "); set SLURM_CONF to slurm.conf's path, or use --owner-lookup db-only");
	return std::unique_ptr<OwnerLookup>(new SlurmOwnerLookup());
}

}  // namespace dlsched::ingest
