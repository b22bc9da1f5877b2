/*****************************************************************************\
 *  launch.c - dlsched-collect's process, started and stopped by the plugin
 *  (launch.h).
\*****************************************************************************/

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/pidfd.h"
#include "launch.h"

/* What the child processes report through the status pipe. */
enum { MSG_PID = 1, MSG_FAILED };
enum { AT_FORK = 1, AT_GROUPS, AT_GID, AT_UID, AT_CHECK, AT_EXEC };

typedef struct {
	int kind;
	int stage;
	int err;
	pid_t pid;
} launch_msg_t;

static const char *_stage(int stage)
{
	switch (stage) {
	case AT_FORK:
		return "fork";
	case AT_GROUPS:
		return "setgroups";
	case AT_GID:
		return "setresgid";
	case AT_UID:
		return "setresuid";
	case AT_CHECK:
		return "dropping privileges (still privileged after setresuid)";
	case AT_EXEC:
		return "exec";
	}
	return "?";
}

/* Async-signal-safe from here to exec. */
static void _report(int fd, int kind, int stage, int err, pid_t pid)
{
	launch_msg_t m = {kind, stage, err, pid};

	(void) !write(fd, &m, sizeof(m));
}

static void _close_from(int lowest, int keep)
{
#ifdef SYS_close_range
	if (keep > lowest && syscall(SYS_close_range, lowest, keep - 1, 0) == 0 &&
	    syscall(SYS_close_range, keep + 1, ~0U, 0) == 0)
		return;
#endif
	for (int fd = lowest; fd < 65536; fd++) {
		if (fd != keep)
			(void) close(fd);
	}
}

static void _child(int fd, int devnull, const char *path, char *const argv[], char *const envp[], uid_t uid, gid_t gid,
		   const gid_t *groups, int ngroups)
{
	struct sigaction dfl;
	sigset_t held;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	/*
	 * Slurm's dispositions and mask are not the collector's. The control
	 * signals stay blocked through exec: one sent before the collector has
	 * its signalfd (task 0's SIGUSR2 comes within milliseconds) waits
	 * instead of killing it.
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP)
			(void) sigaction(sig, &dfl, NULL);
	}
	sigemptyset(&held);
	sigaddset(&held, SIGTERM);
	sigaddset(&held, SIGUSR2);
	(void) sigprocmask(SIG_SETMASK, &held, NULL);

	/*
	 * slurmstepd calls user_init with the user's effective uid and root's
	 * saved uid: regain root (if we had it) to set the job's groups, then
	 * drop all three ids for good.
	 */
	if (getuid() == 0 || geteuid() == 0)
		(void) seteuid(0);
	if (geteuid() == 0 && groups && setgroups(ngroups, groups) < 0) {
		_report(fd, MSG_FAILED, AT_GROUPS, errno, 0);
		_exit(127);
	}
	if (setresgid(gid, gid, gid) < 0) {
		_report(fd, MSG_FAILED, AT_GID, errno, 0);
		_exit(127);
	}
	if (setresuid(uid, uid, uid) < 0) {
		_report(fd, MSG_FAILED, AT_UID, errno, 0);
		_exit(127);
	}
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid || eu != uid || su != uid ||
	    rg != gid || eg != gid || sg != gid) {
		_report(fd, MSG_FAILED, AT_CHECK, EPERM, 0);
		_exit(127);
	}

	(void) dup2(devnull, STDIN_FILENO);
	(void) dup2(devnull, STDOUT_FILENO);
	(void) dup2(devnull, STDERR_FILENO);
	_close_from(STDERR_FILENO + 1, fd); /* fd closes itself at exec */
	umask(077);
	(void) !chdir("/");
	execve(path, argv, envp);
	_report(fd, MSG_FAILED, AT_EXEC, errno, 0);
	_exit(127);
}

static double _mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

extern int dls_collector_start(dls_collector_t *c, const char *path, char *const argv[], uid_t uid, gid_t gid,
			       const gid_t *groups, int ngroups, char *err, size_t errlen)
{
	static char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
	int pfd[2], devnull, status;
	pid_t mid, pid = 0;
	launch_msg_t m;
	double until;
	int failed_stage = 0, failed_err = 0;

	c->pid = 0;
	c->pidfd = -1;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "/dev/null: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	mid = fork();
	if (mid == 0) {
		pid_t child;

		close(pfd[0]);
		(void) setsid();
		child = fork();
		if (child == 0)
			_child(pfd[1], devnull, path, argv, envp, uid, gid, groups, ngroups);
		if (child < 0)
			_report(pfd[1], MSG_FAILED, AT_FORK, errno, 0);
		else
			_report(pfd[1], MSG_PID, 0, 0, child);
		_exit(0);
	}
	close(pfd[1]);
	close(devnull);
	if (mid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		return -1;
	}
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;

	/* Messages until the pipe closes: at exec, or when the child died. */
	until = _mono_ms() + 2000;
	for (;;) {
		struct pollfd p = {pfd[0], POLLIN, 0};
		double left = until - _mono_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int) left) <= 0)
			break;
		n = read(pfd[0], &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t) sizeof(m))
			break; /* EOF: exec'd (or gone) */
		if (m.kind == MSG_PID)
			pid = m.pid;
		else if (m.kind == MSG_FAILED && !failed_stage) {
			failed_stage = m.stage;
			failed_err = m.err;
		}
	}
	close(pfd[0]);
	if (failed_stage) {
		snprintf(err, errlen, "%s %s: %s", _stage(failed_stage), failed_stage == AT_EXEC ? path : "",
			 strerror(failed_err));
		return -1;
	}
	if (!pid) {
		snprintf(err, errlen, "%s did not start within 2 s", path);
		return -1;
	}
	c->pid = pid;
	c->pidfd = dls_pidfd_open(pid);
	return 0;
}

/* Whether pid still is dlsched-collect (without a pidfd). */
static int _still_collector(pid_t pid)
{
	char path[64], buf[512];
	int fd, ok = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		char *name, *end;

		buf[n] = '\0';
		name = strchr(buf, '(');
		end = strrchr(buf, ')');
		ok = name && end && !strncmp(name + 1, "dlsched-collect", end - name - 1) && end[1] == ' ' &&
			end[2] != 'Z';
	}
	return ok;
}

static int _signal(dls_collector_t *c, int sig, const siginfo_t *info)
{
#ifdef SYS_pidfd_send_signal
	if (c->pidfd >= 0) {
		int rc = (int) syscall(SYS_pidfd_send_signal, c->pidfd, sig, info, 0);

		/* A task may have lost the descriptor: the pid, checked. */
		if (rc == 0 || (errno != EBADF && errno != ENOSYS))
			return rc;
	}
#endif
	if (!_still_collector(c->pid)) {
		errno = ESRCH;
		return -1;
	}
	if (info)
		return sigqueue(c->pid, sig, info->si_value);
	return kill(c->pid, sig);
}

/* Waits up to timeout_ms for the end; 1 if it ended. */
static int _wait_end(dls_collector_t *c, int timeout_ms)
{
	double until = _mono_ms() + timeout_ms;

	if (c->pidfd >= 0) {
		struct pollfd p = {c->pidfd, POLLIN, 0};
		int left;

		while ((left = (int) (until - _mono_ms())) > 0) {
			int rc = poll(&p, 1, left);

			if (rc > 0)
				return 1;
			if (rc < 0 && errno != EINTR)
				break;
		}
		return 0;
	}
	while (_mono_ms() < until) {
		if (!_still_collector(c->pid))
			return 1;
		usleep(20000);
	}
	return 0;
}

static void _queued(siginfo_t *info, int sig, int value)
{
	memset(info, 0, sizeof(*info));
	info->si_signo = sig;
	info->si_code = SI_QUEUE;
	info->si_pid = getpid();
	info->si_uid = getuid();
	info->si_value.sival_int = value;
}

extern int dls_collector_tell(dls_collector_t *c, int sig, int value)
{
	siginfo_t info;

	if (!c->pid)
		return -1;
	_queued(&info, sig, value);
	return _signal(c, sig, &info);
}

extern int dls_collector_stop(dls_collector_t *c, int stop_value, int timeout_ms)
{
	siginfo_t info;
	int rc = 0;

	if (!c->pid)
		return -1;
	_queued(&info, SIGTERM, stop_value);
	if (_signal(c, SIGTERM, &info) < 0 && errno == ESRCH)
		goto done; /* it ended already */
	if (!_wait_end(c, timeout_ms)) {
		(void) _signal(c, SIGKILL, NULL);
		rc = 1;
	}
done:
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pid = 0;
	c->pidfd = -1;
	return rc;
}
