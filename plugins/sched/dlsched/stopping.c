/*****************************************************************************\
 *  stopping.c - the table of jobs sched/dlsched asked to checkpoint (see
 *  stopping.h), and its state file.
 *
 *  File format, one job per line (the reason last, it may hold spaces):
 *    v1 <job_id> <requested> <deadline> <gpus> <per_node> <nodes> <pred_suspend> <pred_resume> <recorded> <reason>
 *  (times in Unix seconds with a fraction)
\*****************************************************************************/

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "stopping.h"

static dls_stop_t *stops = NULL;
static int stop_cnt = 0;
static char *state_file = NULL;

extern int dls_stops_count(void)
{
	return stop_cnt;
}

extern dls_stop_t *dls_stops_at(int i)
{
	return (i >= 0 && i < stop_cnt) ? &stops[i] : NULL;
}

extern dls_stop_t *dls_stops_find(uint32_t job_id)
{
	for (int i = 0; i < stop_cnt; i++)
		if (stops[i].job_id == job_id)
			return &stops[i];
	return NULL;
}

extern dls_stop_t *dls_stops_add(const dls_stop_t *stop)
{
	dls_stop_t *s = dls_stops_find(stop->job_id);

	if (!s) {
		xrecalloc(stops, stop_cnt + 1, sizeof(dls_stop_t));
		s = &stops[stop_cnt++];
	}
	*s = *stop;
	return s;
}

extern void dls_stops_remove(uint32_t job_id)
{
	for (int i = 0; i < stop_cnt; i++) {
		if (stops[i].job_id != job_id)
			continue;
		memmove(&stops[i], &stops[i + 1], (stop_cnt - i - 1) * sizeof(dls_stop_t));
		stop_cnt--;
		return;
	}
}

extern void dls_stops_save(void)
{
	char *tmp = NULL;
	FILE *f;

	if (!state_file)
		return;
	xstrfmtcat(tmp, "%s.new", state_file);
	if (!(f = fopen(tmp, "w"))) {
		error("sched/dlsched: cannot write %s: %s; jobs being preempted would not be requeued after a slurmctld restart",
		      tmp, strerror(errno));
		xfree(tmp);
		return;
	}
	for (int i = 0; i < stop_cnt; i++) {
		const dls_stop_t *s = &stops[i];

		fprintf(f, "v1 %u %.3f %.3f %d %d %d %.6g %.6g %d %s\n", s->job_id, s->requested,
			s->deadline, s->gpus, s->per_node, s->nodes, s->predicted_suspend,
			s->predicted_resume, s->recorded ? 1 : 0, s->reason);
	}
	if (fclose(f) != 0 || rename(tmp, state_file) != 0) {
		error("sched/dlsched: cannot write %s: %s", state_file, strerror(errno));
		unlink(tmp);
	}
	xfree(tmp);
}

extern void dls_stops_load(const char *state_dir)
{
	char line[512];
	FILE *f;
	int n = 0;

	dls_stops_free();
	state_file = xstrdup_printf("%s/dlsched-stopping.state", state_dir);
	if (!(f = fopen(state_file, "r")))
		return;	/* none yet */
	while (fgets(line, sizeof(line), f)) {
		dls_stop_t s;
		int rec = 0, used = 0;

		n++;
		memset(&s, 0, sizeof(s));
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "v1 %u %lg %lg %d %d %d %lg %lg %d %n", &s.job_id, &s.requested, &s.deadline, &s.gpus, &s.per_node,
			   &s.nodes, &s.predicted_suspend, &s.predicted_resume, &rec, &used) < 9 || !s.job_id) {
			error("sched/dlsched: %s:%d: malformed line skipped: '%s'", state_file, n, line);
			continue;
		}
		s.recorded = rec != 0;
		strlcpy(s.reason, line + used, sizeof(s.reason));
		dls_stops_add(&s);
	}
	fclose(f);
	if (stop_cnt)
		info("sched/dlsched: %d job(s) being preempted before slurmctld restarted (%s): their requeue goes on",
		     stop_cnt, state_file);
}

extern void dls_stops_free(void)
{
	xfree(stops);
	stop_cnt = 0;
	xfree(state_file);
}
