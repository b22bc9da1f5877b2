/*****************************************************************************\
 *  spank_dlsched.c - the options that tell dlsched what a training job is.
 *
 *  sbatch/salloc/srun --dl-model=NAME --dl-epochs=N --dl-elastic=MIN:MAX
 *  --dl-checkpoint-dir=DIR. Each value is checked when the job is submitted;
 *  a bad one refuses the submission with a message saying what is wrong. The
 *  values travel with the job in its SPANK job-control environment
 *  (DL_MODEL, ...), where the dlsched controller plugins read them; a batch
 *  job finds them as SLURM_SPANK_DL_MODEL, ...
 *
 *  Public SPANK API only (no Slurm internals, no libtorch, no SQLite): it is
 *  loaded by sbatch, srun, salloc and slurmstepd on every node.
\*****************************************************************************/

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

SPANK_PLUGIN(dlsched, 1);

#define DLS_VALUE_LEN 256

/* Values of this submission's options (set by the callbacks, in the client). */
static char opt_model[DLS_VALUE_LEN];
static char opt_epochs[DLS_VALUE_LEN];
static char opt_elastic[DLS_VALUE_LEN];
static char opt_ckpt_dir[PATH_MAX];

/* A model name: letters, digits, '-', '_', '.', at most 64 characters. */
static int _check_model(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || n > 64) {
		slurm_error("--dl-model: '%s' must be 1 to 64 characters (a model name such as resnet50)", v);
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

/* Epochs: a positive number (fractions allowed: a job may stop mid-epoch), at most 10^7. */
static int _check_epochs(const char *v)
{
	char *end = NULL;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || !(d > 0 && d <= 1e7) || strpbrk(v, "xXpP")) {
		slurm_error("--dl-epochs: '%s' is not a number of epochs (a positive number, e.g. 90)", v);
		return -1;
	}
	return 0;
}

/* MIN:MAX GPUs, 1 <= MIN <= MAX <= 4096. */
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
	if (lo < 1 || hi < lo || hi > 4096) {
		slurm_error("--dl-elastic: need 1 <= MIN <= MAX <= 4096 GPUs, got %ld:%ld", lo, hi);
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

/* The options' values, by the option's `val` (the index into this table). */
static struct {
	char *dst;
	size_t len;
	int (*check)(const char *);
} values[] = {
	{ opt_model, sizeof(opt_model), _check_model },
	{ opt_epochs, sizeof(opt_epochs), _check_epochs },
	{ opt_elastic, sizeof(opt_elastic), _check_elastic },
	{ opt_ckpt_dir, sizeof(opt_ckpt_dir), _check_dir },
};

/* One callback for every option: check the value, keep it. */
static int _cb(int val, const char *optarg, int remote)
{
	(void) remote;
	if (val < 0 || (size_t) val >= sizeof(values) / sizeof(values[0]) || !optarg ||
	    values[val].check(optarg) != 0)
		return -1;
	snprintf(values[val].dst, values[val].len, "%s", optarg);
	return 0;
}

static struct spank_option options[] = {
	{ "dl-model", "NAME", "dlsched: the model this job trains (profiles and predictions are per model)", 1, 0,
	  _cb },
	{ "dl-epochs", "N", "dlsched: epochs the job trains in all", 1, 1, _cb },
	{ "dl-elastic", "MIN:MAX", "dlsched: GPUs the job can run on; dlsched may resize it within them", 1, 2,
	  _cb },
	{ "dl-checkpoint-dir", "DIR", "dlsched: where the job keeps its checkpoints (absolute, on shared storage)",
	  1, 3, _cb },
	SPANK_OPTIONS_TABLE_END
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void) ac;
	(void) av;
	/* Options exist where jobs are submitted and where their steps run. */
	if (spank_context() == S_CTX_SLURMD || spank_context() == S_CTX_JOB_SCRIPT)
		return 0;
	for (struct spank_option *o = options; o->name; o++) {
		spank_err_t rc = spank_option_register(sp, o);

		if (rc != ESPANK_SUCCESS) {
			slurm_error("spank/dlsched: cannot register --%s: %s", o->name, spank_strerror(rc));
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
		{ "DL_MODEL", opt_model },
		{ "DL_EPOCHS", opt_epochs },
		{ "DL_ELASTIC", opt_elastic },
		{ "DL_CHECKPOINT_DIR", opt_ckpt_dir },
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
			slurm_error("spank/dlsched: cannot pass %s to the job: %s", vars[i].name, spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}
