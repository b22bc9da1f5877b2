/*****************************************************************************\
 *  spank_dlsched.c - the options that tell dlsched what a training job is,
 *  and the node side of job profiling.
 *
 *  sbatch/salloc/srun --dl-model=NAME --dl-epochs=N --dl-elastic=MIN:MAX
 *  --dl-checkpoint-dir=DIR. Each value is checked when the job is submitted;
 *  a bad one refuses the submission with a message saying what is wrong. The
 *  values travel with the job in its SPANK job-control environment
 *  (DL_MODEL, ...), where the dlsched controller plugins read them; a batch
 *  job finds them as SLURM_SPANK_DL_MODEL, ...
 *
 *  In slurmstepd (every step but the extern one), it gives the tasks the
 *  training-job protocol's environment (doc/protocol.md, section 1) and, when
 *  plugstack.conf names an ingest service, starts dlsched-collect as the job's
 *  user for the step and stops it when the step's tasks are gone. Nothing
 *  here fails a job: a collector that cannot run is logged and left out.
 *
 *  Public SPANK API only (no Slurm internals, no libtorch, no SQLite): it is
 *  loaded by sbatch, srun, salloc and slurmstepd on every node.
\*****************************************************************************/

#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "dlsched/limits.h"

#include "collect/control.h"
#include "collect/spooldir.h"
#include "launch.h"

/* The prefix of every line this plugin logs. */
#define DLS_LOG_PREFIX "spank/dlsched: "

SPANK_PLUGIN(dlsched, 1);

#define DLS_VALUE_LEN 256

/* Values of this submission's options (set by the callbacks, in the client). */
static char opt_model[DLS_VALUE_LEN];
static char opt_epochs[DLS_VALUE_LEN];
static char opt_elastic[DLS_VALUE_LEN];
static char opt_ckpt_dir[PATH_MAX];

/* A model name: letters, digits, '-', '_', '.', at most DLSCHED_MAX_MODEL_NAME characters. */
static int _check_model(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || n > DLSCHED_MAX_MODEL_NAME) {
		slurm_error("--dl-model: '%s' must be 1 to %d characters (a model name such as imagenet; dlsched-db "
			    "models lists those measured here)",
			    v, DLSCHED_MAX_MODEL_NAME);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char) v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.') {
			slurm_error("--dl-model: '%s' may contain only letters, digits, '-', '_' and '.'", v);
			return -1;
		}
	}
	return 0;
}

/* Epochs: a positive number (fractions allowed: a job may stop mid-epoch), at most DLSCHED_MAX_EPOCHS. */
static int _check_epochs(const char *v)
{
	char *end = NULL;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || !(d > 0 && d <= DLSCHED_MAX_EPOCHS) || strpbrk(v, "xXpP")) {
		slurm_error("--dl-epochs: '%s' is not a number of epochs (a positive number up to %.0f, e.g. 90)", v,
			    (double) DLSCHED_MAX_EPOCHS);
		return -1;
	}
	return 0;
}

/* MIN:MAX GPUs, 1 <= MIN <= MAX <= DLSCHED_MAX_JOB_GPUS. */
static int _check_elastic(const char *arg)
{
	const char *v = arg;
	char *end = NULL;
	long lo, hi;

	errno = 0;
	lo = strtol(v, &end, 10);
	if (end == v || *end != ':' || errno)
		goto bad;
	v = end + 1;
	hi = strtol(v, &end, 10);
	if (end == v || *end || errno)
		goto bad;
	if (lo < 1 || hi < lo || hi > DLSCHED_MAX_JOB_GPUS) {
		slurm_error("--dl-elastic: need 1 <= MIN <= MAX <= %d GPUs, got %ld:%ld", DLSCHED_MAX_JOB_GPUS, lo, hi);
		return -1;
	}
	return 0;
bad:
	slurm_error("--dl-elastic: '%s' is not MIN:MAX (GPUs the job can run on, e.g. 2:8)", arg);
	return -1;
}

/* An absolute directory path without ':' or whitespace (it goes into an environment). */
static int _check_dir(const char *v)
{
	if (v[0] != '/' || strlen(v) >= PATH_MAX) {
		slurm_error("--dl-checkpoint-dir: '%s' must be an absolute path (shared by all nodes)", v);
		return -1;
	}
	for (const char *p = v; *p; p++) {
		if (isspace((unsigned char) *p)) {
			slurm_error("--dl-checkpoint-dir: '%s' contains whitespace", v);
			return -1;
		}
	}
	return 0;
}

/* The checkpoint directory with %j replaced by the job id (the same in every run of the job, so a
 * requeued job finds its checkpoint and a resubmitted one starts over) and %% by %. */
static int _expand_dir(const char *in, uint32_t job_id, char *out, size_t n)
{
	size_t k = 0;

	for (const char *p = in; *p; p++) {
		char num[16];
		const char *add = num;
		size_t len;

		if (p[0] == '%' && p[1] == 'j') {
			snprintf(num, sizeof(num), "%u", job_id);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			num[0] = '%', num[1] = '\0';
			p++;
		} else {
			num[0] = *p, num[1] = '\0';
		}
		len = strlen(add);
		if (k + len >= n)
			return -1;
		memcpy(out + k, add, len);
		k += len;
	}
	out[k] = '\0';
	return 0;
}

/* The options' values, by the option's `val` (the index into this table). */
static struct {
	char *dst;
	size_t len;
	int (*check)(const char *);
} values[] = {
	{opt_model, sizeof(opt_model), _check_model},
	{opt_epochs, sizeof(opt_epochs), _check_epochs},
	{opt_elastic, sizeof(opt_elastic), _check_elastic},
	{opt_ckpt_dir, sizeof(opt_ckpt_dir), _check_dir},
};

/* One callback for every option: check the value, keep it. */
static int _cb(int val, const char *optarg, int remote)
{
	(void) remote;
	if (val < 0 || (size_t) val >= sizeof(values) / sizeof(values[0]) || !optarg || values[val].check(optarg) != 0)
		return -1;
	snprintf(values[val].dst, values[val].len, "%s", optarg);
	return 0;
}

static struct spank_option options[] = {
	{"dl-model", "NAME", "dlsched: the model this job trains (profiles and predictions are per model)", 1, 0, _cb},
	{"dl-epochs", "N", "dlsched: epochs the job trains in all", 1, 1, _cb},
	{"dl-elastic", "MIN:MAX", "dlsched: GPUs the job can run on; dlsched may resize it within them", 1, 2, _cb},
	{"dl-checkpoint-dir", "DIR",
	 "dlsched: where the job keeps its checkpoints (absolute, on shared storage; %j: the job id)", 1, 3, _cb},
	SPANK_OPTIONS_TABLE_END};

/* ---- plugstack.conf arguments (slurmstepd) ------------------------------ */

#ifndef DLSCHED_COLLECTOR
#define DLSCHED_COLLECTOR "/usr/local/libexec/dlsched/dlsched-collect"
#endif

/* `optional spank_dlsched.so ingest=URL spool=DIR ...`: see README.md. */
static struct {
	char ingest[1024]; /* "": no collector */
	char spool[1024];  /* leaves room for <uid>/run/<job>.<step>.<node>.progress */
	char collector[PATH_MAX];
	char ckpt_signal[8]; /* without "SIG" */
	long interval;
	char munge_socket[1024];
	long long spool_max; /* bytes of batches per user's spool (0: no cap) */
	bool broken;	     /* an argument was wrong: no collector */
} conf = {"", "/var/spool/dlsched", DLSCHED_COLLECTOR, "USR1", 5, "", 64LL << 20, false};

/* slurm_spank_init could not make the user's spool directory (it said why). */
static bool user_dir_missing;

/* The signals a job may be asked to checkpoint with (as dlsched-emu-train). */
static const char *const ckpt_signals[] = {"USR1", "USR2", "TERM", "INT", "HUP", "URG", NULL};

static int _set_path(const char *key, const char *val, char *dst, size_t len)
{
	if (val[0] != '/' || strlen(val) >= len) {
		slurm_error(DLS_LOG_PREFIX "plugstack.conf: %s=%s: need an absolute path (under %zu characters)", key,
			    val, len);
		return -1;
	}
	snprintf(dst, len, "%s", val);
	return 0;
}

static int _set_ingest(const char *key, const char *val)
{
	if ((strncmp(val, "http://", 7) && strncmp(val, "https://", 8)) || strlen(val) >= sizeof(conf.ingest) ||
	    strpbrk(val, " \t")) {
		slurm_error(DLS_LOG_PREFIX
			    "plugstack.conf: %s=%s: need the URL of dlsched-ingestd, e.g. http://ctl:6820",
			    key, val);
		return -1;
	}
	snprintf(conf.ingest, sizeof(conf.ingest), "%s", val);
	return 0;
}

static int _set_spool(const char *key, const char *val)
{
	return _set_path(key, val, conf.spool, sizeof(conf.spool));
}

static int _set_collector(const char *key, const char *val)
{
	return _set_path(key, val, conf.collector, sizeof(conf.collector));
}

static int _set_munge_socket(const char *key, const char *val)
{
	return _set_path(key, val, conf.munge_socket, sizeof(conf.munge_socket));
}

static int _set_ckpt_signal(const char *key, const char *val)
{
	const char *name = strncasecmp(val, "SIG", 3) ? val : val + 3;

	for (const char *const *s = ckpt_signals; *s; s++) {
		if (!strcasecmp(name, *s)) {
			snprintf(conf.ckpt_signal, sizeof(conf.ckpt_signal), "%s", *s);
			return 0;
		}
	}
	slurm_error(DLS_LOG_PREFIX "plugstack.conf: %s=%s: need one of USR1, USR2, TERM, INT, HUP, URG", key, val);
	return -1;
}

static int _set_interval(const char *key, const char *val)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (!*val || *end || errno || v < 1 || v > 3600) {
		slurm_error(DLS_LOG_PREFIX "plugstack.conf: %s=%s: need whole seconds from 1 to 3600", key, val);
		return -1;
	}
	conf.interval = v;
	return 0;
}

/* A size: bytes, or a number with K, M or G (powers of 1024); 0: no cap. */
static int _set_spool_max(const char *key, const char *val)
{
	char *end = NULL;
	long long v;
	int shift = 0;

	errno = 0;
	v = strtoll(val, &end, 10);
	if (end && *end && !end[1]) {
		const char *units = "KMG", *u = strchr(units, toupper((unsigned char) *end));

		if (u)
			shift = 10 * (int) (u - units + 1);
		end += u ? 1 : 0;
	}
	if (!*val || !end || *end || errno || v < 0 || v > (1LL << 40) >> shift) {
		slurm_error(DLS_LOG_PREFIX
			    "plugstack.conf: %s=%s: need a size in bytes, or with K, M or G (e.g. 64M; 0: no cap)",
			    key, val);
		return -1;
	}
	conf.spool_max = v << shift;
	return 0;
}

static const struct {
	const char *key;
	int (*set)(const char *key, const char *val);
} conf_keys[] = {
	{"ingest", _set_ingest},       {"spool", _set_spool},
	{"collector", _set_collector}, {"checkpoint_signal", _set_ckpt_signal},
	{"interval", _set_interval},   {"munge_socket", _set_munge_socket},
	{"spool_max", _set_spool_max},
};

static void _parse_conf(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		const char *eq = strchr(av[i], '=');
		size_t k, n = eq ? (size_t) (eq - av[i]) : strlen(av[i]);
		char key[32];

		for (k = 0; k < sizeof(conf_keys) / sizeof(conf_keys[0]); k++) {
			if (strlen(conf_keys[k].key) == n && !strncmp(av[i], conf_keys[k].key, n))
				break;
		}
		if (k == sizeof(conf_keys) / sizeof(conf_keys[0]) || !eq) {
			slurm_error(DLS_LOG_PREFIX
				    "plugstack.conf: %s argument '%s' (known: ingest=URL spool=DIR spool_max=SIZE "
				    "collector=PATH checkpoint_signal=USR1 interval=SECONDS munge_socket=PATH)",
				    eq ? "unknown" : "no value in", av[i]);
			conf.broken = true;
			continue;
		}
		snprintf(key, sizeof(key), "%.*s", (int) n, av[i]);
		if (conf_keys[k].set(key, eq + 1) < 0)
			conf.broken = true;
	}
	if (conf.broken)
		slurm_error(DLS_LOG_PREFIX "no collector until plugstack.conf is fixed; jobs run without profiling");
}

/* The spool's base directory: made by root if missing, root's with mode 0755
 * under directories only root controls (collect/spooldir.h). A base left with
 * mode 1777 by an earlier version is closed to others: each user's directory
 * in it is made by root now. */
static int _make_spool_base(void)
{
	struct stat st;
	char err[512];
	int fd;

	if (lstat(conf.spool, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 01777) {
		if (chmod(conf.spool, 0755) < 0) {
			slurm_error(DLS_LOG_PREFIX "chmod 755 %s: %s; profiling is off", conf.spool, strerror(errno));
			return -1;
		}
		slurm_info(DLS_LOG_PREFIX "spool=%s had mode 1777: now 0755 (users' directories are made by root)",
			   conf.spool);
	}
	if ((fd = spooldir_open_base(conf.spool, true, err, sizeof(err))) < 0) {
		slurm_error(DLS_LOG_PREFIX "spool=%s: %s; profiling is off", conf.spool, err);
		return -1;
	}
	close(fd);
	return 0;
}

/* As root in slurmstepd: <spool>/<uid> for the step's user, made with
 * mkdirat() and given to the user on a descriptor opened O_NOFOLLOW. */
static int _make_user_dir(spank_t sp)
{
	uid_t uid;
	gid_t gid;
	char err[512];
	int basefd, fd;

	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
		return 0; /* said again in user_init, which gives up */
	if ((basefd = spooldir_open_base(conf.spool, false, err, sizeof(err))) < 0 ||
	    (fd = spooldir_open_user(basefd, conf.spool, uid, gid, true, err, sizeof(err))) < 0) {
		slurm_error(DLS_LOG_PREFIX "%s; no profiling for this step", err);
		if (basefd >= 0)
			close(basefd);
		return -1;
	}
	close(fd);
	close(basefd);
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	/* The collector's arguments matter in slurmstepd only. */
	if (spank_context() == S_CTX_REMOTE) {
		_parse_conf(ac, av);
		if (conf.ingest[0] && !conf.broken && _make_spool_base() < 0)
			conf.broken = true;
		if (conf.ingest[0] && !conf.broken && _make_user_dir(sp) < 0)
			user_dir_missing = true;
	}
	/* Options exist where jobs are submitted and where their steps run. */
	if (spank_context() == S_CTX_SLURMD || spank_context() == S_CTX_JOB_SCRIPT)
		return 0;
	for (struct spank_option *o = options; o->name; o++) {
		spank_err_t rc = spank_option_register(sp, o);

		if (rc != ESPANK_SUCCESS) {
			slurm_error(DLS_LOG_PREFIX "cannot register --%s: %s", o->name, spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* In the submitting command: the values go into the job-control environment. */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	const struct {
		const char *name;
		const char *value;
	} vars[] = {
		{"DL_MODEL", opt_model},
		{"DL_EPOCHS", opt_epochs},
		{"DL_ELASTIC", opt_elastic},
		{"DL_CHECKPOINT_DIR", opt_ckpt_dir},
	};

	(void) ac;
	(void) av;
	if (spank_context() != S_CTX_ALLOCATOR && spank_context() != S_CTX_LOCAL)
		return 0;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		spank_err_t rc;

		if (!vars[i].value[0])
			continue;
		rc = spank_job_control_setenv(sp, vars[i].name, vars[i].value, 1);
		if (rc != ESPANK_SUCCESS) {
			slurm_error(DLS_LOG_PREFIX "cannot pass %s to the job: %s", vars[i].name, spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* ---- the step: protocol environment and collector (slurmstepd) ---------- */

static dls_collector_t collector = DLS_COLLECTOR_NONE;
static char collector_step[32]; /* "<job>.<step>", for messages */
static uint32_t tasks_local, tasks_ended;
static bool task_failed, task_status_unknown;

static void _setenv(spank_t sp, const char *name, const char *value)
{
	spank_err_t rc = spank_setenv(sp, name, value, 1);

	if (rc != ESPANK_SUCCESS)
		slurm_error(DLS_LOG_PREFIX "cannot set %s for the tasks: %s", name, spank_strerror(rc));
}

/* A whole number >= 0 from the job's environment, or dflt. */
static long _env_long(spank_t sp, const char *var, long dflt)
{
	char buf[64], *end = NULL;
	long v;

	if (spank_getenv(sp, var, buf, sizeof(buf)) != ESPANK_SUCCESS || !buf[0])
		return dflt;
	errno = 0;
	v = strtol(buf, &end, 10);
	return (*end || errno || v < 0) ? dflt : v;
}

/* A --dl-* value: the option's (its callback also runs in slurmstepd), else
 * the job's SLURM_SPANK_DL_* variable; NULL if the job did not give it. */
static const char *_job_value(spank_t sp, const char *opt, const char *var, char *buf, int len)
{
	if (opt[0])
		return opt;
	if (spank_getenv(sp, var, buf, len) == ESPANK_SUCCESS && buf[0])
		return buf;
	return NULL;
}

/* Entries of a device list such as CUDA_VISIBLE_DEVICES ("0,1,3"). */
static long _count_list(const char *s)
{
	long n = 1;

	if (!*s || !strcmp(s, "NoDevFiles"))
		return 0;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

/* SLURM_GPUS (--gpus=[type:]N[,[type:]N...]): the job's total, or -1. */
static long _gpus_option(const char *s)
{
	long total = 0;

	while (*s) {
		const char *end = strchr(s, ','), *colon;
		char item[64], *e = NULL;
		long n;

		snprintf(item, sizeof(item), "%.*s", (int) (end ? end - s : (long) strlen(s)), s);
		colon = strrchr(item, ':');
		errno = 0;
		n = strtol(colon ? colon + 1 : item, &e, 10);
		if (e == (colon ? colon + 1 : item) || *e || errno || n < 0)
			return -1;
		total += n;
		s = end ? end + 1 : s + strlen(s);
	}
	return total;
}

/*
 * GPUs of this run over all its nodes (DLSCHED_GPUS). At user_init slurmstepd
 * has (verified with 22.05): SLURM_GPUS_ON_NODE and CUDA_VISIBLE_DEVICES (this
 * node's GPUs of the job in the batch step, of the step in other steps),
 * SLURM_GPUS (--gpus, the job's total) and the node counts. The batch step:
 * --gpus if given, else this node's GPUs x the job's nodes; another step: this
 * node's GPUs x the step's nodes. Exact when every node has the same number
 * (--gres=gpu:N is per node); an estimate for uneven --gpus in a step.
 */
static long _gpus(spank_t sp, bool batch, long nodes)
{
	char buf[256];
	long per_node, total;

	if (batch && spank_getenv(sp, "SLURM_GPUS", buf, sizeof(buf)) == ESPANK_SUCCESS &&
	    (total = _gpus_option(buf)) >= 0)
		return total;
	per_node = _env_long(sp, "SLURM_GPUS_ON_NODE", -1);
	if (per_node < 0)
		per_node = spank_getenv(sp, "CUDA_VISIBLE_DEVICES", buf, sizeof(buf)) == ESPANK_SUCCESS
			? _count_list(buf)
			: 0;
	return per_node * nodes;
}

/* This node's name in Slurm: the last part of SLURM_TOPOLOGY_ADDR (its own
 * name with topology/none, "switch...node" with topology/tree), else the host
 * name. SLURMD_NODENAME is not there yet at user_init, and steps inherit a
 * stale one from srun. */
static void _node_name(spank_t sp, char *buf, size_t len)
{
	char addr[256], pattern[256];
	const char *dot;

	if (spank_getenv(sp, "SLURM_TOPOLOGY_ADDR", addr, sizeof(addr)) == ESPANK_SUCCESS && addr[0] &&
	    (spank_getenv(sp, "SLURM_TOPOLOGY_ADDR_PATTERN", pattern, sizeof(pattern)) != ESPANK_SUCCESS ||
	     !strcmp(pattern, "node") || (strlen(pattern) > 5 && !strcmp(pattern + strlen(pattern) - 5, ".node")))) {
		dot = strrchr(addr, '.');
		snprintf(buf, len, "%s", dot ? dot + 1 : addr);
		return;
	}
	if (gethostname(buf, len - 1) < 0)
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
	if ((dot = strchr(buf, '.')))
		buf[dot - buf] = '\0';
}

/* The user's directories in the spool, checked as the user (user_init runs
 * with the user's effective uid): <uid>/ (root made it in slurm_spank_init)
 * and <uid>/run/, which the user makes. */
static int _user_dirs(uid_t uid)
{
	char err[512];
	int basefd, fd = -1, rfd = -1;

	if ((basefd = spooldir_open_base(conf.spool, false, err, sizeof(err))) < 0 ||
	    (fd = spooldir_open_user(basefd, conf.spool, uid, getegid(), false, err, sizeof(err))) < 0 ||
	    (rfd = spooldir_open_sub(fd, conf.spool, "run", uid, err, sizeof(err))) < 0) {
		slurm_error(DLS_LOG_PREFIX "%s; no profiling for this step", err);
		if (basefd >= 0)
			close(basefd);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(rfd);
	close(fd);
	close(basefd);
	return 0;
}

/* The step's progress file, created empty if new; its size (where the
 * collector starts reading: a requeued job's earlier run wrote the rest). */
static long long _progress_file(const char *path, uid_t uid)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) {
		slurm_error(DLS_LOG_PREFIX "cannot prepare the progress file %s: %s; no profiling for this step", path,
			    fd < 0 ? strerror(errno) : "not a regular file of the job's user");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return (long long) st.st_size;
}

static void _start_collector(spank_t sp, uint32_t job_id, const char *step, long nodes, long gpus, uint32_t restart,
			     const char *model, const char *epochs)
{
	char progress[PATH_MAX], node[256], cluster[128] = "";
	char s_job[24], s_uid[24], s_run[24], s_gpus[24], s_nodes[24], s_off[24], s_interval[24], s_root[24],
		s_start[32], s_spool_max[24], err[512];
	const char *argv[48];
	int argc = 0, ngids = 0;
	gid_t *gids = NULL;
	uid_t uid;
	gid_t gid;
	long long offset;
	struct timespec now;

	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
		slurm_error(DLS_LOG_PREFIX "the job's uid or gid is not available; no profiling for this step");
		return;
	}
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &ngids) != ESPANK_SUCCESS) {
		gids = NULL;
		ngids = 0;
	}
	/* The node in the name: several slurmd on one host (a test cluster) share the spool. */
	_node_name(sp, node, sizeof(node));
	snprintf(progress, sizeof(progress), "%s/%u/run/%u.%s.%.200s.progress", conf.spool, (unsigned) uid, job_id,
		 step, node);
	if (user_dir_missing || _user_dirs(uid) < 0 || (offset = _progress_file(progress, uid)) < 0)
		return;

	(void) spank_getenv(sp, "SLURM_CLUSTER_NAME", cluster, sizeof(cluster));
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(s_job, sizeof(s_job), "%u", job_id);
	snprintf(s_uid, sizeof(s_uid), "%u", (unsigned) uid);
	snprintf(s_run, sizeof(s_run), "%u", restart);
	snprintf(s_gpus, sizeof(s_gpus), "%ld", gpus);
	snprintf(s_nodes, sizeof(s_nodes), "%ld", nodes > 0 ? nodes : 1);
	snprintf(s_off, sizeof(s_off), "%lld", offset);
	snprintf(s_interval, sizeof(s_interval), "%ld", conf.interval);
	snprintf(s_spool_max, sizeof(s_spool_max), "%lld", conf.spool_max);
	snprintf(s_root, sizeof(s_root), "%d", (int) getpid());
	snprintf(s_start, sizeof(s_start), "%.6f", now.tv_sec + now.tv_nsec / 1e9);

	argv[argc++] = "dlsched-collect";
	argv[argc++] = "--job-id";
	argv[argc++] = s_job;
	argv[argc++] = "--step";
	argv[argc++] = step;
	argv[argc++] = "--uid";
	argv[argc++] = s_uid;
	argv[argc++] = "--cluster";
	argv[argc++] = cluster;
	argv[argc++] = "--node";
	argv[argc++] = node;
	argv[argc++] = "--run";
	argv[argc++] = s_run;
	argv[argc++] = "--gpus";
	argv[argc++] = s_gpus;
	argv[argc++] = "--nodes";
	argv[argc++] = s_nodes;
	if (model) {
		argv[argc++] = "--model";
		argv[argc++] = model;
	}
	if (epochs) {
		argv[argc++] = "--epochs-total";
		argv[argc++] = epochs;
	}
	argv[argc++] = "--progress";
	argv[argc++] = progress;
	argv[argc++] = "--progress-offset";
	argv[argc++] = s_off;
	argv[argc++] = "--spool";
	argv[argc++] = conf.spool;
	argv[argc++] = "--spool-max";
	argv[argc++] = s_spool_max;
	argv[argc++] = "--ingest";
	argv[argc++] = conf.ingest;
	argv[argc++] = "--interval";
	argv[argc++] = s_interval;
	if (conf.munge_socket[0]) {
		argv[argc++] = "--munge-socket";
		argv[argc++] = conf.munge_socket;
	}
	argv[argc++] = "--root-pid";
	argv[argc++] = s_root;
	argv[argc++] = "--start";
	argv[argc++] = s_start;
	argv[argc++] = "--await-run"; /* slurm_spank_task_init tells it */
	argv[argc] = NULL;

	snprintf(collector_step, sizeof(collector_step), "%u.%s", job_id, step);
	if (dls_collector_start(&collector, conf.collector, (char *const *) argv, uid, gid, gids, ngids, err,
				sizeof(err)) < 0) {
		slurm_error(DLS_LOG_PREFIX "cannot start the collector for job %s: %s (collector= in plugstack.conf); "
					   "the job runs without profiling",
			    collector_step, err);
		return;
	}
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks_local) != ESPANK_SUCCESS)
		tasks_local = 0; /* stopped in slurm_spank_exit only */
	_setenv(sp, "DLSCHED_PROTOCOL", "1");
	_setenv(sp, "DLSCHED_PROGRESS_FILE", progress);
	slurm_debug(DLS_LOG_PREFIX "collector pid %d for job %s (uid %u), progress %s, ingest %s", (int) collector.pid,
		    collector_step, (unsigned) uid, progress, conf.ingest);
}

/*
 * With the user's effective uid, before the tasks start: the protocol's
 * environment (doc/protocol.md, section 1), then the collector. The extern
 * step never gets here (slurmstepd runs no user_init for it); the interactive
 * step gets the environment but no collector (no step number to report).
 */
int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	uint32_t job_id = 0, step_id = 0, nnodes = 0, restart = 0;
	char step[16], num[32], vbuf[PATH_MAX], mbuf[DLS_VALUE_LEN], ebuf[DLS_VALUE_LEN];
	const char *model, *epochs, *dir;
	bool batch, numbered;
	long nodes, gpus;

	(void) ac;
	(void) av;
	if (!spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) {
		slurm_error(DLS_LOG_PREFIX "no job or step id in user_init; no dlsched environment for this step");
		return 0;
	}
	batch = step_id == SLURM_BATCH_SCRIPT;
	numbered = step_id < SLURM_INTERACTIVE_STEP;
	if (batch)
		snprintf(step, sizeof(step), "batch");
	else
		snprintf(step, sizeof(step), "%u", step_id);

	if (batch || spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS || !nnodes)
		nodes = _env_long(sp, "SLURM_JOB_NUM_NODES", 1);
	else
		nodes = nnodes;
	gpus = _gpus(sp, batch, nodes);
	/* 22.05: S_SLURM_RESTART_COUNT is always 0 and SLURM_RESTART_COUNT is not
	 * here yet; slurm_spank_task_init corrects DLSCHED_RESTART. */
	if (spank_get_item(sp, S_SLURM_RESTART_COUNT, &restart) != ESPANK_SUCCESS || !restart)
		restart = (uint32_t) _env_long(sp, "SLURM_RESTART_COUNT", 0);

	_setenv(sp, "DLSCHED_CHECKPOINT_SIGNAL", conf.ckpt_signal);
	snprintf(num, sizeof(num), "%u", restart);
	_setenv(sp, "DLSCHED_RESTART", num);
	snprintf(num, sizeof(num), "%ld", gpus);
	_setenv(sp, "DLSCHED_GPUS", num);
	if ((dir = _job_value(sp, opt_ckpt_dir, "SLURM_SPANK_DL_CHECKPOINT_DIR", vbuf, sizeof(vbuf)))) {
		char xbuf[PATH_MAX];

		if (_expand_dir(dir, job_id, xbuf, sizeof(xbuf)) == 0)
			_setenv(sp, "DLSCHED_CHECKPOINT_DIR", xbuf);
		else
			slurm_error("--dl-checkpoint-dir: '%s' is too long once %%j is the job id; "
				    "DLSCHED_CHECKPOINT_DIR not set",
				    dir);
	}
	/* Checked again: the environment's copies are the user's to change. */
	model = _job_value(sp, opt_model, "SLURM_SPANK_DL_MODEL", mbuf, sizeof(mbuf));
	if (model && _check_model(model) < 0)
		model = NULL;
	epochs = _job_value(sp, opt_epochs, "SLURM_SPANK_DL_EPOCHS", ebuf, sizeof(ebuf));
	if (epochs && _check_epochs(epochs) < 0)
		epochs = NULL;
	if (model)
		_setenv(sp, "DLSCHED_MODEL", model);
	if (epochs)
		_setenv(sp, "DLSCHED_EPOCHS", epochs);

	if (conf.ingest[0] && !conf.broken && (batch || numbered))
		_start_collector(sp, job_id, step, nodes, gpus, restart, model, epochs);
	return 0;
}

/*
 * In each task, as the job's user, just before exec. Slurm 22.05 puts the
 * restart count in the tasks' environment only (SLURM_RESTART_COUNT, when not
 * 0): DLSCHED_RESTART is corrected here, and local task 0 tells the collector,
 * which holds its batches until then (collect/control.h).
 */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	long restart;
	int task_id = -1;
	char num[32];

	(void) ac;
	(void) av;
	if (!spank_remote(sp))
		return 0;
	restart = _env_long(sp, "SLURM_RESTART_COUNT", -1);
	if (restart >= 0) {
		snprintf(num, sizeof(num), "%ld", restart);
		_setenv(sp, "DLSCHED_RESTART", num);
	}
	if (collector.pid && spank_get_item(sp, S_TASK_ID, &task_id) == ESPANK_SUCCESS && task_id == 0 &&
	    dls_collector_tell(&collector, SIGUSR2,
			       (int) (RUN_MAGIC | ((restart < 0 ? 0 : restart) & CONTROL_VALUE_MASK))) < 0)
		slurm_debug(DLS_LOG_PREFIX
			    "cannot tell the collector of job %s its run: %s (it waits 10 s, then reports run %ld)",
			    collector_step, strerror(errno), restart < 0 ? 0 : restart);
	return 0;
}

static void _stop_collector(const char *when)
{
	int value = (int) STOP_MAGIC |
		(task_status_unknown || tasks_ended < tasks_local ? STOP_TASKS_UNKNOWN
			 : task_failed				  ? STOP_TASKS_FAILED
								  : STOP_TASKS_OK);

	if (dls_collector_stop(&collector, value, 2000) == 1)
		slurm_error(DLS_LOG_PREFIX "the collector of job %s did not stop within 2 s %s; killed (its batches "
					   "stay in the spool for the next one)",
			    collector_step, when);
}

/*
 * slurmstepd, as root, after each task's exit. When the last local task has
 * ended the collector is stopped here, not in slurm_spank_exit: between the two
 * Slurm kills whatever is left of the step, and the collector must read the
 * progress file's last lines first.
 */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	int status = 0;

	(void) ac;
	(void) av;
	if (!spank_remote(sp) || !collector.pid)
		return 0;
	if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
		task_status_unknown = true;
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		task_failed = true;
	if (++tasks_ended >= tasks_local && tasks_local)
		_stop_collector("after the step's tasks ended");
	return 0;
}

/* slurmstepd, as root, at the step's end: a collector still running (some task
 * never started, or no task count) is stopped now. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void) ac;
	(void) av;
	if (spank_remote(sp) && collector.pid)
		_stop_collector("at the step's end");
	return 0;
}
