// The owner of a job and what Slurm knows of it, asked of Slurm through its own commands: squeue
// for a job slurmctld still holds, then sacct for one it has already forgotten. Not through
// libslurm in this process: slurm_load_job() loads slurm.conf's select plugin into the caller, and a
// controller-side plugin (select/dlsched_cons_tres needs slurmctld's globals) fails to load there,
// which libslurm answers with fatal(), ending the service. A command that fails only fails its
// lookup (503, retried).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "owner_lookup.h"
#include "util/command.h"
#include "util/node_list.h"

namespace dlsched::ingest {

namespace {

constexpr double kCommandLimitS = 10;     // each of squeue and sacct; they run in the background
constexpr std::size_t kMaxInFlight = 16;  // lookups running at once; more wait (kPending)
// Answers kept at most (the oldest go first), so that many jobs cannot fill the table.
constexpr std::size_t kMaxKept = 4096;

// A time as SLURM_TIME_FORMAT=%s prints it; 0 for "N/A", "Unknown", "None".
double slurm_time(const std::string& field)
{
	if (field.empty() || field.size() > 12 || field.find_first_not_of("0123456789") != std::string::npos)
		return 0;
	return std::strtod(field.c_str(), nullptr);
}

// The GPUs in a TRES string ("cpu=4,mem=8G,node=1,billing=4,gres/gpu=2"): its gres/gpu count, 0
// without one; -1 for none at all ("N/A", "").
int tres_gpus(const std::string& tres)
{
	if (tres.empty() || tres.find('=') == std::string::npos)
		return -1;
	std::size_t i = 0;
	while (i < tres.size()) {
		std::size_t comma = tres.find(',', i);
		if (comma == std::string::npos)
			comma = tres.size();
		const std::string item = tres.substr(i, comma - i);
		if (item.rfind("gres/gpu=", 0) == 0) {
			const std::string n = item.substr(9);
			if (n.empty() || n.size() > 6 ||
			    n.find_first_not_of("0123456789") != std::string::npos)
				return -1;
			return std::atoi(n.c_str());
		}
		i = comma + 1;
	}
	return 0;
}

// The first line of `out`: "UID|SUBMIT|START|END|STATE|NODELIST|TRES" (squeue -O and sacct -P
// print the same columns here). False when it is not one.
bool parse_job_line(const std::string& out, uid_t& uid, db::SlurmJob& job)
{
	const std::string line = out.substr(0, out.find('\n'));
	std::vector<std::string> f;
	std::size_t i = 0;
	while (true) {
		const std::size_t bar = line.find('|', i);
		f.push_back(line.substr(i, bar == std::string::npos ? std::string::npos : bar - i));
		if (bar == std::string::npos)
			break;
		i = bar + 1;
	}
	if (f.size() != 7 || f[0].empty() || f[0].size() > 9 ||
	    f[0].find_first_not_of("0123456789") != std::string::npos)
		return false;
	uid = static_cast<uid_t>(std::strtoul(f[0].c_str(), nullptr, 10));
	job.uid = uid;
	job.submit_s = slurm_time(f[1]);
	job.start_s = slurm_time(f[2]);
	job.end_s = slurm_time(f[3]);
	job.state = f[4].substr(0, f[4].find(' '));  // sacct: "CANCELLED by 0"
	// "None assigned", "(null)" or another form: the nodes are not checked.
	if (!expand_node_list(f[5], job.nodes) || f[5].find_first_of(" ()") != std::string::npos)
		job.nodes.clear();
	job.gpus = tres_gpus(f[6]);
	return true;
}

class SlurmOwnerLookup : public OwnerLookup {
public:
	explicit SlurmOwnerLookup(double answer_ttl_s) : ttl_(answer_ttl_s) {}

	OwnerAnswer owner_of(std::int64_t job_id, bool may_start) override
	{
		// Lookups of other jobs move on too (squeue, then sacct; children reaped), without
		// waiting; answers older than the TTL are dropped.
		const Clock::time_point now = Clock::now();
		std::size_t running = 0;
		for (auto it = lookups_.begin(); it != lookups_.end();) {
			Lookup& l = it->second;
			if (!l.answered) {
				const OwnerAnswer a = step(it->first, l);
				if (a.kind != OwnerAnswer::Kind::kPending) {
					l.answered = true;
					l.answer = a;
					l.answered_at = now;
					order_.emplace_back(it->first, now);
				}
			}
			if (l.answered && now - l.answered_at > std::chrono::duration<double>(ttl_)) {
				it = lookups_.erase(it);
				continue;
			}
			running += l.answered ? 0 : 1;
			++it;
		}
		while (order_.size() > kMaxKept) {
			auto it = lookups_.find(order_.front().first);
			if (it != lookups_.end() && it->second.answered &&
			    it->second.answered_at == order_.front().second)
				lookups_.erase(it);
			order_.pop_front();
		}
		auto it = lookups_.find(job_id);
		if (it == lookups_.end()) {
			OwnerAnswer a;
			a.kind = OwnerAnswer::Kind::kPending;
			if (!may_start) {
				a.kind = OwnerAnswer::Kind::kDeferred;
				a.message = "job " + std::to_string(job_id) + " is not asked of Slurm now";
				return a;
			}
			if (running >= kMaxInFlight) {
				// Not slurmctld failing (that would pause every lookup for 30 s): many new
				// jobs at once, a job array starting say. Asked again in a second.
				a.message = std::to_string(running) +
					    " job lookups are running already; job " +
					    std::to_string(job_id) + " waits its turn";
				return a;
			}
			Lookup l;
			l.cmd = Command::start(squeue(job_id), kCommandLimitS, 65536, true);
			it = lookups_.emplace(job_id, std::move(l)).first;
			++started_;
			const OwnerAnswer first = step(job_id, it->second);
			if (first.kind == OwnerAnswer::Kind::kPending)
				return first;
			it->second.answered = true;
			it->second.answer = first;
			it->second.answered_at = now;
			order_.emplace_back(job_id, now);
		}
		Lookup& l = it->second;
		if (!l.answered)
			return step(job_id, l);
		OwnerAnswer a = l.answer;
		a.age_s = std::chrono::duration<double>(now - l.answered_at).count();
		// Only a job Slurm named is kept: an error is asked again (after the service's pause),
		// and the service remembers unknown jobs itself.
		if (a.kind != OwnerAnswer::Kind::kFound)
			lookups_.erase(it);
		return a;
	}

	void forget(std::int64_t job_id) override
	{
		auto it = lookups_.find(job_id);
		if (it != lookups_.end() && it->second.answered)
			lookups_.erase(it);
	}

	std::uint64_t lookups_started() const override { return started_; }

private:
	using Clock = std::chrono::steady_clock;
	struct Lookup {
		std::unique_ptr<Command> cmd;
		bool in_sacct = false;
		CommandResult squeue;   // once in_sacct
		bool answered = false;  // `answer` is kept for the TTL
		OwnerAnswer answer;
		Clock::time_point answered_at{};
	};

	// Times as Unix seconds (SLURM_TIME_FORMAT is a strftime format for every Slurm command).
	static std::vector<std::string> with_env(std::vector<std::string> argv)
	{
		argv.insert(argv.begin(), {"env", "SLURM_TIME_FORMAT=%s"});
		return argv;
	}
	static std::vector<std::string> squeue(std::int64_t job_id)
	{
		// squeue knows the jobs slurmctld holds (running, pending, recently ended).
		// -O: the allocated TRES has no -o letter; "NAME:|" is the field, whole, then a '|'.
		return with_env(
			{"squeue", "-h", "-t", "all", "-j", std::to_string(job_id), "-O",
			 "UserId:|,SubmitTime:|,StartTime:|,EndTime:|,State:|,NodeList:|,tres-alloc:"});
	}
	static std::vector<std::string> sacct(std::int64_t job_id)
	{
		// sacct (slurmdbd) knows the ones slurmctld has purged; -a: any user's job.
		return with_env({"sacct", "-n", "-X", "-P", "-a", "-j", std::to_string(job_id), "-o",
				 "UID,Submit,Start,End,State,NodeList,AllocTRES"});
	}
	static std::string how(const CommandResult& r)
	{
		if (!r.started)
			return r.error;
		if (r.timed_out)
			return "did not answer within " + std::to_string(static_cast<int>(kCommandLimitS)) +
			       " s";
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
		       (r.status == 0 ||
			(r.status == 1 && r.out.find("Invalid job id specified") != std::string::npos));
	}

	// Moves l on (squeue, then sacct) as far as their output allows now, without waiting.
	static OwnerAnswer step(std::int64_t job_id, Lookup& l)
	{
		OwnerAnswer a;
		const std::string id = std::to_string(job_id);
		if (!l.in_sacct) {
			if (!l.cmd->poll(0)) {
				a.kind = OwnerAnswer::Kind::kPending;
				a.message = "asking slurmctld (squeue) about job " + id;
				return a;
			}
			l.squeue = l.cmd->result();
			if (l.squeue.ok() && parse_job_line(l.squeue.out, a.uid, a.job)) {
				a.kind = OwnerAnswer::Kind::kFound;
				return a;
			}
			l.in_sacct = true;
			l.cmd = Command::start(sacct(job_id), kCommandLimitS, 65536, true);
		}
		if (!l.cmd->poll(0)) {
			a.kind = OwnerAnswer::Kind::kPending;
			a.message = "asking accounting (sacct) about job " + id;
			return a;
		}
		const CommandResult& s = l.cmd->result();
		if (s.ok() && parse_job_line(s.out, a.uid, a.job)) {
			a.kind = OwnerAnswer::Kind::kFound;
			return a;
		}
		// sacct -n prints nothing for a job it does not know; anything else (a warning on
		// standard error) leaves the question open: retried, never a reason to refuse.
		if (s.ok() && s.out.find_first_not_of(" \t\r\n") == std::string::npos &&
		    squeue_answered(l.squeue)) {
			a.kind = OwnerAnswer::Kind::kNoSuchJob;
			a.message = "neither slurmctld (squeue) nor accounting (sacct) knows job " + id;
		} else {
			a.kind = OwnerAnswer::Kind::kError;
			a.message = "could not ask Slurm about job " + id + " (squeue " + how(l.squeue) +
				    ", sacct " + how(s) + "); is slurmctld up, and SLURM_CONF right?";
		}
		return a;
	}

	double ttl_;
	std::map<std::int64_t, Lookup> lookups_;
	std::deque<std::pair<std::int64_t, Clock::time_point>> order_;  // answers, oldest first
	std::uint64_t started_ = 0;
};

}  // namespace

Result<std::unique_ptr<OwnerLookup>> make_slurm_owner_lookup(double answer_ttl_s)
{
	const char* env = std::getenv("SLURM_CONF");
	const std::string conf = env && *env ? env : "/etc/slurm/slurm.conf";
	if (access(conf.c_str(), R_OK) != 0)
		return not_found("--owner-lookup slurm: cannot read " + conf + " (" + std::strerror(errno) +
				 "); set SLURM_CONF to slurm.conf's path, or use --owner-lookup db-only");
	return std::unique_ptr<OwnerLookup>(new SlurmOwnerLookup(answer_ttl_s));
}

}  // namespace dlsched::ingest
