/*****************************************************************************\
 *  guard.c - the learned policy's guard in sched/dlsched: follows the verdict
 *  file dlsched-guard(1) writes (GuardVerdictFile=), so that a learned policy
 *  (dl2, dual-agent) with LearnedGuard=yes decides only while its shadow
 *  replays beat GuardPolicy='s; otherwise GuardPolicy= decides. The file is
 *  read with no slurmctld lock held, at most once a second and only when it
 *  changed, and trusted only as InferenceDemandFile= is (a regular file owned
 *  by root or SlurmUser, writable by nobody else). Missing, refused, malformed
 *  or stale (older than twice GuardInterval=): GuardPolicy=, logged once per
 *  reason.
\*****************************************************************************/

#include <fcntl.h>
#include <sys/stat.h>

#include "sched_dlsched.h"

/* The verdict file is short (policy/guard_verdict.h: kGuardVerdictMaxBytes). */
#define DLS_VERDICT_MAX_BYTES 4096

static char *verdict_path = NULL;
static double guard_interval = 0; /* GuardInterval=, read with the guard's settings (default: keys.cpp) */
static bool guard_on = false;
static int choice = DLSCHED_GUARD_NONE;
static time_t checked = 0; /* the last stat() */
static struct stat seen;   /* the file as last read */
static bool have_seen = false;
static char text[DLS_VERDICT_MAX_BYTES + 1]; /* what it said ("" when unread) */
static char read_why[600];		     /* why it could not be read; "" when it was */
static char status[600];		     /* why GuardPolicy= decides; "" when the verdict does */
static uint64_t switches = 0, learned_cycles = 0;
/* No verdict has decided yet in this slurmctld process (from 23.11 every reconfigure is a new
 * process): the first one is where the cluster starts, not a switch. */
static bool first_decision = true;
static double verdict_age = -1;

static const char *_choice_name(int c)
{
	return c == DLSCHED_GUARD_LEARNED ? "learned" : c == DLSCHED_GUARD_HEURISTIC ? "heuristic" : "off";
}

extern void dls_guard_configure(dlsched_scheduler_t *sched)
{
	char buf[PATH_MAX];
	int had = choice;

	xfree(verdict_path);
	guard_on = sched && dlsched_scheduler_guard_choice(sched) != DLSCHED_GUARD_NONE;
	have_seen = false;
	checked = 0;
	text[0] = '\0';
	read_why[0] = '\0';
	status[0] = '\0';
	verdict_age = -1;
	if (!guard_on) {
		if (had != DLSCHED_GUARD_NONE)
			info(DLS_LOG_PREFIX "guard: off (no learned policy with LearnedGuard=yes loaded)");
		choice = DLSCHED_GUARD_NONE;
		return;
	}
	guard_interval = dls_config_double(sched, "GuardInterval");
	if (dlsched_scheduler_config(sched, "GuardVerdictFile", buf, sizeof(buf)) == DLSCHED_OK && buf[0])
		verdict_path = xstrdup(buf);
	else
		verdict_path = xstrdup_printf("%s/dlsched-guard.verdict",
					      slurm_conf.state_save_location ? slurm_conf.state_save_location
									     : "/var/spool/slurmctld");
	/* The new scheduler starts with GuardPolicy=; it keeps what the cluster followed before the
	 * reload until the next read says otherwise (a reconfigure is not a switch). */
	if (had == DLSCHED_GUARD_LEARNED)
		(void) dlsched_scheduler_set_guard_choice(sched, DLSCHED_GUARD_LEARNED, NULL);
	else
		choice = DLSCHED_GUARD_HEURISTIC;
	first_decision = had == DLSCHED_GUARD_NONE;
	info(DLS_LOG_PREFIX "guard: on, following %s (GuardInterval=%.0f s); %s decides now", verdict_path,
	     guard_interval, _choice_name(choice));
}

/* Reads the verdict file into `text` when it changed, or sets read_why. May block: no slurmctld lock
 * may be held. */
static void _read_verdict(void)
{
	struct stat lst, st;
	char refused[128];
	ssize_t n;
	int fd;

	/* What the path is, before opening it: a FIFO would block an open(). */
	if (lstat(verdict_path, &lst) != 0) {
		snprintf(read_why, sizeof(read_why), "no verdict in %s (%s; is dlsched-guard running?)", verdict_path,
			 strerror(errno));
		have_seen = false;
		text[0] = '\0';
		return;
	}
	if (have_seen && lst.st_ino == seen.st_ino && lst.st_dev == seen.st_dev &&
	    lst.st_mtim.tv_sec == seen.st_mtim.tv_sec && lst.st_mtim.tv_nsec == seen.st_mtim.tv_nsec &&
	    lst.st_size == seen.st_size && lst.st_mode == seen.st_mode && lst.st_uid == seen.st_uid)
		return; /* unchanged */
	seen = lst;
	have_seen = true;
	text[0] = '\0';
	if (!dls_file_trusted(&lst, refused, sizeof(refused))) {
		snprintf(read_why, sizeof(read_why),
			 "%s is %s; it must be a regular file owned by root or SlurmUser and writable by nobody "
			 "else: refused",
			 verdict_path, refused);
		return;
	}
	if (lst.st_size > DLS_VERDICT_MAX_BYTES) {
		snprintf(read_why, sizeof(read_why), "%s is larger than %d bytes: refused", verdict_path,
			 DLS_VERDICT_MAX_BYTES);
		return;
	}
	fd = open(verdict_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(read_why, sizeof(read_why), "cannot read %s (%s)", verdict_path, strerror(errno));
		have_seen = false;
		return;
	}
	if (fstat(fd, &st) != 0 || st.st_dev != lst.st_dev || st.st_ino != lst.st_ino ||
	    !dls_file_trusted(&st, refused, sizeof(refused))) {
		close(fd);
		snprintf(read_why, sizeof(read_why), "%s changed while it was read: refused", verdict_path);
		have_seen = false;
		return;
	}
	n = read(fd, text, DLS_VERDICT_MAX_BYTES);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	read_why[0] = '\0';
}

extern void dls_guard_before_cycle(dlsched_scheduler_t *sched, uint64_t cycle)
{
	dlsched_guard_verdict_t v;
	dlsched_error_t err;
	char why[sizeof(status)];
	time_t now = time(NULL);
	int want = DLSCHED_GUARD_HEURISTIC;

	if (!guard_on)
		return;
	if (now != checked) {
		checked = now;
		_read_verdict();
	}
	memset(&v, 0, sizeof(v));
	v.struct_size = sizeof(v);
	why[0] = '\0';
	verdict_age = -1;
	if (read_why[0]) {
		strlcpy(why, read_why, sizeof(why));
	} else if (dlsched_guard_verdict_parse(text, verdict_path, (double) now, guard_interval, &v, &err) !=
		   DLSCHED_OK) {
		strlcpy(why, err.message, sizeof(why));
		if (v.at > 0)
			verdict_age = v.age;
	} else {
		want = v.choice;
		verdict_age = v.age;
	}
	if (strcmp(why, status)) {
		if (why[0])
			error(DLS_LOG_PREFIX "guard: %s; GuardPolicy= decides", why);
		else
			info(DLS_LOG_PREFIX "guard: following %s again", verdict_path);
		strlcpy(status, why, sizeof(status));
	}
	if (want != choice) {
		if (dlsched_scheduler_set_guard_choice(sched, want, &err) != DLSCHED_OK) {
			error(DLS_LOG_PREFIX "guard: %s", err.message);
			return;
		}
		if (first_decision) {
			info(DLS_LOG_PREFIX "guard: %s decides from the start (cycle %" PRIu64 ": %s)",
			     _choice_name(want), cycle, why[0] ? why : "the verdict says so");
		} else {
			switches++;
			if (why[0])
				info(DLS_LOG_PREFIX "guard: %s -> %s (cycle %" PRIu64 ": %s)", _choice_name(choice),
				     _choice_name(want), cycle, why);
			else
				info(DLS_LOG_PREFIX "guard: %s -> %s (cycle %" PRIu64
						    ": verdict of %.0f s ago: replay of %" PRIu64
						    " job(s), learned %.1f s, heuristic %.1f s average JCT)",
				     _choice_name(choice), _choice_name(want), cycle, v.age, v.jobs, v.learned_jct,
				     v.heuristic_jct);
		}
		choice = want;
	}
	first_decision = false;
	if (choice == DLSCHED_GUARD_LEARNED)
		learned_cycles++;
}

extern void dls_guard_stats(FILE *f)
{
	fprintf(f,
		"guard_choice=%s\nguard_switches=%" PRIu64 "\nguard_learned_cycles=%" PRIu64
		"\nguard_verdict_age_s=%.0f\nguard_status=%s\n",
		_choice_name(choice), switches, learned_cycles, verdict_age, status);
}

extern void dls_guard_fini(void)
{
	xfree(verdict_path);
	guard_on = false;
	choice = DLSCHED_GUARD_NONE;
}
