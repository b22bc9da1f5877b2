// The owner of a job, asked of Slurm through its own commands: squeue for a job slurmctld still
// holds, then sacct for one it has already forgotten. Not through libslurm in this process:
// slurm_load_job() loads slurm.conf's select plugin into the caller, and a controller-side plugin
// (select/dlsched_cons_tres needs slurmctld's globals) fails to load there, which libslurm answers
// with fatal(), ending the service. A command that fails only fails its lookup (503, retried).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "owner_lookup.h"

extern char** environ;

namespace dlsched::ingest {

namespace {

struct CommandResult {
	bool ran = false;  // started and exited by itself within the time limit
	int status = -1;   // exit status
	std::string out;   // standard output (standard error goes to the service's own)
};

// Runs argv with a time limit (it is killed after `limit_s`); the service is single-threaded.
CommandResult run_command(const std::vector<std::string>& argv, double limit_s)
{
	CommandResult r;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return r;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	std::vector<char*> args;
	for (const std::string& a : argv)
		args.push_back(const_cast<char*>(a.c_str()));
	args.push_back(nullptr);
	pid_t pid = -1;
	const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return r;
	}
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
	char buf[4096];
	bool killed = false;
	for (;;) {
		const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
		                                                                        std::chrono::steady_clock::now());
		if (left.count() <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		pollfd p{fds[0], POLLIN, 0};
		const int n = poll(&p, 1, static_cast<int>(left.count()));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		const ssize_t got = read(fds[0], buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (r.out.size() < 65536)
			r.out.append(buf, static_cast<size_t>(got));
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	r.ran = !killed && WIFEXITED(status);
	r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return r;
}

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
	OwnerAnswer owner_of(std::int64_t job_id) override
	{
		OwnerAnswer a;
		const std::string id = std::to_string(job_id);
		// squeue knows the jobs slurmctld holds (running, pending, recently ended).
		CommandResult q = run_command({"squeue", "-h", "-t", "all", "-j", id, "-o", "%U"}, 10);
		if (q.ran && q.status == 0 && first_uid(q.out, a.uid)) {
			a.kind = OwnerAnswer::Kind::kFound;
			return a;
		}
		// sacct (slurmdbd) knows the ones slurmctld has purged; -a: any user's job.
		CommandResult s = run_command({"sacct", "-n", "-X", "-P", "-a", "-j", id, "-o", "UID"}, 10);
		if (s.ran && s.status == 0 && first_uid(s.out, a.uid)) {
			a.kind = OwnerAnswer::Kind::kFound;
			return a;
		}
		if (s.ran && s.status == 0 && q.ran) {
			a.kind = OwnerAnswer::Kind::kNoSuchJob;
			a.message = "neither slurmctld (squeue) nor accounting (sacct) knows job " + id;
		} else {
			a.kind = OwnerAnswer::Kind::kError;
			a.message = "could not ask Slurm for job " + id + "'s owner (squeue " +
			            (q.ran ? "exit " + std::to_string(q.status) : std::string("did not finish")) +
			            ", sacct " + (s.ran ? "exit " + std::to_string(s.status) : std::string("did not finish")) +
			            "); is slurmctld up, and SLURM_CONF right?";
		}
		return a;
	}
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
