// The owner of a job, asked of Slurm through its own commands: squeue for a job slurmctld still
// holds, then sacct for one it has already forgotten. Not through libslurm in this process:
// slurm_load_job() loads slurm.conf's select plugin into the caller, and a controller-side plugin
// (select/dlsched_cons_tres needs slurmctld's globals) fails to load there, which libslurm answers
// with fatal(), ending the service. A command that fails only fails its lookup (503, retried).
#include <unistd.h>

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
constexpr std::size_t kMaxInFlight = 16;  // lookups running at once; more are answered "error"

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
		// Lookups of other jobs move on too (and their children are reaped), without waiting.
		for (auto& [id, l] : lookups_)
			if (id != job_id)
				(void) l.cmd->poll(0);
		auto it = lookups_.find(job_id);
		if (it == lookups_.end()) {
			if (lookups_.size() >= kMaxInFlight) {
				OwnerAnswer a;
				a.message = std::to_string(lookups_.size()) +
					    " owner lookups are running already (slurmctld slow?)";
				return a;
			}
			Lookup l;
			l.cmd = Command::start(squeue(job_id), kCommandLimitS, 65536);
			it = lookups_.emplace(job_id, std::move(l)).first;
		}
		Lookup& l = it->second;
		const OwnerAnswer a = step(job_id, l, wait_s);
		if (a.kind != OwnerAnswer::Kind::kPending)
			lookups_.erase(it);
		return a;
	}

private:
	struct Lookup {
		std::unique_ptr<Command> cmd;
		bool in_sacct = false;
		CommandResult squeue;  // once in_sacct
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
		return r.timed_out ? "did not answer within " + std::to_string(static_cast<int>(kCommandLimitS)) + " s"
				   : "exit " + std::to_string(r.status);
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
			l.cmd = Command::start(sacct(job_id), kCommandLimitS, 65536);
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
		// squeue exits 1 for a job it does not know: it answered.
		const bool squeue_answered = l.squeue.started && !l.squeue.timed_out && l.squeue.status >= 0;
		if (s.ok() && squeue_answered) {
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
