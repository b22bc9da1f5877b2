// util/command: the time-bounded runner behind dlsched-ingestd's owner lookups and dlsched-replay.
// Real processes (sh, sleep, cat, head): the exit status and standard output (and standard error
// when asked) come back, output past the cap is dropped without stalling the child, a command that
// cannot start says why, poll() never waits longer than asked, and at its limit (or when the
// Command is destroyed) the whole process group is killed, a grandchild included.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "temp_path.h"
#include "util/command.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The pid a shell wrote to `path`, waiting up to 5 s for it.
pid_t pid_in(const std::string& path)
{
	for (int i = 0; i < 500; ++i) {
		std::ifstream f(path);
		long pid = 0;
		if (f >> pid && pid > 0)
			return static_cast<pid_t>(pid);
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	return -1;
}

// Whether pid is gone (or a zombie nobody has reaped yet: it runs no more), waiting up to 5 s.
bool gone(pid_t pid)
{
	for (int i = 0; i < 500; ++i) {
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return true;
		std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
		std::string pid_field, comm, state;
		if (stat >> pid_field >> comm >> state && state == "Z")
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	return false;
}

}  // namespace

START_TEST(exit_status_and_output)
{
	// Table: command, its exit status, its output.
	struct Case {
		std::vector<std::string> argv;
		int status;
		const char* out;
	} cases[] = {
		{{"true"}, 0, ""},
		{{"sh", "-c", "printf 'uid 1000\\nmore'"}, 0, "uid 1000\nmore"},
		{{"sh", "-c", "printf partial; exit 3"}, 3, "partial"},
		{{"sh", "-c", "echo to-stderr >&2; exit 1"}, 1, ""},  // standard error is not captured
		{{"cat"}, 0, ""},  // standard input is /dev/null: cat ends at once
	};
	for (const Case& c : cases) {
		const CommandResult r = run_command(c.argv, 10);
		ck_assert_msg(r.started, "%s did not start: %s", c.argv.back().c_str(), r.error.c_str());
		ck_assert(!r.timed_out);
		ck_assert_int_eq(r.status, c.status);
		ck_assert_str_eq(r.out.c_str(), c.out);
		ck_assert(r.ok() == (c.status == 0));
	}
}
END_TEST

START_TEST(standard_error_with_the_output_when_asked)
{
	// squeue says why it failed on standard error only ("Invalid job id specified" or "Unable
	// to contact slurm controller", both exit 1): owner lookups read it there.
	std::unique_ptr<Command> c = Command::start(
		{"sh", "-c", "echo out; echo 'slurm_load_jobs error: x' >&2; exit 1"}, 10, 1 << 20, true);
	while (!c->poll(1)) {
	}
	ck_assert_int_eq(c->result().status, 1);
	ck_assert_str_eq(c->result().out.c_str(), "out\nslurm_load_jobs error: x\n");
}
END_TEST

START_TEST(output_past_the_cap_is_dropped_and_the_child_finishes)
{
	// 1 MiB written into a 1,000-byte cap: the child is not left blocked on a full pipe.
	const auto t0 = Clock::now();
	const CommandResult r = run_command({"head", "-c", "1048576", "/dev/zero"}, 10, 1000);
	ck_assert(r.ok());
	ck_assert_uint_eq(r.out.size(), 1000);
	ck_assert_msg(since(t0) < 5, "took %.1f s", since(t0));
}
END_TEST

START_TEST(a_command_that_cannot_start_says_why)
{
	std::unique_ptr<Command> c = Command::start({"/nonexistent/dlsched-no-such-command"}, 10);
	ck_assert(c->done());
	ck_assert(c->poll(0));
	ck_assert(!c->result().started);
	ck_assert(!c->result().ok());
	ck_assert_int_eq(c->result().status, -1);
	ck_assert_msg(c->result().error.find("/nonexistent/dlsched-no-such-command: ") == 0, "error: %s",
		      c->result().error.c_str());
	std::unique_ptr<Command> none = Command::start({}, 10);
	ck_assert_str_eq(none->result().error.c_str(), "no command");
}
END_TEST

START_TEST(poll_waits_no_longer_than_asked)
{
	std::unique_ptr<Command> c = Command::start({"sleep", "1"}, 10);
	auto t0 = Clock::now();
	ck_assert(!c->poll(0));
	ck_assert_msg(since(t0) < 0.05, "poll(0) took %.3f s", since(t0));
	t0 = Clock::now();
	ck_assert(!c->poll(0.2));
	const double waited = since(t0);
	ck_assert_msg(waited >= 0.19 && waited < 0.8, "poll(0.2) took %.3f s", waited);
	ck_assert(!c->done());
	ck_assert(c->poll(5));
	ck_assert(c->result().ok());
}
END_TEST

START_TEST(the_limit_kills_the_process_group)
{
	// The shell starts a grandchild (sleep) and waits for it: both are killed at the limit.
	const std::string pidfile = test::temp_path("dlsched-test-command", "grandchild.pid");
	const auto t0 = Clock::now();
	std::unique_ptr<Command> c =
		Command::start({"sh", "-c", "sleep 30 & echo $! >" + pidfile + "; wait"}, 0.5);
	const pid_t grandchild = pid_in(pidfile);
	ck_assert_int_gt(grandchild, 0);
	while (!c->poll(1)) {
	}
	const double took = since(t0);
	ck_assert_msg(took >= 0.45 && took < 3, "killed after %.2f s (limit 0.5 s)", took);
	ck_assert(c->result().started);
	ck_assert(c->result().timed_out);
	ck_assert_int_eq(c->result().status, -1);
	ck_assert(!c->result().ok());
	ck_assert_msg(gone(grandchild), "the grandchild %d (sleep 30) still runs",
		      static_cast<int>(grandchild));
}
END_TEST

START_TEST(run_command_stops_at_the_limit)
{
	const auto t0 = Clock::now();
	const CommandResult r = run_command({"sh", "-c", "echo started; exec sleep 30"}, 0.3);
	ck_assert(r.timed_out);
	ck_assert_str_eq(r.out.c_str(), "started\n");  // what came before the kill is kept
	ck_assert_msg(since(t0) < 3, "took %.1f s", since(t0));
}
END_TEST

START_TEST(destroying_a_running_command_kills_it)
{
	const std::string pidfile = test::temp_path("dlsched-test-command", "child.pid");
	pid_t child;
	{
		std::unique_ptr<Command> c =
			Command::start({"sh", "-c", "echo $$ >" + pidfile + "; exec sleep 30"}, 60);
		child = pid_in(pidfile);
		ck_assert_int_gt(child, 0);
		ck_assert(!c->poll(0));
	}
	// Reaped by the destructor: the pid is not even a zombie of ours.
	ck_assert_msg(gone(child), "the child %d still runs", static_cast<int>(child));
}
END_TEST

int main()
{
	Suite* s = suite_create("command");
	TCase* tc = tcase_create("command");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, exit_status_and_output);
	tcase_add_test(tc, standard_error_with_the_output_when_asked);
	tcase_add_test(tc, output_past_the_cap_is_dropped_and_the_child_finishes);
	tcase_add_test(tc, a_command_that_cannot_start_says_why);
	tcase_add_test(tc, poll_waits_no_longer_than_asked);
	tcase_add_test(tc, the_limit_kills_the_process_group);
	tcase_add_test(tc, run_command_stops_at_the_limit);
	tcase_add_test(tc, destroying_a_running_command_kills_it);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
