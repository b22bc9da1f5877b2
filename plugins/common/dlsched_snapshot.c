/*****************************************************************************\
 *  dlsched_snapshot.c - slurmctld's job and node records to dlsched views
 *  (dlsched_slurm.h). slurmctld only: uses job_list and avail_node_bitmap.
\*****************************************************************************/

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/acct_policy.h"
#include "src/slurmctld/licenses.h"
#include "src/slurmctld/slurmctld.h"

#include "dlsched_slurm.h"

/* Shares of a running job: GPUs allocated on each of its nodes. */
static size_t _job_shares(job_record_t *job_ptr, dlsched_share_t *out, size_t cap)
{
	gres_state_t *gs = dls_find_gpu_state(job_ptr->gres_list_alloc);
	gres_job_state_t *js = gs ? gs->gres_data : NULL;
	size_t n = 0;
	int k = 0;

	if (!job_ptr->node_bitmap)
		return 0;
	for (int i = 0; i < node_record_count && n < cap; i++) {
		if (!bit_test(job_ptr->node_bitmap, i))
			continue;
		if (js && js->gres_cnt_node_alloc && k < (int) js->node_cnt && js->gres_cnt_node_alloc[k] > 0) {
			out[n].node_index = i;
			out[n].gpus = (int) js->gres_cnt_node_alloc[k];
			n++;
		}
		k++;
	}
	return n;
}

extern int dls_job_gpus_allocated(job_record_t *job_ptr)
{
	gres_state_t *gs = dls_find_gpu_state(job_ptr->gres_list_alloc);
	gres_job_state_t *js = gs ? gs->gres_data : NULL;
	int gpus = 0;

	if (!js || !js->gres_cnt_node_alloc)
		return 0;
	for (uint32_t k = 0; k < js->node_cnt; k++)
		gpus += (int) js->gres_cnt_node_alloc[k];
	return gpus;
}

extern bool dls_record_deadline(job_record_t *job_ptr)
{
	char tok[64];
	time_t deadline = dls_job_deadline(job_ptr);

	if (!deadline)
		return false;
	snprintf(tok, sizeof(tok), DLSCHED_WORD_DEADLINE "=%ld", (long) deadline);
	if (job_ptr->admin_comment && strstr(job_ptr->admin_comment, tok))
		return false;
	if (job_ptr->admin_comment && strstr(job_ptr->admin_comment, DLSCHED_WORD_DEADLINE "=")) {
		/* The deadline changed (scontrol update): replace the whole token. */
		char *old = job_ptr->admin_comment, *at = strstr(old, DLSCHED_WORD_DEADLINE "=");
		char *rest = at;
		char *fresh = NULL;

		while (*rest && !isspace((unsigned char) *rest))
			rest++;
		xstrfmtcat(fresh, "%.*s%s%s", (int) (at - old), old, tok, rest);
		xfree(job_ptr->admin_comment);
		job_ptr->admin_comment = fresh;
	} else if (job_ptr->admin_comment && job_ptr->admin_comment[0]) {
		xstrfmtcat(job_ptr->admin_comment, " %s", tok);
	} else {
		xfree(job_ptr->admin_comment);
		job_ptr->admin_comment = xstrdup(tok);
	}
	return true;
}

extern time_t dls_job_deadline(job_record_t *job_ptr)
{
	dlsched_job_metadata_t m;

	if (job_ptr->deadline && job_ptr->deadline != NO_VAL)
		return job_ptr->deadline;
	/*
	 * The comment word is the only other source, and most jobs have none:
	 * without "deadline=" in the comment there is nothing to parse. This runs
	 * for every job in the queue, under the job write lock, every cycle
	 * (sched/dlsched) and every PriorityCalcPeriod (site_factor/dlsched).
	 */
	if (!job_ptr->comment || !strstr(job_ptr->comment, DLSCHED_WORD_DEADLINE "="))
		return 0;
	return dls_job_metadata(job_ptr, &m) ? (time_t) m.deadline : 0;
}

extern long dls_admin_comment_value(job_record_t *job_ptr, const char *key)
{
	char tok[64];
	size_t n;

	snprintf(tok, sizeof(tok), "%s=", key);
	n = strlen(tok);
	for (const char *p = job_ptr->admin_comment; p && (p = strstr(p, tok)); p += n)
		if (p == job_ptr->admin_comment || isspace((unsigned char) p[-1]))
			return strtol(p + n, NULL, 10);
	return -1;
}

extern void dls_admin_comment_set(job_record_t *job_ptr, const char *key, long value)
{
	char tok[64], *out = NULL;
	size_t n;
	const char *p = job_ptr->admin_comment;

	snprintf(tok, sizeof(tok), "%s=", key);
	n = strlen(tok);
	/* Every other word kept, in order; this one (wherever it was) at the end. */
	while (p && *p) {
		const char *e;

		while (isspace((unsigned char) *p))
			p++;
		if (!*p)
			break;
		for (e = p; *e && !isspace((unsigned char) *e); e++)
			;
		if (strncmp(p, tok, n))
			xstrfmtcat(out, "%s%.*s", out ? " " : "", (int) (e - p), p);
		p = e;
	}
	xstrfmtcat(out, "%s%s%ld", out ? " " : "", tok, value);
	xfree(job_ptr->admin_comment);
	job_ptr->admin_comment = out;
}

extern bool dls_admin_comment_once(job_record_t *job_ptr, const char *key, long value)
{
	char tok[64];
	size_t n;

	snprintf(tok, sizeof(tok), "%s=", key);
	n = strlen(tok);
	/* A token begins the comment or follows a space. */
	for (const char *p = job_ptr->admin_comment; p && (p = strstr(p, tok)); p += n)
		if (p == job_ptr->admin_comment || isspace((unsigned char) p[-1]))
			return false;
	if (job_ptr->admin_comment && job_ptr->admin_comment[0])
		xstrfmtcat(job_ptr->admin_comment, " %s%ld", tok, value);
	else {
		xfree(job_ptr->admin_comment);
		job_ptr->admin_comment = xstrdup_printf("%s%ld", tok, value);
	}
	return true;
}

extern bool dls_job_held_by_dlsched(job_record_t *job_ptr)
{
	return job_ptr->priority == 0 && job_ptr->state_reason == WAIT_HELD &&
		dls_admin_comment_value(job_ptr, DLSCHED_WORD_HELD) >= 0 &&
		dls_admin_comment_value(job_ptr, DLSCHED_WORD_RELEASED) < 0;
}

/*
 * The pending jobs dlsched schedules at all: not held (but for the ones
 * sched/dlsched held for their deadline, judged again), not a hetjob or an
 * array's meta record (left to Slurm), not still completing a previous run.
 * Reads the job only. Locks: job read.
 */
static bool _eligible_pending(job_record_t *job_ptr, time_t now)
{
	/* A requeued job stays COMPLETING until its previous run has ended on every node. */
	if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr))
		return false;
	/* Held for its deadline by sched/dlsched: judged again every cycle (released when feasible). */
	if (dls_job_held_by_dlsched(job_ptr))
		return !job_ptr->het_job_id && !job_ptr->array_recs;
	if (job_ptr->priority == 0)
		return false;
	if (job_ptr->het_job_id || job_ptr->array_recs)
		return false; /* left to Slurm: hetjobs, array meta records */
	if (job_ptr->details && job_ptr->details->begin_time > now)
		return false;
	if (job_ptr->state_reason == WAIT_DEPENDENCY || job_ptr->state_reason == WAIT_HELD ||
	    job_ptr->state_reason == WAIT_HELD_USER)
		return false;
	return true;
}

extern const char *dls_job_not_runnable(job_record_t *job_ptr, time_t now)
{
	part_record_t *part_ptr = job_ptr->part_ptr;

	if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr) || IS_JOB_REVOKED(job_ptr))
		return "not pending";
	if (job_ptr->priority == 0)
		return "held";
	if (job_ptr->het_job_id || job_ptr->array_recs)
		return "hetjob or job array";
	/* job_limits_check() aborts slurmctld on either. */
	if (!job_ptr->details || !part_ptr)
		return "no job details or partition";
	/*
	 * A requeued job whose previous run is still being cleaned up (_job_runnable_test1).
	 * Only a job that ran before (restart_cnt counts its requeues) can have steps left: the
	 * count takes the list's lock, for every pending job each cycle.
	 */
	if (dls_select_job_cleaning(job_ptr) || job_ptr->details->prolog_running ||
	    (job_ptr->restart_cnt && job_ptr->step_list && list_count(job_ptr->step_list)))
		return "previous run still cleaning up";
	/*
	 * Dependencies (pending or never satisfiable), begin time, holds,
	 * FAIL_ACCOUNT, FAIL_QOS, WAIT_RESV_DELETED, a reservation not active
	 * yet, job array task limits.
	 */
	if (!job_independent(job_ptr))
		return dls_job_reason_string(job_ptr->state_reason);
	if (!(part_ptr->state_up & PARTITION_SCHED) || !part_ptr->node_bitmap)
		return "partition not scheduling (down, inactive or without nodes)";
	/* Partition limits and state, memory per node: as the main scheduler checks. */
	if (job_limits_check(&job_ptr, false) != WAIT_NO_REASON)
		return "partition limits";
	if (license_job_test(job_ptr, now, true) != SLURM_SUCCESS)
		return "licenses";
	/* acct_policy_job_runnable_pre_select() takes the assoc_mgr locks it needs. */
	if (!dls_acct_policy_runnable_state(job_ptr) && !acct_policy_job_runnable_pre_select(job_ptr, false))
		return "accounting policy limits";
	if (assoc_mgr_validate_assoc_id(acct_db_conn, job_ptr->assoc_id, accounting_enforce))
		return "invalid account";
	return NULL;
}

/*
 * The job's time limit in seconds (0: none), which bounds the runtime its
 * user claims: its own, else (none given) the one Slurm gives it when it
 * starts (select_nodes()): the partition's DefaultTime, else its MaxTime.
 * Locks: job and partition read.
 */
static double _time_limit_s(job_record_t *job_ptr)
{
	part_record_t *part_ptr = job_ptr->part_ptr;
	uint32_t limit = job_ptr->time_limit;

	if (limit == NO_VAL && part_ptr)
		limit = part_ptr->default_time != NO_VAL ? part_ptr->default_time : part_ptr->max_time;
	if (limit == NO_VAL || limit == INFINITE)
		return 0;
	return 60.0 * limit;
}

static char *_dup_str(const char *s)
{
	return xstrdup(s ? s : "");
}

/*
 * The partitions a pending job may run in, as the core reads them: "a,b" for a job submitted to
 * several (sbatch -p a,b: Slurm's schedulers try each, and part_ptr is only the first or the last
 * tried), else its one partition. Locks: job and partition read.
 */
static char *_job_partitions(job_record_t *job_ptr)
{
	list_itr_t *it;
	part_record_t *part_ptr;
	char *list = NULL;

	if (!job_ptr->part_ptr_list || list_count(job_ptr->part_ptr_list) < 2 || IS_JOB_RUNNING(job_ptr))
		return _dup_str(job_ptr->part_ptr ? job_ptr->part_ptr->name : "");
	it = list_iterator_create(job_ptr->part_ptr_list);
	while ((part_ptr = list_next(it)))
		if (part_ptr->name)
			xstrfmtcat(list, "%s%s", list ? "," : "", part_ptr->name);
	list_iterator_destroy(it);
	return list ? list : _dup_str("");
}

/* Every partition of the node, "a,b" (a job of any of them may use it). Locks: node and
 * partition read. */
static char *_node_partitions(node_record_t *node_ptr)
{
	char *list = NULL;

	for (int i = 0; i < node_ptr->part_cnt; i++) {
		part_record_t *part = node_ptr->part_pptr[i];

		if (part && part->name)
			xstrfmtcat(list, "%s%s", list ? "," : "", part->name);
	}
	return list ? list : _dup_str("");
}

static void _fill_job(dlsched_job_view_t *v, job_record_t *job_ptr, int gpus, time_t now)
{
	dlsched_job_metadata_t m;
	double epochs, epoch_time;
	int gmin, gmax;

	memset(v, 0, sizeof(*v));
	v->struct_size = sizeof(*v);
	v->job_id = job_ptr->job_id;
	if (job_ptr->user_name)
		v->user = _dup_str(job_ptr->user_name);
	else
		v->user = xstrdup_printf("uid%u", job_ptr->user_id);
	v->partition = _job_partitions(job_ptr);
	v->qos = _dup_str(job_ptr->qos_ptr ? job_ptr->qos_ptr->name : "");
	/* The account it is charged to (Slurm fills in the user's default at submission). */
	v->account = _dup_str(job_ptr->account);
	/* One reading: the comment's words, sbatch --dl-model/--dl-epochs/--dl-elastic over them. */
	(void) dls_job_metadata(job_ptr, &m);
	epochs = m.epochs;
	epoch_time = m.epoch_time_1gpu;
	gmin = m.gpus_min;
	gmax = m.gpus_max;
	v->model = m.model[0] ? xstrdup(m.model) : NULL;
	v->submit_time = job_ptr->details ? (double) job_ptr->details->submit_time : (double) now;
	v->gpus_requested = gpus;
	/* GPUs per job or per task (--gpus, --gpus-per-task): Slurm refuses a per-node count beside
	 * them, so sched/dlsched cannot give such a job another size: rigid for the policies (else they
	 * plan GPUs for a resize that never happens). */
	if (!dls_job_gpus_per_node(job_ptr))
		gmin = gmax = 0;
	/* Elastic range: only where it contains the current size (else rigid). */
	if (gmin > 0 && gmin <= gpus)
		v->gpus_min = gmin;
	if (gmax >= gpus)
		v->gpus_max = gmax;
	/* An elastic job resized by dlsched asks for its new size in Slurm; what the user asked for
	 * stays in the admin comment (dl_requested=, written at its first resize): that is its size
	 * for the policies (the surplus above it is what they give and take). */
	if (v->gpus_min > 0 && v->gpus_max > 0) {
		long asked = dls_admin_comment_value(job_ptr, DLSCHED_WORD_REQUESTED);

		if (asked >= v->gpus_min && asked <= v->gpus_max)
			v->gpus_requested = (int) asked;
	}
	v->time_limit = _time_limit_s(job_ptr);
	/* --time-min (minutes): what a job known by its time limit alone runs at least. */
	if (job_ptr->time_min && job_ptr->time_min != NO_VAL && job_ptr->time_min != INFINITE)
		v->time_min = 60.0 * job_ptr->time_min;
	/*
	 * Unknown values stay 0: the library takes a known model's epoch time
	 * from its profile (or the profile DB's history), and otherwise
	 * estimates the run time by the time limit, as Slurm's backfill does.
	 */
	v->epochs_total = epochs;
	v->epoch_time_1gpu = epoch_time;
	/* Slurm's --deadline, else the comment word (as dls_job_deadline, without a second reading). */
	v->deadline = job_ptr->deadline && job_ptr->deadline != NO_VAL ? (double) job_ptr->deadline : m.deadline;
	v->restarts = job_ptr->restart_cnt;
	v->requeueable = dls_job_requeueable(job_ptr) ? 1 : 0;
	/* An administrator's priority (scontrol update Priority=, sbatch --priority) stays. */
	if (job_ptr->direct_set_prio && job_ptr->priority > 0)
		v->admin_priority = job_ptr->priority;
	if (job_ptr->details)
		v->nice = (int) ((int64_t) job_ptr->details->nice - NICE_OFFSET);
	v->last_stop_time = -1;
	v->epochs_done = -1; /* estimated by the core from the seconds run */
}

/*
 * Whether a node is up for the plan: available to Slurm, or only not responding or unknown yet
 * (not DOWN, drained, failed or powered down). After a slurmctld restart every node is out of
 * Slurm's available nodes until its slurmd registers again (seconds), and one that misses a ping
 * stays out until SlurmdTimeout marks it DOWN: Slurm keeps their jobs running meanwhile, and so must the plan (a preemptive
 * ordering requeued the running jobs of nodes it saw down: every job, at the first cycle after a
 * restart). Starting a job there fails in Slurm's select and waits a cycle.
 */
static int _node_up(node_record_t *node_ptr, int i)
{
	if (avail_node_bitmap && bit_test(avail_node_bitmap, i))
		return 1;
	return !IS_NODE_DOWN(node_ptr) && !IS_NODE_DRAIN(node_ptr) && !IS_NODE_FAIL(node_ptr) &&
		!IS_NODE_FUTURE(node_ptr) && !IS_NODE_POWERED_DOWN(node_ptr);
}

/*
 * An account association's share of the cluster, as Slurm's classic fair-share normalises it: at
 * each level from the account up to root, its shares over the shares of every child of its parent
 * (accounts and users alike, as sshare's NormShares), multiplied down the tree; a level with
 * Fairshare=parent counts as its parent's. Slurm computes this itself (usage->shares_norm) only
 * under priority/multifactor, so the glue does it under any PriorityType. Locks: assoc read.
 */
static double _assoc_norm_shares(slurmdb_assoc_rec_t *acct_assoc)
{
	double norm = 1.0;

	for (slurmdb_assoc_rec_t *a = acct_assoc; a && a->usage && a->usage->parent_assoc_ptr;
	     a = a->usage->parent_assoc_ptr) {
		slurmdb_assoc_rec_t *parent = a->usage->parent_assoc_ptr, *sib;
		list_itr_t *it;
		double level = 0;

		if (a->shares_raw == SLURMDB_FS_USE_PARENT)
			continue;
		it = list_iterator_create(assoc_mgr_assoc_list);
		while ((sib = list_next(it)))
			if (sib->usage && sib->usage->parent_assoc_ptr == parent &&
			    sib->shares_raw != SLURMDB_FS_USE_PARENT)
				level += sib->shares_raw;
		list_iterator_destroy(it);
		if (level <= 0)
			return 0;
		norm *= a->shares_raw / level;
	}
	return norm;
}

/*
 * The accounts of the view's jobs (FairnessPolicy=), from Slurm's associations: each one's raw
 * shares (sacctmgr Fairshare=), its decayed usage (usage_raw, in TRES billing seconds: what
 * priority/multifactor's fair-share reads; it stays 0 under priority/basic, which records none),
 * and its guaranteed GPUs, its normalised shares (_assoc_norm_shares) of the view's training GPUs
 * that are up. An account without an association (accounting not enforced) is left out: no quota,
 * no shares. GrpTRES and the other limits stay Slurm's to enforce. Takes the assoc read lock (after
 * slurmctld's locks, as Slurm's own schedulers do); no I/O. Locks: job and node read (the caller's).
 */
static void _fill_accounts(dls_snapshot_t *snap)
{
	assoc_mgr_lock_t locks = {.assoc = READ_LOCK};
	slurmdb_assoc_rec_t *assoc;
	list_itr_t *it;
	double gpus = 0;
	size_t n = 0, names_cnt = 0;
	/* The accounts the jobs name, once each: teams are few, jobs and associations many. */
	const char **names = xcalloc(snap->view.job_count ? snap->view.job_count : 1, sizeof(char *));

	for (size_t j = 0; j < snap->view.job_count; j++) {
		const char *acct = snap->jobs[j].account;
		size_t k = names_cnt;

		if (!acct || !acct[0] || (names_cnt && !strcmp(names[names_cnt - 1], acct)))
			continue;
		for (k = 0; k < names_cnt && strcmp(names[k], acct); k++)
			;
		if (k == names_cnt)
			names[names_cnt++] = acct;
	}
	for (size_t i = 0; i < snap->view.node_count; i++)
		if (snap->nodes[i].kind == DLSCHED_TRAINING && snap->nodes[i].up)
			gpus += snap->nodes[i].gpus_total;
	snap->accounts = xcalloc(names_cnt ? names_cnt : 1, sizeof(dlsched_account_view_t));
	assoc_mgr_lock(&locks);
	it = names_cnt && assoc_mgr_assoc_list ? list_iterator_create(assoc_mgr_assoc_list) : NULL;
	while (it && (assoc = list_next(it)) && n < names_cnt) {
		dlsched_account_view_t *a;
		size_t k;

		/* An account's own association has no user; root is no team. */
		if (assoc->user || !assoc->acct || !assoc->usage || !assoc->usage->parent_assoc_ptr)
			continue;
		for (k = 0; k < names_cnt && xstrcmp(names[k], assoc->acct); k++)
			;
		if (k == names_cnt)
			continue;
		names[k] = NULL; /* once */
		a = &snap->accounts[n++];
		a->struct_size = sizeof(*a);
		a->name = xstrdup(assoc->acct);
		a->shares = assoc->shares_raw == SLURMDB_FS_USE_PARENT ? 0 : assoc->shares_raw;
		a->quota_gpus = gpus * _assoc_norm_shares(assoc);
		a->usage_gpu_s = assoc->usage->usage_raw > 0 ? (double) assoc->usage->usage_raw : 0;
	}
	if (it)
		list_iterator_destroy(it);
	assoc_mgr_unlock(&locks);
	xfree(names);
	snap->view.accounts = snap->accounts;
	snap->view.account_count = n;
}

extern dls_snapshot_t *dls_snapshot_take(time_t now, uint64_t cycle, bool runnable_only)
{
	dls_snapshot_t *snap = xmalloc(sizeof(*snap));
	list_itr_t *it;
	job_record_t *job_ptr;
	node_record_t *node_ptr;
	size_t nj = 0, ns = 0, share_cap;
	int i;

	snap->nodes = xcalloc(node_record_count ? node_record_count : 1, sizeof(dlsched_node_view_t));
	/*
	 * View index = Slurm's node index. Slots without a node (dynamic nodes
	 * not created yet, or deleted; MaxNodeCount=), which next_node() skips,
	 * stay in the view as placeholders: no GPUs, not up.
	 */
	for (i = 0; i < node_record_count; i++)
		dls_node_placeholder(&snap->nodes[i]);
	for (i = 0; (node_ptr = next_node(&i)); i++) {
		dlsched_node_view_t *n = &snap->nodes[i];
		int total, used;

		dls_node_gpus(node_ptr, &total, &used);
		n->name = xstrdup(node_ptr->name);
		n->gpus_total = total;
		n->gpus_free = total - used;
		n->gpu_type = dls_node_gpu_type(node_ptr); /* gp-placement ranks nodes by it */
		n->partition = _node_partitions(node_ptr);
		n->kind = DLSCHED_TRAINING;
		if (dls_node_in_inference(node_ptr)) {
			/* Capacity loaning: its partition is the inference one (a training job may use
			 * it only while it is lent), whatever other partitions list it. */
			xfree(n->partition);
			n->partition = xstrdup(dls_inference_partition());
			n->kind = DLSCHED_INFERENCE;
			n->loanable = 1;
			n->loaned = dls_node_loaned(node_ptr->name) ? 1 : 0;
		}
		n->up = _node_up(node_ptr, i);
	}

	/* job_list is NULL until slurmctld has read its state (without slurmdbd, a thread may come
	 * first): no jobs then. */
	snap->job_cap = job_list ? list_count(job_list) : 0;
	snap->jobs = xcalloc(snap->job_cap ? snap->job_cap : 1, sizeof(dlsched_job_view_t));
	share_cap = (size_t) node_record_count * 8 + 16;
	snap->shares = xcalloc(share_cap, sizeof(dlsched_share_t));
	it = job_list ? list_iterator_create(job_list) : NULL;
	while (it && (job_ptr = list_next(it)) && nj < snap->job_cap) {
		int gpus;

		if (IS_JOB_RUNNING(job_ptr)) {
			dlsched_job_view_t *v;
			size_t k;

			if (job_ptr->het_job_id)
				continue;
			if (ns + node_record_count > share_cap) {
				share_cap = 2 * share_cap + node_record_count;
				/* Views keep pointers into shares: re-point them. */
				{
					dlsched_share_t *old = snap->shares;
					snap->shares = xcalloc(share_cap, sizeof(dlsched_share_t));
					memcpy(snap->shares, old, ns * sizeof(dlsched_share_t));
					for (size_t j = 0; j < nj; j++)
						if (snap->jobs[j].shares)
							snap->jobs[j].shares =
								snap->shares + (snap->jobs[j].shares - old);
					xfree(old);
				}
			}
			k = _job_shares(job_ptr, snap->shares + ns, share_cap - ns);
			if (!k)
				continue; /* no GPUs: not ours to schedule */
			gpus = 0;
			for (size_t s = 0; s < k; s++)
				gpus += snap->shares[ns + s].gpus;
			v = &snap->jobs[nj++];
			_fill_job(v, job_ptr, gpus, now);
			v->state = DLSCHED_RUNNING;
			/*
			 * Priorities and nice order the queue. What puts a
			 * running job ahead protects it from preemption; what
			 * puts it behind (a low admin priority, a positive
			 * nice) would make it the first victim every time it
			 * runs, which neither Slurm nor the admin meant.
			 */
			if (v->admin_priority < DLSCHED_PRIORITY_FLOOR)
				v->admin_priority = 0;
			if (v->nice > 0)
				v->nice = 0;
			v->shares = snap->shares + ns;
			v->share_count = k;
			v->gpus_allocated = gpus;
			v->start_time = (double) job_ptr->start_time;
			v->executed_s = difftime(now, job_ptr->start_time) - job_ptr->tot_sus_time;
			if (v->executed_s < 0)
				v->executed_s = 0;
			v->attained_gpu_s = v->executed_s * gpus;
			ns += k;
			snap->running++;
		} else if (runnable_only ? IS_JOB_PENDING(job_ptr) &&
					   (job_ptr->priority != 0 || dls_job_held_by_dlsched(job_ptr))
					 : _eligible_pending(job_ptr, now)) {
			const char *why;
			/* Held for its deadline by sched/dlsched: in the view to be judged again. */
			bool rejudged = dls_job_held_by_dlsched(job_ptr);

			gpus = dls_job_gpus_requested(job_ptr);
			if (gpus <= 0)
				continue; /* CPU-only job: Slurm's own order */
			if (runnable_only && !rejudged && (why = dls_job_not_runnable(job_ptr, now))) {
				/* Takes no planned GPUs; a stale dlsched priority goes. */
				if (job_ptr->priority >= DLSCHED_PRIORITY_FLOOR && !job_ptr->direct_set_prio) {
					xrecalloc(snap->left_out, snap->left_out_cnt + 1, sizeof(uint32_t));
					snap->left_out[snap->left_out_cnt++] = job_ptr->job_id;
				}
				debug3("sched/dlsched: %pJ not runnable now: %s", job_ptr, why);
				continue;
			}
			_fill_job(&snap->jobs[nj++], job_ptr, gpus, now);
			snap->pending++;
		}
	}
	if (it)
		list_iterator_destroy(it);

	snap->view.struct_size = sizeof(snap->view);
	/*
	 * The time with its fraction: the profile DB's times are sub-second, and the overhead model
	 * places a victim within its epoch and its save by them (a whole-second clock put predictions up
	 * to a second behind the request they are recorded with). Slurm's own times stay whole seconds.
	 */
	{
		struct timeval tv;

		gettimeofday(&tv, NULL);
		snap->view.now = (double) tv.tv_sec + tv.tv_usec / 1e6;
		if (snap->view.now < (double) now || snap->view.now >= (double) now + 1)
			snap->view.now = (double) now; /* `now` is not this second: keep the caller's */
	}
	snap->view.cycle = cycle;
	/* No file I/O under slurmctld's locks: the demand as last read with none held. */
	snap->view.inference_demand = dls_inference_demand_cached();
	snap->view.nodes = snap->nodes;
	snap->view.node_count = node_record_count;
	snap->view.jobs = snap->jobs;
	snap->view.job_count = nj;
	_fill_accounts(snap);
	return snap;
}

extern void dls_snapshot_free(dls_snapshot_t *snap)
{
	if (!snap)
		return;
	for (size_t i = 0; i < snap->view.node_count; i++) {
		xfree(snap->nodes[i].name);
		xfree(snap->nodes[i].gpu_type);
		xfree(snap->nodes[i].partition);
	}
	for (size_t i = 0; i < snap->view.job_count; i++) {
		xfree(snap->jobs[i].user);
		xfree(snap->jobs[i].partition);
		xfree(snap->jobs[i].qos);
		xfree(snap->jobs[i].model);
		xfree(snap->jobs[i].account);
	}
	for (size_t i = 0; i < snap->view.account_count; i++)
		xfree(snap->accounts[i].name);
	xfree(snap->accounts);
	xfree(snap->nodes);
	xfree(snap->jobs);
	xfree(snap->shares);
	xfree(snap->left_out);
	xfree(snap);
}
