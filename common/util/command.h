// Running an external command (squeue, sacct, sbatch, scontrol) with a time limit, without letting
// it hold the caller: dlsched-ingestd's owner lookups start one and look at it again on later
// requests (its HTTP thread is the only one), dlsched-replay waits for each (run_command()). The
// child runs in a process group of its own, standard input /dev/null, standard output read into a
// bounded buffer, standard error the caller's (or with the output); past its limit the whole group
// is killed.
#ifndef DLSCHED_UTIL_COMMAND_H
#define DLSCHED_UTIL_COMMAND_H

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace dlsched {

struct CommandResult {
	bool started = false;    // spawned (else `error` says why)
	bool timed_out = false;  // killed at its limit
	int status = -1;         // its exit status when it exited by itself, else -1
	std::string out;         // standard output, at most the caller's max_output bytes
	std::string error;       // why it did not start
	// Started, exited by itself within its limit, with status 0.
	bool ok() const { return started && !timed_out && status == 0; }
};

class Command {
public:
	// Spawns argv[0] (searched in PATH) with argv; the limit counts from now. Never null: a command
	// that cannot start is done at once, with result().error set. With_stderr: its standard error
	// goes into `out` too (squeue says why it failed there only).
	static std::unique_ptr<Command> start(const std::vector<std::string>& argv, double limit_s,
					      std::size_t max_output = 1 << 20, bool with_stderr = false);
	~Command();  // kills and reaps a child still running
	Command(const Command&) = delete;
	Command& operator=(const Command&) = delete;

	// Reads what the child wrote and reaps it once it has ended, waiting at most wait_s (0: only
	// what is there already); kills it past its limit. True once it is done: result() is final.
	bool poll(double wait_s);
	bool done() const { return done_; }
	const CommandResult& result() const { return result_; }
	const std::string& name() const { return name_; }

private:
	using Clock = std::chrono::steady_clock;
	Command() = default;
	void read_some();
	void finish_killed();

	std::string name_;
	pid_t pid_ = -1;
	int out_fd_ = -1;
	std::size_t max_output_ = 0;
	Clock::time_point deadline_{};
	bool done_ = false;
	CommandResult result_;
};

// Starts argv and waits for it, at most limit_s.
CommandResult run_command(const std::vector<std::string>& argv, double limit_s,
			  std::size_t max_output = 1 << 20);

}  // namespace dlsched

#endif
