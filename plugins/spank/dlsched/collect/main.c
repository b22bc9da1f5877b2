/*****************************************************************************\
 *  main.c - dlsched-collect: the node-side collector of one job step.
 *
 *  spank/dlsched starts one per step and node (as the job's user) and stops it
 *  when the step's tasks have ended. It follows the job's progress file
 *  (doc/protocol.md, section 1), turns each report into a record of the ingest
 *  protocol (section 2), adds to each epoch what the step's processes read
 *  (counters.h), and delivers the records in batches through its spool
 *  (spool.h, send.h). It never stops the job: every failure is logged to
 *  <spool>/<uid>/collect.log and the collector goes on, or gives up alone.
 *
 *  The loop: it wakes when the progress file changes (inotify) and every
 *  0.5 s at least, samples the counters, reads new lines; every `interval`
 *  seconds it writes the records made since the last batch to the spool as
 *  one batch, which the sender delivers without the loop waiting on the
 *  network. On SIGTERM (control.h) or when the step's root process is gone, it
 *  reads the rest of the file, adds the job_end record, writes the last batch
 *  and tries to deliver for at most FINAL_S seconds.
\*****************************************************************************/

#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "dlsched/limits.h"

#include "counters.h"
#include "log.h"
#include "pidfd.h"
#include "progress.h"
#include "send.h"
#include "spool.h"
#include "control.h"

#define TICK_S 0.5	      /* progress file and counters, at least */
#define FINAL_S 1.6	      /* delivery time after a stop (the plugin waits 2 s) */
#define BATCH_MAX_RECORDS 256 /* well under the service's 1,000 and 256 KiB */
#define OLD_PROGRESS_S (7 * 86400.0)
#define SPOOL_MAX_DEFAULT (64L << 20)
/* Records kept in memory while the spool cannot take them (full disk, the
 * cap): past this many the oldest are dropped, and the log says how many. */
#define MEMORY_MAX_RECORDS 16384

/* What the plugin tells us (see usage()). */
typedef struct {
	long job_id;
	char step[16];
	uid_t uid;
	const char *cluster;
	char node[256];
	long run;
	long gpus;
	long nodes;
	const char *model;
	double epochs_total;
	const char *progress;
	long long progress_offset;
	const char *spool;
	long spool_max; /* bytes of batches in the user's spool (0: no cap) */
	const char *ingest;
	double interval;
	const char *munge_socket;
	pid_t root;
	const char *log;
	double start;
	bool await_run;
} args_t;

typedef struct {
	args_t a;
	bool batch_step;
	counters_t counters;
	progress_file_t pf;
	spool_t spool;
	sender_t sender;
	json_t *records; /* made since the last batch */
	bool job_sent;
	bool saw_progress;
	long last_epoch; /* 0: none yet */
	double last_epoch_end;
	counter_values_t at_last_epoch;
	bool save_since_epoch;
	int tasks_end;	/* STOP_TASKS_* */
	bool run_known; /* batches are held until it is */
	unsigned long epochs, checkpoints, bad_lines, batches;
	size_t held_records; /* kept in memory by the last flush */
} collector_t;

static double _now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double _mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define AWAIT_RUN_S 10

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dlsched-collect --job-id N --step batch|N --progress FILE --spool DIR\n"
		"                       --ingest URL [options]\n"
		"The node-side collector of spank/dlsched: follows a training job's progress\n"
		"file and delivers its epochs and checkpoints to dlsched-ingestd\n"
		"(doc/protocol.md). spank/dlsched starts it; run by hand only to test.\n"
		"  --job-id N            the Slurm job\n"
		"  --step STEP           batch, extern or the step number\n"
		"  --progress FILE       the progress file to follow\n"
		"  --progress-offset B   start reading at byte B (default 0)\n"
		"  --spool DIR           the spool; batches go to DIR/<uid>/\n"
		"  --spool-max BYTES     cap of the batches in DIR/<uid>/ (default 64 MiB; 0: none);\n"
		"                        at the cap records wait in memory (up to %d)\n"
		"  --ingest URL          dlsched-ingestd, e.g. http://ctl:6820\n"
		"  --uid UID             the job's user (default and only allowed: this process's)\n"
		"  --cluster NAME        the Slurm cluster name (default none)\n"
		"  --node NAME           this node's Slurm name (default: the host name)\n"
		"  --run N               the job's restart count (default 0)\n"
		"  --gpus N              GPUs of the run over all its nodes (default 0)\n"
		"  --nodes N             nodes of the run (default 1)\n"
		"  --model NAME          the model (--dl-model)\n"
		"  --epochs-total E      epochs in all (--dl-epochs)\n"
		"  --interval S          seconds between batches (default 5)\n"
		"  --munge-socket PATH   munged's socket (default munge's own)\n"
		"  --root-pid PID        the step's processes descend from PID (default: the parent)\n"
		"  --start T             the step's start, Unix seconds (default now)\n"
		"  --await-run           hold batches until the plugin sends the run (control.h;\n"
		"                        at most %d s, then --run)\n"
		"  --log FILE            the log (default DIR/<uid>/collect.log; - is stderr)\n",
		MEMORY_MAX_RECORDS, AWAIT_RUN_S);
}

static int _bad(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "dlsched-collect: --%s '%s': %s\n", opt, val, want);
	return -1;
}

static int _long(const char *opt, const char *val, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (!*val || *end || errno || v < lo || v > hi) {
		char want[96];

		snprintf(want, sizeof(want), "need a whole number from %ld to %ld", lo, hi);
		return _bad(opt, val, want);
	}
	*out = v;
	return 0;
}

static int _double(const char *opt, const char *val, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (!*val || *end || errno || !isfinite(v) || strpbrk(val, "xXpP") || v < lo || v > hi) {
		char want[96];

		snprintf(want, sizeof(want), "need a number from %g to %g", lo, hi);
		return _bad(opt, val, want);
	}
	*out = v;
	return 0;
}

/* [A-Za-z0-9._-], as the ingest service wants names. */
static bool _name_ok(const char *s, size_t lo, size_t hi)
{
	size_t n = strlen(s);

	if (n < lo || n > hi)
		return false;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-'))
			return false;
	}
	return true;
}

static int _parse_args(int argc, char **argv, args_t *a)
{
	enum {
		O_JOB = 1,
		O_STEP,
		O_UID,
		O_CLUSTER,
		O_NODE,
		O_RUN,
		O_GPUS,
		O_NODES,
		O_MODEL,
		O_EPOCHS,
		O_PROGRESS,
		O_OFFSET,
		O_SPOOL,
		O_INGEST,
		O_INTERVAL,
		O_MUNGE,
		O_ROOT,
		O_LOG,
		O_START,
		O_AWAIT_RUN,
		O_SPOOL_MAX,
		O_HELP
	};
	static const struct option opts[] = {{"job-id", required_argument, NULL, O_JOB},
					     {"step", required_argument, NULL, O_STEP},
					     {"uid", required_argument, NULL, O_UID},
					     {"cluster", required_argument, NULL, O_CLUSTER},
					     {"node", required_argument, NULL, O_NODE},
					     {"run", required_argument, NULL, O_RUN},
					     {"gpus", required_argument, NULL, O_GPUS},
					     {"nodes", required_argument, NULL, O_NODES},
					     {"model", required_argument, NULL, O_MODEL},
					     {"epochs-total", required_argument, NULL, O_EPOCHS},
					     {"progress", required_argument, NULL, O_PROGRESS},
					     {"progress-offset", required_argument, NULL, O_OFFSET},
					     {"spool", required_argument, NULL, O_SPOOL},
					     {"ingest", required_argument, NULL, O_INGEST},
					     {"interval", required_argument, NULL, O_INTERVAL},
					     {"munge-socket", required_argument, NULL, O_MUNGE},
					     {"root-pid", required_argument, NULL, O_ROOT},
					     {"log", required_argument, NULL, O_LOG},
					     {"start", required_argument, NULL, O_START},
					     {"await-run", no_argument, NULL, O_AWAIT_RUN},
					     {"spool-max", required_argument, NULL, O_SPOOL_MAX},
					     {"help", no_argument, NULL, O_HELP},
					     {NULL, 0, NULL, 0}};
	long v;
	int opt, idx, rc = 0;
	bool seen[O_HELP + 1] = {false};
	char *dot;

	memset(a, 0, sizeof(*a));
	a->uid = getuid();
	a->cluster = "";
	a->nodes = 1;
	a->interval = 5;
	a->spool_max = SPOOL_MAX_DEFAULT;
	a->root = getppid();
	if (gethostname(a->node, sizeof(a->node) - 1) == 0 && (dot = strchr(a->node, '.')))
		*dot = '\0';

	while ((opt = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		/* Each option takes effect once: a second value is a mistake. */
		if (opt > 0 && opt <= O_HELP && seen[opt]) {
			fprintf(stderr, "dlsched-collect: --%s is given twice: give it once\n", opts[idx].name);
			return -1;
		}
		if (opt > 0 && opt <= O_HELP)
			seen[opt] = true;
		switch (opt) {
		case O_JOB:
			rc |= _long("job-id", optarg, 1, 4294967294L, &a->job_id);
			break;
		case O_STEP:
			if (strcmp(optarg, "batch") && strcmp(optarg, "extern") &&
			    (_long("step", optarg, 0, 4294967294L, &v) < 0)) {
				rc = -1;
				break;
			}
			snprintf(a->step, sizeof(a->step), "%s", optarg);
			break;
		case O_UID:
			if (_long("uid", optarg, 0, 4294967294L, &v) == 0)
				a->uid = (uid_t) v;
			else
				rc = -1;
			break;
		case O_CLUSTER:
			a->cluster = optarg;
			if (!_name_ok(optarg, 0, 64))
				rc = _bad("cluster", optarg, "need 0 to 64 of A-Z a-z 0-9 . _ -");
			break;
		case O_NODE:
			snprintf(a->node, sizeof(a->node), "%s", optarg);
			break;
		case O_RUN:
			rc |= _long("run", optarg, 0, 1000000, &a->run);
			break;
		case O_GPUS:
			rc |= _long("gpus", optarg, 0, DLSCHED_MAX_JOB_GPUS, &a->gpus);
			break;
		case O_NODES:
			rc |= _long("nodes", optarg, 1, 100000, &a->nodes);
			break;
		case O_MODEL:
			a->model = optarg;
			break;
		case O_EPOCHS:
			rc |= _double("epochs-total", optarg, 0, DLSCHED_MAX_EPOCHS, &a->epochs_total);
			break;
		case O_PROGRESS:
			a->progress = optarg;
			break;
		case O_OFFSET:
			if (_long("progress-offset", optarg, 0, LONG_MAX, &v) == 0)
				a->progress_offset = v;
			else
				rc = -1;
			break;
		case O_SPOOL:
			a->spool = optarg;
			break;
		case O_INGEST:
			a->ingest = optarg;
			if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8))
				rc = _bad("ingest", optarg, "need an http:// or https:// URL");
			break;
		case O_INTERVAL:
			rc |= _double("interval", optarg, 0.1, 3600, &a->interval);
			break;
		case O_SPOOL_MAX:
			if (_long("spool-max", optarg, 0, LONG_MAX, &v) == 0)
				a->spool_max = v;
			else
				rc = -1;
			break;
		case O_MUNGE:
			a->munge_socket = optarg;
			break;
		case O_ROOT:
			if (_long("root-pid", optarg, 1, INT_MAX, &v) == 0)
				a->root = (pid_t) v;
			else
				rc = -1;
			break;
		case O_LOG:
			a->log = optarg;
			break;
		case O_START:
			rc |= _double("start", optarg, 946684800, 1e10, &a->start);
			break;
		case O_AWAIT_RUN:
			a->await_run = true;
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dlsched-collect: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!a->job_id || !a->step[0] || !a->progress || !a->spool || !a->ingest) {
		fprintf(stderr,
			"dlsched-collect: --job-id, --step, --progress, --spool and --ingest are required (--help)\n");
		return -1;
	}
	if (a->spool[0] != '/' || a->progress[0] != '/')
		rc = _bad("spool/--progress", a->spool[0] != '/' ? a->spool : a->progress, "need an absolute path");
	if (!_name_ok(a->node, 1, 255))
		rc = _bad("node", a->node, "need 1 to 255 of A-Z a-z 0-9 . _ -");
	if (a->uid != geteuid()) {
		fprintf(stderr,
			"dlsched-collect: --uid %u: this process runs as uid %u; the collector runs as the job's user "
			"(spank/dlsched does that)\n",
			(unsigned) a->uid, (unsigned) geteuid());
		rc = -1;
	}
	if (!a->start)
		a->start = _now();
	return rc;
}

/* ---- records ------------------------------------------------------------ */

static void _add(collector_t *c, json_t *rec)
{
	if (rec)
		json_array_append_new(c->records, rec);
}

static void _add_job(collector_t *c)
{
	json_t *rec = json_pack("{s:s, s:I, s:I, s:f}", "type", "job", "gpus", (json_int_t) c->a.gpus, "nodes",
				(json_int_t) c->a.nodes, "start", c->a.start);

	if (!rec)
		return;
	if (c->a.model && c->a.model[0]) {
		if (_name_ok(c->a.model, 1, 64))
			json_object_set_new(rec, "model", json_string(c->a.model));
		else
			collect_log("model '%s' is not 1 to 64 of A-Z a-z 0-9 . _ -; the job record leaves it out",
				    c->a.model);
	}
	if (c->a.epochs_total > 0)
		json_object_set_new(rec, "epochs_total", json_real(c->a.epochs_total));
	_add(c, rec);
	c->job_sent = true;
}

/* Whether another step of this job on this node reported progress since this
 * step started (spank/dlsched names progress files <job>.<step>.<node>.progress):
 * that step's collector then speaks for the job's end. */
static bool _other_step_reported(collector_t *c)
{
	char *dir = strdup(c->a.progress), *slash, prefix[64], suffix[300];
	const char *base;
	DIR *d;
	struct dirent *de;
	bool found = false;

	if (!dir)
		return false;
	slash = strrchr(dir, '/');
	base = slash ? slash + 1 : c->a.progress;
	if (slash)
		*slash = '\0';
	snprintf(prefix, sizeof(prefix), "%ld.", c->a.job_id);
	snprintf(suffix, sizeof(suffix), ".%s.progress", c->a.node);
	if ((d = opendir(slash ? dir : "."))) {
		while (!found && (de = readdir(d))) {
			size_t n = strlen(de->d_name), k = strlen(suffix);
			struct stat st;

			if (strncmp(de->d_name, prefix, strlen(prefix)) || n <= k ||
			    strcmp(de->d_name + n - k, suffix) || !strcmp(de->d_name, base) ||
			    fstatat(dirfd(d), de->d_name, &st, 0) < 0)
				continue;
			found = st.st_size > 0 && st.st_mtime >= (time_t) c->a.start;
		}
		closedir(d);
	}
	free(dir);
	return found;
}

/*
 * The run's end, as this node saw it:
 *  completed     the last reported epoch reached --epochs-total (whole
 *                epochs), or the tasks all exited 0 with no checkpoint since
 *                the last epoch;
 *  checkpointed  a checkpoint save was reported after the last epoch (the
 *                job saved and stopped: a checkpoint request, a preemption);
 *  failed        anything else (a task failed, or the end is unknown).
 */
static const char *_end_state(const collector_t *c)
{
	if (c->a.epochs_total >= 1 && c->last_epoch >= floor(c->a.epochs_total))
		return "completed";
	if (c->save_since_epoch)
		return "checkpointed";
	if (c->tasks_end == STOP_TASKS_OK)
		return "completed";
	return "failed";
}

static void _add_job_end(collector_t *c)
{
	const char *state;

	/* The batch step speaks for the job, unless the training ran in
	 * another step here; other steps only when their job reported. */
	if (c->batch_step ? (!c->saw_progress && _other_step_reported(c)) : !c->saw_progress)
		return;
	if (!c->job_sent)
		_add_job(c);
	state = _end_state(c);
	_add(c, json_pack("{s:s, s:f, s:s}", "type", "job_end", "end", _now(), "state", state));
	collect_log("run %ld ended: %s (last epoch %ld%s)", c->a.run, state, c->last_epoch,
		    c->save_since_epoch ? ", checkpoint saved after it" : "");
}

static void _on_line(void *arg, unsigned long line_no, const char *line, size_t len)
{
	collector_t *c = arg;
	progress_event_t ev;
	char err[512];

	if (len == 0)
		return;
	if (progress_parse(line, len, _now(), &ev, err, sizeof(err)) < 0) {
		c->bad_lines++;
		collect_log("progress line %lu skipped: %s: %.*s%s", line_no, err, len > 120 ? 120 : (int) len, line,
			    len > 120 ? "..." : "");
		return;
	}
	if (ev.kind == PROGRESS_EPOCH && ev.epoch <= c->last_epoch) {
		c->bad_lines++;
		collect_log("progress line %lu skipped: epoch %ld was reported already (the last was %ld; each epoch "
			    "once, in order)",
			    line_no, ev.epoch, c->last_epoch);
		return;
	}
	if (!c->saw_progress && !c->job_sent)
		_add_job(c);
	c->saw_progress = true;

	if (ev.kind == PROGRESS_EPOCH) {
		counter_values_t now, d;
		double start = ev.has_start ? ev.start : (c->last_epoch_end ? c->last_epoch_end : c->a.start);

		if (c->last_epoch && ev.epoch != c->last_epoch + 1)
			collect_log("epoch %ld follows epoch %ld: the epochs between were not reported", ev.epoch,
				    c->last_epoch);
		if (start > ev.end)
			start = ev.end;
		counters_sample(&c->counters);
		now = counters_values(&c->counters);
		d = counters_delta(now, c->at_last_epoch);
		c->at_last_epoch = now;
		_add(c,
		     json_pack("{s:s, s:I, s:I, s:f, s:f, s:I, s:I, s:I}", "type", "epoch", "epoch",
			       (json_int_t) ev.epoch, "gpus", (json_int_t) c->a.gpus, "start", start, "end", ev.end,
			       "bytes_read", (json_int_t) d.bytes_read, "net_rx_bytes", (json_int_t) d.net_rx_bytes,
			       "nfs_read_bytes", (json_int_t) d.nfs_read_bytes));
		c->last_epoch = ev.epoch;
		c->last_epoch_end = ev.end;
		c->save_since_epoch = false;
		c->epochs++;
	} else {
		_add(c,
		     json_pack("{s:s, s:s, s:f, s:I, s:f, s:f}", "type", "checkpoint", "kind",
			       ev.save ? "save" : "load", "epoch", ev.ckpt_epoch, "bytes", (json_int_t) ev.bytes,
			       "seconds", ev.seconds, "at", ev.at));
		if (ev.save)
			c->save_since_epoch = true;
		c->checkpoints++;
	}
}

/* Writes the records made since the last batch to the spool, as one batch
 * (or several, past BATCH_MAX_RECORDS), and queues them for delivery. What the
 * spool cannot take (a full disk, the cap) stays in memory for the next
 * flush, up to MEMORY_MAX_RECORDS. */
static void _flush(collector_t *c)
{
	size_t n = json_array_size(c->records), from;

	for (from = 0; from < n; from += BATCH_MAX_RECORDS) {
		json_t *recs = json_array(), *batch;
		char *text, name[256];
		int rc = -1;

		for (size_t i = from; i < n && i < from + BATCH_MAX_RECORDS; i++)
			json_array_append(recs, json_array_get(c->records, i));
		batch = json_pack("{s:i, s:s, s:I, s:s, s:s, s:I, s:o}", "v", 1, "cluster", c->a.cluster, "job_id",
				  (json_int_t) c->a.job_id, "step", c->a.step, "node", c->a.node, "run",
				  (json_int_t) c->a.run, "records", recs);
		text = batch ? json_dumps(batch, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(16)) : NULL;
		if (!text) {
			collect_log("cannot encode a batch of %zu records (out of memory?); they wait in memory",
				    json_array_size(recs));
		} else if ((rc = spool_write(&c->spool, text, strlen(text), name, sizeof(name))) == 0) {
			sender_add(&c->sender, name);
			c->batches++;
		}
		free(text);
		json_decref(batch);
		if (rc != 0)
			break;
	}
	if (from >= n) {
		if (c->held_records)
			collect_log("the records that waited in memory are in the spool now");
		c->held_records = 0;
		json_array_clear(c->records);
		return;
	}
	/* Keep the records not written, oldest first, at most MEMORY_MAX_RECORDS. */
	{
		json_t *left = json_array();
		size_t keep_from = from;

		if (n - keep_from > MEMORY_MAX_RECORDS) {
			keep_from = n - MEMORY_MAX_RECORDS;
			collect_log("%zu records dropped: the spool has taken nothing for a while and at most %d wait "
				    "in memory",
				    keep_from - from, MEMORY_MAX_RECORDS);
		}
		for (size_t i = keep_from; i < n; i++)
			json_array_append(left, json_array_get(c->records, i));
		json_decref(c->records);
		c->records = left;
		if (!c->held_records)
			collect_log("%zu records wait in memory for room in the spool", n - keep_from);
		c->held_records = n - keep_from;
	}
}

/* ---- housekeeping ------------------------------------------------------- */

/* Progress files of steps that ended long ago (the run directory would
 * otherwise grow forever). */
static void _remove_old_progress(const char *progress)
{
	char *dir = strdup(progress), *slash;
	DIR *d;
	struct dirent *de;
	double now = _now();

	if (!dir || !(slash = strrchr(dir, '/'))) {
		free(dir);
		return;
	}
	*slash = '\0';
	if ((d = opendir(dir))) {
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);
			struct stat st;

			if (n < 10 || strcmp(de->d_name + n - 9, ".progress") || !strcmp(de->d_name, slash + 1) ||
			    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
			    now - st.st_mtime < OLD_PROGRESS_S)
				continue;
			(void) unlinkat(dirfd(d), de->d_name, 0);
		}
		closedir(d);
	}
	free(dir);
}

static bool _root_alive(pid_t root)
{
	return !(kill(root, 0) < 0 && errno == ESRCH);
}

/* The run, from the plugin (control.h): batches may go now. */
static void _run_known(collector_t *c, long run, const char *how)
{
	if (c->run_known)
		return;
	c->run_known = true;
	if (run != c->a.run)
		collect_log("run %ld (%s; started as run %ld)", run, how, c->a.run);
	c->a.run = run;
}

/* One signal: whether it stops us (control.h). */
static bool _signal(collector_t *c, const struct signalfd_siginfo *si)
{
	unsigned value = (unsigned) si->ssi_int;
	bool queued = si->ssi_code == SI_QUEUE;

	if (si->ssi_signo == SIGUSR2) {
		if (queued && (value & CONTROL_MAGIC_MASK) == RUN_MAGIC)
			_run_known(c, (long) (value & CONTROL_VALUE_MASK), "from the step's first task");
		return false;
	}
	if (si->ssi_signo == SIGHUP)
		return false;
	if (queued && (value & CONTROL_MAGIC_MASK) == STOP_MAGIC) {
		c->tasks_end = (int) (value & CONTROL_VALUE_MASK);
		collect_log("stop requested by spank/dlsched (tasks %s)",
			    c->tasks_end == STOP_TASKS_OK		? "exited 0"
				    : c->tasks_end == STOP_TASKS_FAILED ? "failed"
									: "ended");
		return true;
	}
	if (si->ssi_signo == SIGTERM && si->ssi_code == SI_USER && (pid_t) si->ssi_pid == c->a.root) {
		collect_log("SIGTERM from the step's root (slurmstepd signalling the step); still reading until its "
			    "tasks end");
		return false;
	}
	collect_log("stopping on signal %d from pid %u", (int) si->ssi_signo, si->ssi_pid);
	return true;
}

int main(int argc, char **argv)
{
	collector_t c;
	char err[512], who[96], *logpath = NULL;
	sigset_t mask;
	int sigfd, infd = -1, rootfd;
	double next_tick, next_batch, stop_at, deadline, now, await_until;
	bool stop = false, first;
	const char *why = "the step's root process is gone";

	memset(&c, 0, sizeof(c));
	if (_parse_args(argc, argv, &c.a) < 0)
		return 2;
	c.batch_step = !strcmp(c.a.step, "batch");

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	/* The log lives in the spool: the spool's directory first. */
	snprintf(who, sizeof(who), "%ld-%s", c.a.job_id, c.a.step);
	if (spool_init(&c.spool, c.a.spool, c.a.uid, who, c.a.spool_max, err, sizeof(err)) < 0) {
		snprintf(who, sizeof(who), "job %ld.%s", c.a.job_id, c.a.step);
		collect_log_open(c.a.log, who);
		collect_log("cannot use the spool: %s; not collecting", err);
		return 1;
	}
	if (!c.a.log && asprintf(&logpath, "%s/collect.log", c.spool.dir) < 0)
		logpath = NULL;
	snprintf(who, sizeof(who), "job %ld.%s", c.a.job_id, c.a.step);
	collect_log_open(c.a.log ? c.a.log : logpath, who);
	free(logpath);
	if (sender_init(&c.sender, &c.spool, c.a.ingest, c.a.munge_socket, err, sizeof(err)) < 0) {
		collect_log("%s; not collecting", err);
		return 1;
	}
	sender_scan(&c.sender, _mono());
	if (c.sender.qlen)
		collect_log("%zu batches of earlier steps wait in the spool; they go first", c.sender.qlen);
	collect_log("started: run %ld on %s, %ld GPUs on %ld nodes, progress %s (from byte %lld), ingest %s, batches "
		    "every %g s",
		    c.a.run, c.a.node, c.a.gpus, c.a.nodes, c.a.progress, c.a.progress_offset, c.a.ingest,
		    c.a.interval);

	c.records = json_array();
	counters_init(&c.counters, c.a.root, getpid());
	counters_sample(&c.counters);
	c.at_last_epoch = counters_values(&c.counters);
	progress_init(&c.pf, c.a.progress, (off_t) c.a.progress_offset);
	_remove_old_progress(c.a.progress);

	if ((infd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) >= 0) {
		char *dir = strdup(c.a.progress), *slash;

		if (dir && (slash = strrchr(dir, '/')))
			*slash = '\0';
		if (!dir || inotify_add_watch(infd, dir, IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO) < 0) {
			collect_log("inotify on %s: %s; reading the progress file every %.1f s", dir ? dir : "?",
				    strerror(errno), TICK_S);
			close(infd);
			infd = -1;
		}
		free(dir);
	}
	rootfd = dls_pidfd_open(c.a.root);

	if (c.batch_step)
		_add_job(&c);
	progress_read(&c.pf, false, _on_line, &c);
	c.run_known = !c.a.await_run;
	if (c.run_known)
		_flush(&c);

	now = _mono();
	await_until = now + AWAIT_RUN_S;
	next_tick = now + TICK_S;
	next_batch = now + c.a.interval;
	while (!stop) {
		struct curl_waitfd fds[3];
		unsigned nfds = 0;
		double wake = next_tick < next_batch ? next_tick : next_batch;
		long due;
		int timeout_ms;
		bool changed = false;

		now = _mono();
		timeout_ms = wake > now ? (int) ((wake - now) * 1000) + 1 : 0;
		due = sender_due_ms(&c.sender, now);
		if (due >= 0 && due < timeout_ms)
			timeout_ms = (int) due;
		if (sigfd >= 0)
			fds[nfds++] = (struct curl_waitfd){sigfd, CURL_WAIT_POLLIN, 0};
		if (infd >= 0)
			fds[nfds++] = (struct curl_waitfd){infd, CURL_WAIT_POLLIN, 0};
		if (rootfd >= 0)
			fds[nfds++] = (struct curl_waitfd){rootfd, CURL_WAIT_POLLIN, 0};
		sender_poll(&c.sender, fds, nfds, timeout_ms);

		for (unsigned i = 0; i < nfds; i++) {
			if (!fds[i].revents)
				continue;
			if (fds[i].fd == sigfd) {
				struct signalfd_siginfo si;

				while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
					if (_signal(&c, &si)) {
						stop = true;
						why = "asked to stop";
					}
				}
			} else if (fds[i].fd == infd) {
				char buf[4096];

				while (read(infd, buf, sizeof(buf)) > 0)
					;
				changed = true;
			} else if (fds[i].fd == rootfd) {
				stop = true;
			}
		}
		now = _mono();
		if (now >= next_tick) {
			counters_sample(&c.counters);
			next_tick = now + TICK_S;
			changed = true;
			if (rootfd < 0 && !_root_alive(c.a.root))
				stop = true;
		}
		if (changed)
			progress_read(&c.pf, false, _on_line, &c);
		if (!c.run_known && now >= await_until)
			_run_known(&c, c.a.run, "no word from the tasks");
		if (now >= next_batch && c.run_known) {
			_flush(&c);
			next_batch = now + c.a.interval;
		}
		sender_run(&c.sender, now, false);
	}

	/* The end: the rest of the file, job_end, the last batch, one try. */
	stop_at = _mono();
	collect_log("stopping: %s", why);
	progress_read(&c.pf, true, _on_line, &c);
	_add_job_end(&c);
	_run_known(&c, c.a.run, "no word from the tasks");
	_flush(&c);
	if (json_array_size(c.records))
		collect_log("%zu records are lost: the spool could not take them before the end (see above)",
			    json_array_size(c.records));
	deadline = stop_at + FINAL_S;
	first = true;
	while ((now = _mono()) < deadline) {
		if (!sender_busy(&c.sender))
			sender_set_timeout(&c.sender, (long) ((deadline - now) * 1000));
		sender_run(&c.sender, now, first);
		first = false;
		if (!sender_busy(&c.sender) && (!sender_waiting(&c.sender) || sender_due_ms(&c.sender, now) != 0))
			break;
		sender_poll(&c.sender, NULL, 0, 50);
	}
	sender_abort(&c.sender);
	collect_log("stopped: %lu epochs, %lu checkpoints, %lu bad lines; %lu batches made, %lu delivered, %lu "
		    "rejected, %lu failed attempts",
		    c.epochs, c.checkpoints, c.bad_lines, c.batches, c.sender.delivered, c.sender.rejected,
		    c.sender.failed_attempts);

	sender_fini(&c.sender);
	spool_fini(&c.spool);
	progress_fini(&c.pf);
	counters_fini(&c.counters);
	json_decref(c.records);
	curl_global_cleanup();
	return 0;
}
