#include "util/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace dlsched {

std::unique_ptr<Command> Command::start(const std::vector<std::string>& argv, double limit_s,
					std::size_t max_output, bool with_stderr)
{
	std::unique_ptr<Command> c(new Command());
	c->name_ = argv.empty() ? std::string("(nothing)") : argv[0];
	c->max_output_ = max_output;
	c->deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
					      std::chrono::duration<double>(std::max(0.0, limit_s)));
	if (argv.empty()) {
		c->result_.error = "no command";
		c->done_ = true;
		return c;
	}
	// Only our end is non-blocking: the child's standard output must block when the pipe is
	// full (a child given a non-blocking one fails its writes with EAGAIN: head -c 1M did).
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		c->result_.error = std::string("pipe: ") + std::strerror(errno);
		c->done_ = true;
		return c;
	}
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
		c->result_.error = std::string("pipe: ") + std::strerror(errno);
		close(fds[0]);
		close(fds[1]);
		c->done_ = true;
		return c;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	if (with_stderr)
		posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_init(&attr);
	// Its own process group, so that a kill at the limit reaches what it started too; the
	// caller's blocked signals are not the child's.
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	std::vector<char*> args;
	for (const std::string& a : argv)
		args.push_back(const_cast<char*>(a.c_str()));
	args.push_back(nullptr);
	const int rc = posix_spawnp(&c->pid_, args[0], &fa, &attr, args.data(), environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		c->pid_ = -1;
		c->result_.error = argv[0] + ": " + std::strerror(rc);
		c->done_ = true;
		return c;
	}
	c->out_fd_ = fds[0];
	c->result_.started = true;
	return c;
}

Command::~Command()
{
	if (!done_)
		finish_killed();
	if (out_fd_ >= 0)
		close(out_fd_);
}

void Command::read_some()
{
	char buf[4096];
	for (;;) {
		const ssize_t n = read(out_fd_, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {  // end of file (or an error: nothing more will come)
			close(out_fd_);
			out_fd_ = -1;
			return;
		}
		const std::size_t room = max_output_ - std::min(max_output_, result_.out.size());
		result_.out.append(buf, std::min(room, static_cast<std::size_t>(n)));
	}
}

void Command::finish_killed()
{
	kill(-pid_, SIGKILL);
	int status = 0;
	while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
	}
	result_.timed_out = true;
	result_.status = -1;
	done_ = true;
}

bool Command::poll(double wait_s)
{
	if (done_)
		return true;
	const Clock::time_point until = std::min(
		deadline_, Clock::now() + std::chrono::duration_cast<Clock::duration>(
						  std::chrono::duration<double>(std::max(0.0, wait_s))));
	for (;;) {
		if (out_fd_ >= 0)
			read_some();
		if (out_fd_ < 0) {
			int status = 0;
			pid_t r;
			while ((r = waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
			}
			if (r == pid_) {
				result_.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
				done_ = true;
				return true;
			}
		}
		const Clock::time_point now = Clock::now();
		if (now >= deadline_) {
			finish_killed();
			return true;
		}
		if (now >= until)
			return false;
		const auto left =
			std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
		if (out_fd_ >= 0) {
			pollfd p{out_fd_, POLLIN, 0};
			(void)::poll(&p, 1, static_cast<int>(left));
		} else {
			// Its output closed but it has not exited yet: look again shortly.
			std::this_thread::sleep_for(std::chrono::milliseconds(std::min<long long>(left, 5)));
		}
	}
}

CommandResult run_command(const std::vector<std::string>& argv, double limit_s, std::size_t max_output)
{
	std::unique_ptr<Command> c = Command::start(argv, limit_s, max_output);
	while (!c->poll(limit_s + 1)) {
	}
	return c->result();
}

}  // namespace dlsched
