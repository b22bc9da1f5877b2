/*****************************************************************************\
 *  dlsched_loans.c - capacity loaning in Slurm (dlsched_slurm.h): which nodes
 *  are inference nodes, which of them are lent to training, and the inference
 *  demand an autoscaler or an administrator declared.
 *
 *  The interface (doc/admin-guide.md, "Capacity loaning"):
 *  - dlsched.conf InferencePartition=NAME: the nodes of that partition serve
 *    inference and may be lent to training. They must also be in the training
 *    partition(s) in slurm.conf, so that Slurm can run training jobs on them;
 *    select/dlsched_cons_tres keeps training jobs off the ones not lent and
 *    inference jobs off the ones lent, for every scheduler in slurmctld.
 *  - Demand: one number in [0, 1] (the fraction of the inference partition's
 *    GPUs inference needs) in InferenceDemandFile= (default
 *    StateSaveLocation/dlsched-inference-demand). Honoured only when it is a
 *    regular file owned by root or SlurmUser and writable by nobody else:
 *    only they can declare demand. Read every cycle (no restart, no
 *    reconfigure); it survives restarts. Missing or refused: 1 (nothing lent).
 *  - Which nodes are lent: LoanStateFile= (default
 *    StateSaveLocation/dlsched-loans), node names one per line, written by
 *    sched/dlsched (atomically) and read back after a restart.
 *  Only libslurmfull symbols and node/partition records: the select plugin
 *  that reads the state runs in slurmctld, slurmd and clients alike.
\*****************************************************************************/

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched_slurm.h"

static char *inference_part = NULL;	/* NULL: loaning off */
static char *demand_path = NULL;
static char *state_path = NULL;

/* The lent nodes as last read or written, and what the state file was then. */
static char **lent = NULL;
static int lent_cnt = 0;
static struct stat lent_stat;
static bool lent_read = false;
static time_t lent_checked = 0;

static char *_config_string(dlsched_scheduler_t *sched, const char *key)
{
	char buf[4096];

	if (!sched || dlsched_scheduler_config(sched, key, buf, sizeof(buf)) != DLSCHED_OK || !buf[0])
		return NULL;
	return xstrdup(buf);
}

static char *_in_state_dir(const char *name)
{
	char *p = NULL;

	xstrfmtcat(p, "%s/%s", slurm_conf.state_save_location ? slurm_conf.state_save_location : "/var/spool/slurmctld",
		   name);
	return p;
}

extern void dls_loans_configure(dlsched_scheduler_t *sched)
{
	xfree(inference_part);
	xfree(demand_path);
	xfree(state_path);
	inference_part = _config_string(sched, "InferencePartition");
	demand_path = _config_string(sched, "InferenceDemandFile");
	state_path = _config_string(sched, "LoanStateFile");
	if (!demand_path)
		demand_path = _in_state_dir("dlsched-inference-demand");
	if (!state_path)
		state_path = _in_state_dir("dlsched-loans");
	lent_read = false;
	lent_checked = 0;
}

extern const char *dls_inference_partition(void)
{
	return inference_part;
}

extern const char *dls_inference_demand_path(void)
{
	return demand_path;
}

extern bool dls_node_in_inference(node_record_t *node_ptr)
{
	if (!inference_part || !node_ptr)
		return false;
	for (int i = 0; i < node_ptr->part_cnt; i++)
		if (node_ptr->part_pptr[i] && !xstrcmp(((part_record_t *) node_ptr->part_pptr[i])->name, inference_part))
			return true;
	return false;
}

static void _free_lent(void)
{
	for (int i = 0; i < lent_cnt; i++)
		xfree(lent[i]);
	xfree(lent);
	lent_cnt = 0;
}

/* Reads the state file when it changed (checked at most once a second). */
static void _refresh_lent(void)
{
	struct stat st;
	time_t now = time(NULL);
	FILE *f;
	char line[512];

	if (lent_read && now == lent_checked)
		return;
	lent_checked = now;
	if (stat(state_path, &st) != 0) {
		if (lent_read && lent_cnt == 0)
			return;
		_free_lent();
		memset(&lent_stat, 0, sizeof(lent_stat));
		lent_read = true;
		return;
	}
	if (lent_read && st.st_ino == lent_stat.st_ino && st.st_mtim.tv_sec == lent_stat.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == lent_stat.st_mtim.tv_nsec && st.st_size == lent_stat.st_size)
		return;
	_free_lent();
	lent_stat = st;
	lent_read = true;
	if (!(f = fopen(state_path, "r"))) {
		error("dlsched: cannot read the loan state %s: %m; no node counts as lent", state_path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *e;

		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strcspn(s, " \t\r\n#");
		*e = '\0';
		if (!*s || line[0] == '#')
			continue;
		xrecalloc(lent, lent_cnt + 1, sizeof(char *));
		lent[lent_cnt++] = xstrdup(s);
	}
	fclose(f);
}

extern bool dls_node_loaned(const char *node_name)
{
	if (!inference_part || !node_name)
		return false;
	_refresh_lent();
	for (int i = 0; i < lent_cnt; i++)
		if (!xstrcmp(lent[i], node_name))
			return true;
	return false;
}

extern int dls_loans_count(void)
{
	if (!inference_part)
		return 0;
	_refresh_lent();
	return lent_cnt;
}

extern int dls_loans_set(const char *node_name, bool loaned)
{
	char *tmp = NULL;
	FILE *f;
	int i, rc = SLURM_SUCCESS;

	if (!inference_part || !node_name)
		return SLURM_ERROR;
	_refresh_lent();
	for (i = 0; i < lent_cnt && xstrcmp(lent[i], node_name); i++)
		;
	if (loaned == (i < lent_cnt))
		return SLURM_SUCCESS;
	if (loaned) {
		xrecalloc(lent, lent_cnt + 1, sizeof(char *));
		lent[lent_cnt++] = xstrdup(node_name);
	} else {
		xfree(lent[i]);
		lent[i] = lent[--lent_cnt];
	}
	/* Atomically, so that a restart reads the old or the new state, never half of one. */
	xstrfmtcat(tmp, "%s.tmp", state_path);
	if (!(f = fopen(tmp, "w"))) {
		error("dlsched: cannot write the loan state %s: %m (nodes lent now are forgotten on restart)", tmp);
		xfree(tmp);
		return SLURM_ERROR;
	}
	fprintf(f, "# Nodes of partition %s lent to training by sched/dlsched (one per line).\n", inference_part);
	for (i = 0; i < lent_cnt; i++)
		fprintf(f, "%s\n", lent[i]);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = SLURM_ERROR;
	if (fclose(f) != 0)
		rc = SLURM_ERROR;
	if (rc == SLURM_SUCCESS && rename(tmp, state_path) != 0)
		rc = SLURM_ERROR;
	if (rc != SLURM_SUCCESS) {
		error("dlsched: cannot write the loan state %s: %m", state_path);
		unlink(tmp);
	} else if (stat(state_path, &lent_stat) != 0) {
		memset(&lent_stat, 0, sizeof(lent_stat));
	}
	xfree(tmp);
	return rc;
}

extern double dls_inference_demand(char *why, size_t len)
{
	struct stat st;
	char buf[128];
	ssize_t n;
	char *end;
	double v;
	int fd;

	if (why && len)
		why[0] = '\0';
	if (!inference_part)
		return 0;
	fd = open(demand_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (why)
			snprintf(why, len, "no demand declared in %s (%s): inference keeps every node", demand_path,
				 strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != slurm_conf.slurm_user_id) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		if (why)
			snprintf(why, len,
				 "%s is not a regular file owned by root or SlurmUser and writable by nobody else: "
				 "ignored, inference keeps every node", demand_path);
		return 1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	{
		char *s = buf;

		while (*s == '#') {	/* comment lines first */
			s = strchr(s, '\n');
			if (!s) {
				s = buf + strlen(buf);
				break;
			}
			s++;
		}
		errno = 0;
		v = strtod(s, &end);
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		if (end == s || *end || errno || !(v >= 0 && v <= 1)) {
			if (why)
				snprintf(why, len, "%s: '%.40s' is not a fraction in [0, 1]: inference keeps every node",
					 demand_path, s);
			return 1;
		}
	}
	return v;
}

extern bool dls_loans_allow(job_record_t *job_ptr, node_record_t *node_ptr)
{
	bool inference_job, loaned;

	if (!inference_part || !dls_node_in_inference(node_ptr))
		return true;
	inference_job = job_ptr->part_ptr && !xstrcmp(job_ptr->part_ptr->name, inference_part);
	loaned = dls_node_loaned(node_ptr->name);
	if (inference_job)
		return !loaned;
	/* A lent node may be taken back: only jobs Slurm can requeue go there. */
	return loaned && dls_job_requeueable(job_ptr);
}
