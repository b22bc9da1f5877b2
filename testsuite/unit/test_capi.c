/* The C ABI from plain C: a scheduler built from a dlsched.conf decides a small cluster; bad input is an
 * error code with a message, never a crash. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check_main.h"
#include "dlsched/api.h"

static char conf_path[256];

static void write_conf(const char* text)
{
	FILE* f;
	snprintf(conf_path, sizeof(conf_path), "/tmp/dlsched-capi-%d.conf", (int)getpid());
	f = fopen(conf_path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\nModelProfiles=%s\n", text, DLSCHED_PROFILES);
	fclose(f);
}

static dlsched_node_view_t node(const char* name, int total, int free_gpus)
{
	dlsched_node_view_t n;
	memset(&n, 0, sizeof(n));
	n.struct_size = sizeof(n);
	n.name = name;
	n.gpus_total = total;
	n.gpus_free = free_gpus;
	n.partition = "train";
	n.up = 1;
	return n;
}

static dlsched_job_view_t pending(uint32_t id, double submit, int gpus)
{
	dlsched_job_view_t j;
	memset(&j, 0, sizeof(j));
	j.struct_size = sizeof(j);
	j.job_id = id;
	j.user = "alice";
	j.model = "cifar10";
	j.submit_time = submit;
	j.gpus_requested = gpus;
	j.epochs_total = 10;
	j.epoch_time_1gpu = 60;
	j.time_limit = 1000; /* claims count down to 100 s (HintTrustFactor=10) */
	j.last_stop_time = -1;
	j.requeueable = 1;
	return j;
}

START_TEST(fifo_starts_in_order_with_head_of_line_blocking)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_node_view_t nodes[2];
	dlsched_job_view_t jobs[3];
	dlsched_cluster_view_t view;
	dlsched_decisions_t* d = NULL;
	dlsched_action_t a;
	const uint32_t* order;
	size_t count = 0;
	char desc[256];

	write_conf("Policy=fifo");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_describe(s, desc, sizeof(desc)), DLSCHED_OK);
	ck_assert_str_eq(desc,
			 "preset=fifo ordering=fifo allocation=rigid-strict placement=pack "
			 "admission=admit-all preemption=none loaning=none fairness=none");

	nodes[0] = node("n1", 4, 4);
	nodes[1] = node("n2", 4, 4);
	jobs[0] = pending(11, 0, 2);
	jobs[1] = pending(12, 1, 4);
	jobs[2] = pending(13, 2, 4);
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.now = 10;
	view.nodes = nodes;
	view.node_count = 2;
	view.jobs = jobs;
	view.job_count = 3;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);

	/* 11 (2 GPUs) best-fits on n1, 12 (4) takes n2, 13 (4) waits: start, start, priority. */
	ck_assert_uint_eq(dlsched_decisions_count(d), 3);
	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	ck_assert_int_eq(dlsched_decisions_get(d, 0, &a, &err), DLSCHED_OK);
	ck_assert_int_eq(a.kind, DLSCHED_START);
	ck_assert_uint_eq(a.job_id, 11);
	ck_assert_int_eq(a.gpus, 2);
	ck_assert_uint_eq(a.share_count, 1);
	ck_assert_uint_eq(a.shares[0].node_index, 0);
	ck_assert_int_eq(dlsched_decisions_get(d, 1, &a, &err), DLSCHED_OK);
	ck_assert_int_eq(a.kind, DLSCHED_START);
	ck_assert_uint_eq(a.job_id, 12);
	ck_assert_uint_eq(a.shares[0].node_index, 1);
	ck_assert_int_eq(a.shares[0].gpus, 4);
	ck_assert_int_eq(dlsched_decisions_get(d, 2, &a, &err), DLSCHED_OK);
	ck_assert_int_eq(a.kind, DLSCHED_SET_PRIORITY);
	ck_assert_uint_eq(a.job_id, 13);
	ck_assert_int_eq(dlsched_decisions_get(d, 3, &a, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "out of range"));
	order = dlsched_decisions_order(d, &count);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(order[0], 13);
	dlsched_decisions_free(d);
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

START_TEST(bad_views_are_errors)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_node_view_t nodes[1];
	dlsched_job_view_t jobs[1];
	dlsched_share_t share = {5, 2};
	dlsched_cluster_view_t view;
	dlsched_decisions_t* d = NULL;

	ck_assert_int_eq(dlsched_scheduler_create(NULL, &s, &err), DLSCHED_OK);
	nodes[0] = node("n1", 4, 2);
	jobs[0] = pending(7, 0, 2);
	jobs[0].state = DLSCHED_RUNNING;
	jobs[0].shares = &share;
	jobs[0].share_count = 1;
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.nodes = nodes;
	view.node_count = 1;
	view.jobs = jobs;
	view.job_count = 1;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_str_eq(err.message, "job 7: share 0 names node index 5 of 1 or non-positive GPUs");
	ck_assert_ptr_null(d);

	/* Older than API version 5's view: refused. Version 5's (no epoch samples): accepted. */
	view.struct_size = DLSCHED_CLUSTER_VIEW_V5_SIZE - 8;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "struct_size"));
	ck_assert_ptr_nonnull(strstr(err.message, "version 5"));
	view.struct_size = DLSCHED_CLUSTER_VIEW_V5_SIZE;
	view.epoch_samples = (const dlsched_epoch_sample_t*)8; /* beyond a version 5 view: never read */
	view.epoch_sample_count = 3;
	share.node_index = 0;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	dlsched_decisions_free(d);
	d = NULL;
	/* A version 6 view with a NULL sample array of non-zero length: refused, naming it. */
	view.struct_size = sizeof(view);
	view.epoch_samples = NULL;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "epoch samples"));
	view.epoch_sample_count = 0;
	share.node_index = 5;

	view.struct_size = sizeof(view);
	share.node_index = 0;
	jobs[0].gpus_min = 4; /* min above requested */
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "gpus_min"));

	/* A NaN or infinite number: an error naming the field, never a sort on NaN. */
	jobs[0].gpus_min = 0;
	jobs[0].epoch_time_1gpu = 0.0 / 0.0;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_str_eq(err.message, "job 7: epoch_time_1gpu is not a finite number");
	jobs[0].epoch_time_1gpu = 60;
	jobs[0].epochs_total = 1.0 / 0.0;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_str_eq(err.message, "job 7: epochs_total is not a finite number");
	jobs[0].epochs_total = 10;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	dlsched_decisions_free(d);
	dlsched_scheduler_destroy(s);
}
END_TEST

/* A caller built against a newer API passes larger structs: the arrays are read at its stride
 * (the elements' struct_size), not this library's; one whose elements disagree is refused. A caller
 * built against API version 1 gets an action struct of its size, nothing written past it. */
typedef struct {
	dlsched_node_view_t v;
	char newer[40];
} newer_node_t;
typedef struct {
	dlsched_job_view_t v;
	double newer[5];
} newer_job_t;
typedef struct {
	size_t struct_size;
	int kind;
	uint32_t job_id;
	uint32_t node_index;
	int gpus;
	const dlsched_share_t* shares;
	size_t share_count;
	double priority;
	const char* reason;
	char guard[32]; /* where version 2 would start: must stay as it was */
} action_v1_t;

START_TEST(views_of_other_api_versions)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	newer_node_t nodes[2];
	newer_job_t jobs[3];
	dlsched_cluster_view_t view;
	dlsched_decisions_t* d = NULL;
	action_v1_t a1;

	write_conf("Policy=fifo");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	memset(nodes, 0x5a, sizeof(nodes));
	memset(jobs, 0x5a, sizeof(jobs));
	nodes[0].v = node("n1", 4, 4);
	nodes[1].v = node("n2", 4, 4);
	jobs[0].v = pending(11, 0, 2);
	jobs[1].v = pending(12, 1, 4);
	jobs[2].v = pending(13, 2, 4);
	for (int i = 0; i < 2; i++)
		nodes[i].v.struct_size = sizeof(newer_node_t);
	for (int i = 0; i < 3; i++)
		jobs[i].v.struct_size = sizeof(newer_job_t);
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.now = 10;
	view.nodes = &nodes[0].v;
	view.node_count = 2;
	view.jobs = &jobs[0].v;
	view.job_count = 3;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	/* As with this API's structs: 11 on n1, 12 on n2, 13 waits. */
	ck_assert_uint_eq(dlsched_decisions_count(d), 3);
	memset(&a1, 0x7f, sizeof(a1));
	a1.struct_size = offsetof(action_v1_t, guard);
	ck_assert_int_eq(dlsched_decisions_get(d, 1, (dlsched_action_t*)&a1, &err), DLSCHED_OK);
	ck_assert_int_eq(a1.kind, DLSCHED_START);
	ck_assert_uint_eq(a1.job_id, 12);
	ck_assert_uint_eq(a1.shares[0].node_index, 1);
	for (size_t k = 0; k < sizeof(a1.guard); k++)
		ck_assert_int_eq(a1.guard[k], 0x7f);
	a1.struct_size = offsetof(action_v1_t, reason);
	ck_assert_int_eq(dlsched_decisions_get(d, 1, (dlsched_action_t*)&a1, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "API version 1"));
	dlsched_decisions_free(d);
	/* Elements that disagree on their size are refused, naming the job. */
	jobs[2].v.struct_size = sizeof(dlsched_job_view_t);
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "job 13"));
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

START_TEST(bad_configuration_is_an_error_naming_the_file)
{
	dlsched_scheduler_t* s = (dlsched_scheduler_t*)0x1;
	dlsched_error_t err;

	ck_assert_int_eq(dlsched_scheduler_create("/nonexistent/dlsched.conf", &s, &err), DLSCHED_ENOTFOUND);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent/dlsched.conf"));

	write_conf("OrderingPolcy=fifo");
	ck_assert_int_ne(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_ptr_nonnull(
		strstr(err.message, ":1: unknown key 'OrderingPolcy' (did you mean 'OrderingPolicy'?)"));

	write_conf("Policy=nope");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.message, "unknown scheduling policy 'nope'"));
	unlink(conf_path);
}
END_TEST

/* The typed getters read the value a scheduler has (a safety one from a file whose Policy= is broken
 * included) and, without a scheduler, the key table's default: hosts restate no default. */
START_TEST(typed_config_getters_read_values_and_defaults)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	double d = -1;
	long l = -1;
	int b = -1;
	char buf[64];

	/* No scheduler: the defaults of common/config/keys.cpp. */
	ck_assert_int_eq(dlsched_config_get_double(NULL, "SchedInterval", &d), DLSCHED_OK);
	ck_assert_double_eq(d, 60);
	ck_assert_int_eq(dlsched_config_get_double(NULL, "PreemptGrace", &d), DLSCHED_OK);
	ck_assert_double_eq(d, 600);
	ck_assert_int_eq(dlsched_config_get_double(NULL, "ReclaimTimeout", &d), DLSCHED_OK);
	ck_assert_double_eq(d, 300);
	ck_assert_int_eq(dlsched_config_get_int(NULL, "Seed", &l), DLSCHED_OK);
	ck_assert_int_eq(l, 1);
	ck_assert_int_eq(dlsched_config_get_double(NULL, "Seed", &d),
			 DLSCHED_OK); /* an integer as a number */
	ck_assert_double_eq(d, 1);
	ck_assert_int_eq(dlsched_config_get_bool(NULL, "SchedOnEvents", &b), DLSCHED_OK);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(dlsched_config_get_text(NULL, "CheckpointSignal", buf, sizeof(buf)), DLSCHED_OK);
	ck_assert_str_eq(buf, "USR1");
	/* Errors: unknown key, wrong type, no room, NULL out. */
	ck_assert_int_eq(dlsched_config_get_double(NULL, "NoSuchKey", &d), DLSCHED_ENOTFOUND);
	ck_assert_int_eq(dlsched_config_get_int(NULL, "SchedInterval", &l), DLSCHED_EINVAL);
	ck_assert_int_eq(dlsched_config_get_bool(NULL, "Policy", &b), DLSCHED_EINVAL);
	ck_assert_int_eq(dlsched_config_get_double(NULL, "ProfileDB", &d), DLSCHED_EINVAL);
	ck_assert_int_eq(dlsched_config_get_text(NULL, "CheckpointSignal", buf, 2), DLSCHED_EINVAL);
	ck_assert_int_eq(dlsched_config_get_double(NULL, "SchedInterval", NULL), DLSCHED_EINVAL);

	/* A safety scheduler of a file whose Policy= does not load: its safety keys as written. */
	write_conf("Policy=pickymann\nSchedInterval=7\nPreemptGrace=45\nCheckpointSignal=USR2");
	ck_assert_int_ne(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_create_safety(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_config_get_double(s, "SchedInterval", &d), DLSCHED_OK);
	ck_assert_double_eq(d, 7);
	ck_assert_int_eq(dlsched_config_get_double(s, "PreemptGrace", &d), DLSCHED_OK);
	ck_assert_double_eq(d, 45);
	ck_assert_int_eq(dlsched_config_get_double(s, "ReclaimTimeout", &d), DLSCHED_OK);
	ck_assert_double_eq(d, 300);
	ck_assert_int_eq(dlsched_config_get_text(s, "CheckpointSignal", buf, sizeof(buf)), DLSCHED_OK);
	ck_assert_str_eq(buf, "USR2");
	dlsched_scheduler_destroy(s);

	/* A full scheduler. */
	write_conf("Policy=fifo\nSchedInterval=12\nSeed=9\nSchedOnEvents=no");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_config_get_double(s, "SchedInterval", &d), DLSCHED_OK);
	ck_assert_double_eq(d, 12);
	ck_assert_int_eq(dlsched_config_get_int(s, "Seed", &l), DLSCHED_OK);
	ck_assert_int_eq(l, 9);
	ck_assert_int_eq(dlsched_config_get_bool(s, "SchedOnEvents", &b), DLSCHED_OK);
	ck_assert_int_eq(b, 0);
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

/* What the safety rules follow while dlsched.conf does not load (a typo in Policy=): its ProfileDB=,
 * PreemptGrace= and InferencePartition= as written; checkpoint reports are read from that DB; the
 * object never decides. A missing file gives the defaults. */
START_TEST(safety_settings_of_a_file_that_does_not_load)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_cluster_view_t view;
	dlsched_decisions_t* d = NULL;
	char buf[512], db_path[256], text[512];
	double at = 0;

	snprintf(db_path, sizeof(db_path), "/tmp/dlsched-capi-safety-%d.db", (int)getpid());
	unlink(db_path);
	snprintf(text, sizeof(text),
		 "Policy=pickymann\nProfileDB=%s\nPreemptGrace=45\nInferencePartition=inf\nReclaimTimeout=-1",
		 db_path);
	write_conf(text);
	ck_assert_int_ne(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_create_safety(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_is_safety(s), 1);
	ck_assert_int_eq(dlsched_scheduler_config(s, "PreemptGrace", buf, sizeof(buf)), DLSCHED_OK);
	ck_assert_str_eq(buf, "45");
	ck_assert_int_eq(dlsched_scheduler_config(s, "InferencePartition", buf, sizeof(buf)), DLSCHED_OK);
	ck_assert_str_eq(buf, "inf");
	ck_assert_int_eq(dlsched_scheduler_config(s, "ProfileDB", buf, sizeof(buf)), DLSCHED_OK);
	ck_assert_str_eq(buf, db_path);
	ck_assert_int_eq(dlsched_scheduler_describe(s, buf, sizeof(buf)), DLSCHED_OK);
	ck_assert_ptr_nonnull(strstr(buf, "safety settings only"));
	ck_assert_int_eq(dlsched_scheduler_notes(s, buf, sizeof(buf)), DLSCHED_OK);
	/* Policy= is not a safety key (not read); a safety key in error is named. */
	ck_assert_ptr_null(strstr(buf, ":1:"));
	ck_assert_ptr_nonnull(strstr(buf, ":5: ReclaimTimeout"));
	/* Preemption rows go to its ProfileDB=, as a full scheduler's would. */
	ck_assert_int_eq(dlsched_scheduler_record_preemption(s, 5, 1000, 45, 2, 12, 30, "test", &err),
			 DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_checkpoint_since(s, 5, 1000, 1020, &at), DLSCHED_ENOTFOUND);
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "never decides"));
	dlsched_scheduler_destroy(s);

	ck_assert_int_eq(dlsched_scheduler_create_safety("/nonexistent/dlsched.conf", &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_config(s, "PreemptGrace", buf, sizeof(buf)), DLSCHED_OK);
	ck_assert_str_eq(buf, "600");
	dlsched_scheduler_destroy(s);
	/* A scheduler that loads is not a safety-only one. */
	write_conf("Policy=pickyman");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_is_safety(s), 0);
	dlsched_scheduler_destroy(s);
	unlink(db_path);
	unlink(conf_path);
}
END_TEST

/* Notes: nothing to say for a heuristic; a word when experience cannot be recorded. A learned
 * policy in a library without the models (this test links libdlsched only) is an unknown name that
 * says where learned policies live. */
START_TEST(notes_and_learned_policies_without_models)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_experience_stats_t x;
	char notes[256];

	write_conf("Policy=srtf");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_notes(s, notes, sizeof(notes)), DLSCHED_OK);
	ck_assert_str_eq(notes, "");
	memset(&x, 0, sizeof(x));
	x.struct_size = sizeof(x);
	ck_assert_int_eq(dlsched_scheduler_experience_stats(s, &x), DLSCHED_OK);
	ck_assert_int_eq(x.enabled, 0);
	x.struct_size = sizeof(x) - 1;
	ck_assert_int_eq(dlsched_scheduler_experience_stats(s, &x), DLSCHED_EINVAL);
	ck_assert_int_eq(dlsched_scheduler_notes(NULL, notes, sizeof(notes)), DLSCHED_EINVAL);
	dlsched_scheduler_destroy(s);

	write_conf("Policy=srtf\nRecordExperience=yes");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_notes(s, notes, sizeof(notes)), DLSCHED_OK);
	ck_assert_str_eq(notes,
			 "experience: RecordExperience=yes but ProfileDB= is empty: nothing is recorded");
	dlsched_scheduler_destroy(s);

	write_conf("Policy=dl2");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.message, ":1: Policy: preset 'dl2': unknown ordering policy 'dl2'"));
	ck_assert_ptr_nonnull(
		strstr(err.message, "dl2 and dual-agent are learned policies, which only sched/dlsched"));
	/* For placement alone, the learned preset is built: its placement as configured, the fallback
	 * ordering and allocation standing in, and the notes say so. */
	write_conf("Policy=dual-agent\nModelFallback=fifo");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_ENOTFOUND);
	ck_assert_int_eq(dlsched_scheduler_create_placement(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_describe(s, notes, sizeof(notes)), DLSCHED_OK);
	ck_assert_ptr_nonnull(
		strstr(notes, "preset=dual-agent ordering=fifo allocation=mckp placement=gp-placement"));
	ck_assert_int_eq(dlsched_scheduler_notes(s, notes, sizeof(notes)), DLSCHED_OK);
	ck_assert_ptr_nonnull(strstr(notes, "placement only: "));
	ck_assert_ptr_nonnull(strstr(notes, "ordering dl2 -> fifo, allocation dl2 -> mckp"));
	dlsched_scheduler_destroy(s);
	/* A placement set by its own key wins over the preset's; a heuristic preset needs no stand-in. */
	write_conf("Policy=dl2\nPlacementPolicy=pack");
	ck_assert_int_eq(dlsched_scheduler_create_placement(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_describe(s, notes, sizeof(notes)), DLSCHED_OK);
	ck_assert_ptr_nonnull(
		strstr(notes, "preset=dl2 ordering=tiresias-las allocation=mckp placement=pack"));
	dlsched_scheduler_destroy(s);
	write_conf("Policy=srtf-gp");
	ck_assert_int_eq(dlsched_scheduler_create_placement(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_notes(s, notes, sizeof(notes)), DLSCHED_OK);
	ck_assert_ptr_null(strstr(notes, "placement only"));
	dlsched_scheduler_destroy(s);
	/* A learned ordering named by its own key is replaced too; a name nobody knows is still an error. */
	write_conf("Policy=srtf\nOrderingPolicy=dl2");
	ck_assert_int_eq(dlsched_scheduler_create_placement(conf_path, &s, &err), DLSCHED_OK);
	dlsched_scheduler_destroy(s);
	write_conf("Policy=dual-agent\nPlacementPolicy=nope");
	ck_assert_int_eq(dlsched_scheduler_create_placement(conf_path, &s, &err), DLSCHED_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.message, "unknown placement policy 'nope'"));
	write_conf("Policy=srtf\nOrderingPolicy=dl2");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.message, "unknown ordering policy 'dl2'"));
	ck_assert_ptr_nonnull(strstr(err.message, "learned policies"));
	/* Other unknown names get no such hint. */
	write_conf("Policy=nope");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_ENOTFOUND);
	ck_assert_ptr_null(strstr(err.message, "learned"));
	unlink(conf_path);
}
END_TEST

START_TEST(place_prefers_the_policys_nodes)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_node_view_t nodes[3];
	dlsched_job_view_t jobs[1];
	dlsched_cluster_view_t view;
	dlsched_share_t shares[4];
	size_t n = 99;
	char desc[64];

	write_conf("Policy=fifo");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	/* pack is best fit: the 2-GPU job goes to n2 (3 free), not n1 (8) or n3 (1). */
	nodes[0] = node("n1", 8, 8);
	nodes[1] = node("n2", 8, 3);
	nodes[2] = node("n3", 8, 1);
	jobs[0] = pending(21, 0, 2);
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.nodes = nodes;
	view.node_count = 3;
	view.jobs = jobs;
	view.job_count = 1;
	ck_assert_int_eq(dlsched_scheduler_place(s, &view, 21, 0, shares, 4, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(shares[0].node_index, 1);
	ck_assert_int_eq(shares[0].gpus, 2);
	/* 9 GPUs: one whole node plus one more; 20 do not fit at all. */
	ck_assert_int_eq(dlsched_scheduler_place(s, &view, 21, 9, shares, 4, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(dlsched_scheduler_place(s, &view, 21, 20, shares, 4, &n, &err), DLSCHED_ENOTFOUND);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(dlsched_scheduler_place(s, &view, 99, 2, shares, 4, &n, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "job 99"));
	ck_assert_int_eq(dlsched_scheduler_config(s, "Policy", desc, sizeof(desc)), DLSCHED_OK);
	ck_assert_str_eq(desc, "fifo");
	ck_assert_int_eq(dlsched_scheduler_config(s, "schedinterval", desc, sizeof(desc)), DLSCHED_OK);
	ck_assert_str_eq(desc, "60");
	ck_assert_int_eq(dlsched_scheduler_config(s, "NoSuchKey", desc, sizeof(desc)), DLSCHED_ENOTFOUND);
	ck_assert_int_eq(dlsched_scheduler_config(s, "Policy", desc, 2), DLSCHED_EINVAL);
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

START_TEST(unknown_progress_is_estimated_from_run_time)
{
	/* SRTF ranks by remaining time: job 31 ran 500 s of its 600 s (10 epochs x 60 s on 1 GPU) and
	 * has 100 s left, so with its progress unknown (-1) it must still be seen as the shortest and
	 * keep running while the 2-GPU job waits; with progress 0 it would be preempted. */
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_node_view_t nodes[1];
	dlsched_job_view_t jobs[2];
	dlsched_share_t share = {0, 1};
	dlsched_cluster_view_t view;
	dlsched_decisions_t* d = NULL;
	dlsched_action_t a;
	size_t i;
	int requeued = 0;
	double resume = -1;

	write_conf("Policy=srtf");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	nodes[0] = node("n1", 1, 0);
	jobs[0] = pending(31, 0, 1);
	jobs[0].state = DLSCHED_RUNNING;
	jobs[0].shares = &share;
	jobs[0].share_count = 1;
	jobs[0].gpus_allocated = 1;
	jobs[0].start_time = 0;
	jobs[0].executed_s = 500;
	jobs[0].epochs_done = -1;
	jobs[1] = pending(32, 400, 1);
	jobs[1].epochs_total = 3; /* 180 s */
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.now = 500;
	view.nodes = nodes;
	view.node_count = 1;
	view.jobs = jobs;
	view.job_count = 2;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	for (i = 0; i < dlsched_decisions_count(d); i++) {
		ck_assert_int_eq(dlsched_decisions_get(d, i, &a, &err), DLSCHED_OK);
		requeued += a.kind == DLSCHED_REQUEUE;
	}
	ck_assert_int_eq(requeued, 0);
	dlsched_decisions_free(d);

	jobs[0].epochs_done = 0; /* 600 s left: now the 180-s job is shorter and preempts it */
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	requeued = 0;
	for (i = 0; i < dlsched_decisions_count(d); i++) {
		ck_assert_int_eq(dlsched_decisions_get(d, i, &a, &err), DLSCHED_OK);
		requeued += a.kind == DLSCHED_REQUEUE && a.job_id == 31;
		if (a.kind == DLSCHED_REQUEUE && a.job_id == 31)
			resume = a.predicted_resume;
	}
	ck_assert_int_eq(requeued, 1);
	dlsched_decisions_free(d);

	/* Slurm holds a requeued job back for cred_expire + 1 s (API version 8): the restart costs it. */
	view.requeue_delay = 121;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	requeued = 0;
	for (i = 0; i < dlsched_decisions_count(d); i++) {
		ck_assert_int_eq(dlsched_decisions_get(d, i, &a, &err), DLSCHED_OK);
		if (a.kind == DLSCHED_REQUEUE && a.job_id == 31) {
			requeued++;
			ck_assert_double_eq_tol(a.predicted_resume, resume + 121, 1e-6);
		}
	}
	ck_assert_int_eq(requeued, 1);
	dlsched_decisions_free(d);
	view.requeue_delay = -1;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "requeue_delay"));
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

START_TEST(accounts_carry_quotas_and_reclaim)
{
	/* API version 9: account b (quota 4) returns to a node account a (no quota) borrowed whole;
	 * under FairnessPolicy=quota a's job is requeued for it, the reason says so. Without the
	 * accounts (an older host) nothing is reclaimed. */
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_node_view_t nodes[1];
	dlsched_job_view_t jobs[2];
	dlsched_account_view_t accounts[2];
	dlsched_share_t share = {0, 4};
	dlsched_cluster_view_t view;
	dlsched_decisions_t* d = NULL;
	dlsched_action_t a;

	write_conf("Policy=fifo\nFairnessPolicy=quota\nQuotaReclaimTimeout=0");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	nodes[0] = node("n1", 4, 0);
	jobs[0] = pending(41, 0, 4);
	jobs[0].account = "a";
	jobs[0].epochs_total = 1000;
	jobs[0].time_limit = 0;
	jobs[0].state = DLSCHED_RUNNING;
	jobs[0].shares = &share;
	jobs[0].share_count = 1;
	jobs[0].gpus_allocated = 4;
	jobs[0].start_time = 0;
	jobs[0].executed_s = 100;
	jobs[1] = pending(42, 50, 4);
	jobs[1].account = "b";
	memset(accounts, 0, sizeof(accounts));
	for (int i = 0; i < 2; i++)
		accounts[i].struct_size = sizeof(accounts[i]);
	accounts[0].name = "a";
	accounts[0].shares = 1;
	accounts[1].name = "b";
	accounts[1].quota_gpus = 4;
	accounts[1].shares = 1;
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.now = 100;
	view.nodes = nodes;
	view.node_count = 1;
	view.jobs = jobs;
	view.job_count = 2;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	ck_assert_uint_eq(dlsched_decisions_count(d), 1);
	dlsched_decisions_free(d);

	view.accounts = accounts;
	view.account_count = 2;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	ck_assert_uint_eq(dlsched_decisions_count(d), 3);
	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	ck_assert_int_eq(dlsched_decisions_get(d, 0, &a, &err), DLSCHED_OK);
	ck_assert_int_eq(a.kind, DLSCHED_REQUEUE);
	ck_assert_uint_eq(a.job_id, 41);
	ck_assert_ptr_nonnull(strstr(a.reason, "quota reclaimed for account 'b'"));
	/* and the waiting job's reason, for squeue */
	ck_assert_int_eq(dlsched_decisions_get(d, 1, &a, &err), DLSCHED_OK);
	ck_assert_int_eq(a.kind, DLSCHED_ADMISSION);
	ck_assert_int_eq(a.admission, DLSCHED_ADMIT_WAIT);
	ck_assert_uint_eq(a.job_id, 42);
	ck_assert_ptr_nonnull(strstr(a.reason, "quota reclaim for account 'b': borrowed GPUs of job(s) 41 "));
	dlsched_decisions_free(d);

	accounts[1].quota_gpus = -1;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "account 1 ('b')"));
	dlsched_scheduler_destroy(s);

	/* QuotaFile=: its quotas replace the host's. b has none from the host, 4 from the file: the
	 * reclaim happens; a file listing b at 0 gives it none: nothing is reclaimed. */
	{
		char quota_path[256], text[600];
		FILE* f;

		snprintf(quota_path, sizeof(quota_path), "/tmp/dlsched-capi-quota-%d.csv", (int)getpid());
		snprintf(text, sizeof(text),
			 "Policy=fifo\nFairnessPolicy=quota\nQuotaReclaimTimeout=0\nQuotaFile=%s",
			 quota_path);
		accounts[1].quota_gpus = 0;
		for (int with_quota = 1; with_quota >= 0; with_quota--) {
			f = fopen(quota_path, "w");
			ck_assert_ptr_nonnull(f);
			fprintf(f, "# account,gpus\naccount,gpus\nb,%d\n", with_quota ? 4 : 0);
			fclose(f);
			write_conf(text);
			ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
			ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
			ck_assert_int_eq(dlsched_decisions_get(d, 0, &a, &err), DLSCHED_OK);
			ck_assert_int_eq(a.kind == DLSCHED_REQUEUE, with_quota);
			dlsched_decisions_free(d);
			dlsched_scheduler_destroy(s);
		}
		/* A bad line: the scheduler is not made, and the error names the file and line. */
		f = fopen(quota_path, "w");
		ck_assert_ptr_nonnull(f);
		fprintf(f, "b,4\nc;2\n");
		fclose(f);
		ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_EINVAL);
		ck_assert_msg(strstr(err.message, "QuotaFile=") && strstr(err.message, ":2: 'c;2' is not"),
			      "%s", err.message);
		unlink(quota_path);
		ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_EIO);
		ck_assert_ptr_nonnull(strstr(err.message, "cannot open the quota file"));
	}
	unlink(conf_path);
}
END_TEST

START_TEST(preemptions_are_recorded_and_read_back)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	char db_path[256], text[512], status[256];
	sqlite3* db = NULL;
	sqlite3_stmt* st = NULL;
	double at = 0;

	/* Without ProfileDB=: an I/O error that says why, and no checkpoint to find. */
	write_conf("Policy=pickyman");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_record_preemption(s, 5, 1000, 600, 2, 12, 30, "test", &err),
			 DLSCHED_EIO);
	ck_assert_ptr_nonnull(strstr(err.message, "ProfileDB"));
	ck_assert_int_eq(dlsched_scheduler_checkpoint_since(s, 5, 0, 1000, &at), DLSCHED_ENOTFOUND);
	dlsched_scheduler_destroy(s);

	snprintf(db_path, sizeof(db_path), "/tmp/dlsched-capi-%d.db", (int)getpid());
	unlink(db_path);
	snprintf(text, sizeof(text), "Policy=pickyman\nProfileDB=%s", db_path);
	write_conf(text);
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_set_cluster(s, "c"), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_record_preemption(s, 5, 1000, 600, 2, 12, 30, "for job 6", &err),
			 DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_finish_preemption(s, 5, 1000, "checkpointed", 1014, &err),
			 DLSCHED_OK);
	/* No checkpoint was reported: none found; the database reads fine. */
	ck_assert_int_eq(dlsched_scheduler_checkpoint_since(s, 5, 1000, 1020, &at), DLSCHED_ENOTFOUND);
	ck_assert_int_eq(dlsched_scheduler_profile_status(s, status, sizeof(status)), DLSCHED_OK);
	ck_assert_str_eq(status, "");
	dlsched_scheduler_destroy(s);

	ck_assert_int_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	ck_assert_int_eq(
		sqlite3_prepare_v2(db,
				   "SELECT cluster, job_id, gpus, predicted_suspend_s, outcome, requeued_s "
				   "FROM preemptions",
				   -1, &st, NULL),
		SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char*)sqlite3_column_text(st, 0), "c");
	ck_assert_int_eq(sqlite3_column_int(st, 1), 5);
	ck_assert_int_eq(sqlite3_column_int(st, 2), 2);
	ck_assert_double_eq(sqlite3_column_double(st, 3), 12);
	ck_assert_str_eq((const char*)sqlite3_column_text(st, 4), "checkpointed");
	ck_assert_double_eq(sqlite3_column_double(st, 5), 1014);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink(db_path);
	unlink(conf_path);
}
END_TEST

static dlsched_epoch_sample_t sample(const char* node, const char* model, double epoch_s, double at)
{
	dlsched_epoch_sample_t e;
	memset(&e, 0, sizeof(e));
	snprintf(e.node, sizeof(e.node), "%s", node);
	snprintf(e.model, sizeof(e.model), "%s", model);
	e.gpus = 1;
	e.nodes = 1;
	e.epochs = 3;
	e.epoch_s = epoch_s;
	e.at = at;
	return e;
}

/* gp-placement learns each machine's speed from the view's epoch samples (C ABI 6), as dlsched-sim
 * feeds it: two V100 nodes and two K80s; BERT runs at 0.494 of a V100's speed on a K80 (the bundled
 * Gavel profile). n1, a V100, is throttled to 0.3 of its speed. With no samples the catalog ranks
 * n1 and n2 equal, and the tie goes to the lowest index: n1. Samples that show n1 at 20 s an epoch
 * (6 / 0.3), n2 at 6 s (nominal) and the K80s at 12.15 s (6 / 0.494, nominal) put the job on n2. */
START_TEST(epoch_samples_teach_gp_placement)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	dlsched_node_view_t nodes[4];
	dlsched_job_view_t jobs[1];
	dlsched_cluster_view_t view;
	dlsched_epoch_sample_t samples[5];
	dlsched_share_t shares[4];
	dlsched_decisions_t* d = NULL;
	dlsched_action_t a;
	size_t n = 0, i;
	int started = -1;

	write_conf("Policy=srtf-gp");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	nodes[0] = node("n1", 1, 1);
	nodes[1] = node("n2", 1, 1);
	nodes[2] = node("n3", 1, 1);
	nodes[3] = node("n4", 1, 1);
	nodes[0].gpu_type = nodes[1].gpu_type = "v100";
	nodes[2].gpu_type = nodes[3].gpu_type = "k80";
	jobs[0] = pending(41, 0, 1);
	jobs[0].model = "bert";
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.now = 1000;
	view.nodes = nodes;
	view.node_count = 4;
	view.jobs = jobs;
	view.job_count = 1;
	ck_assert_int_eq(dlsched_scheduler_place(s, &view, 41, 0, shares, 4, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(shares[0].node_index, 0);

	samples[0] = sample("n1", "bert", 20, 100);
	samples[1] = sample("n2", "bert", 6, 110);
	samples[2] = sample("n3", "bert", 12.15, 120);
	samples[3] = sample("n4", "bert", 12.15, 130);
	samples[4] = sample("gone", "bert", 1, 140); /* a node the view does not have: ignored */
	view.epoch_samples = samples;
	view.epoch_sample_count = 5;
	ck_assert_int_eq(dlsched_scheduler_place(s, &view, 41, 0, shares, 4, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(shares[0].node_index, 1);
	/* The same in a scheduling cycle: the job starts on n2. */
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	for (i = 0; i < dlsched_decisions_count(d); i++) {
		ck_assert_int_eq(dlsched_decisions_get(d, i, &a, &err), DLSCHED_OK);
		if (a.kind == DLSCHED_START && a.job_id == 41)
			started = (int)a.shares[0].node_index;
	}
	ck_assert_int_eq(started, 1);
	dlsched_decisions_free(d);
	/* With n2 busy, the K80s (0.494 of a V100) beat n1 (0.3 of one): a V100 measured slower than a
	 * K80 is ranked below it, against the catalog. */
	nodes[1].gpus_free = 0;
	ck_assert_int_eq(dlsched_scheduler_place(s, &view, 41, 0, shares, 4, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(shares[0].node_index, 2);
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

/* The epoch reader: the profile DB's latest runs per node, one sample each (its steady epochs'
 * median), for the host to put in its views; a missing database is ENOTFOUND. */
START_TEST(epoch_reader_reads_runs_per_node)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_epoch_reader_t* r = NULL;
	dlsched_error_t err;
	dlsched_epoch_sample_t out[8];
	char db_path[256], text[512];
	sqlite3* db = NULL;
	size_t n = 99;

	snprintf(db_path, sizeof(db_path), "/tmp/dlsched-capi-epochs-%d.db", (int)getpid());
	unlink(db_path);
	ck_assert_int_eq(dlsched_epoch_reader_create(db_path, "c", &r, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_epoch_reader_read(r, out, 8, &n, &err), DLSCHED_ENOTFOUND);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_nonnull(strstr(err.message, db_path));

	/* The scheduler's first preemption row creates the database (schema 5). */
	snprintf(text, sizeof(text), "Policy=pickyman\nProfileDB=%s", db_path);
	write_conf(text);
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_record_preemption(s, 5, 1000, 600, 2, 12, 30, "x", &err),
			 DLSCHED_OK);
	dlsched_scheduler_destroy(s);
	ck_assert_int_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	/* Job 1 (bert): run 0 on n1, epochs of 30 (warm-up), 10, 14, 12 s; run 1 on n2 with its warm-up
	 * only. Job 2 (cifar10, 2 GPUs) on n3: 20 (warm-up), 8, 9 s, latest. Job 3: another cluster. */
	ck_assert_int_eq(
		sqlite3_exec(
			db,
			"INSERT INTO jobs (cluster, job_id, model, gpus, nodes) VALUES ('c', 1, 'bert', 1, "
			"1), "
			"('c', 2, 'cifar10', 2, 1), ('d', 3, 'bert', 1, 1);"
			"INSERT INTO epochs (cluster, job_id, run, epoch, gpus, start_s, end_s, node) VALUES "
			"('c', 1, 0, 1, 1, 0, 30, 'n1'), ('c', 1, 0, 2, 1, 30, 40, 'n1'), ('c', 1, 0, 3, 1, "
			"40, 54, 'n1'), "
			"('c', 1, 0, 4, 1, 54, 66, 'n1'), ('c', 1, 1, 5, 1, 100, 130, 'n2'), "
			"('c', 2, 0, 1, 2, 200, 220, 'n3'), ('c', 2, 0, 2, 2, 220, 228, 'n3'), "
			"('c', 2, 0, 3, 2, 228, 237, 'n3'), ('d', 3, 0, 1, 1, 300, 310, 'n1'), "
			"('d', 3, 0, 2, 1, 310, 320, 'n1');",
			NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(dlsched_epoch_reader_read(r, out, 8, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(n, 2); /* job 1's run 1 has no steady epoch yet */
	ck_assert_str_eq(out[0].node, "n3");
	ck_assert_str_eq(out[0].model, "cifar10");
	ck_assert_int_eq(out[0].gpus, 2);
	ck_assert_int_eq(out[0].nodes, 1);
	ck_assert_int_eq(out[0].epochs, 2);
	ck_assert_double_eq(out[0].epoch_s, 8.5);
	ck_assert_double_eq(out[0].at, 237);
	ck_assert_str_eq(out[1].node, "n1");
	ck_assert_str_eq(out[1].model, "bert");
	ck_assert_double_eq(out[1].epoch_s, 12);
	ck_assert_int_eq(out[1].epochs, 3);
	/* At most `capacity`. */
	ck_assert_int_eq(dlsched_epoch_reader_read(r, out, 1, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(out[0].node, "n3");
	/* Mallory's five latest runs on n3 (jobs 4-8, 'fake', epochs of 1 s): at most 3 of them count,
	 * the others' runs are all still read. */
	ck_assert_int_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	ck_assert_int_eq(
		sqlite3_exec(
			db,
			"UPDATE jobs SET user = 'alice' WHERE job_id IN (1, 2);"
			"INSERT INTO jobs (cluster, job_id, user, model, gpus, nodes) VALUES ('c', 4, "
			"'mallory', 'fake', 1, 1), "
			"('c', 5, 'mallory', 'fake', 1, 1), ('c', 6, 'mallory', 'fake', 1, 1), "
			"('c', 7, 'mallory', 'fake', 1, 1), ('c', 8, 'mallory', 'fake', 1, 1);"
			"INSERT INTO epochs (cluster, job_id, run, epoch, gpus, start_s, end_s, node) VALUES "
			"('c', 4, 0, 1, 1, 400, 401, 'n3'), ('c', 4, 0, 2, 1, 401, 402, 'n3'), "
			"('c', 5, 0, 1, 1, 500, 501, 'n3'), ('c', 5, 0, 2, 1, 501, 502, 'n3'), "
			"('c', 6, 0, 1, 1, 600, 601, 'n3'), ('c', 6, 0, 2, 1, 601, 602, 'n3'), "
			"('c', 7, 0, 1, 1, 700, 701, 'n3'), ('c', 7, 0, 2, 1, 701, 702, 'n3'), "
			"('c', 8, 0, 1, 1, 800, 801, 'n3'), ('c', 8, 0, 2, 1, 801, 802, 'n3');",
			NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(dlsched_epoch_reader_read(r, out, 8, &n, &err), DLSCHED_OK);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(out[0].model, "fake");
	ck_assert_double_eq(out[0].at, 802);
	ck_assert_str_eq(out[2].model, "fake");
	ck_assert_double_eq(out[2].at, 602);
	ck_assert_str_eq(out[3].model, "cifar10");
	ck_assert_str_eq(out[4].model, "bert");
	dlsched_epoch_reader_destroy(r);
	ck_assert_int_eq(dlsched_epoch_reader_create("", "c", &r, &err), DLSCHED_EINVAL);
	/* API version 10: in slurmctld (dlsched_files_trust_owner(SlurmUser), which the plugins call), a
	 * profile DB every user could write is not opened; the error names it. Last: it cannot be
	 * turned off again in this process. */
	ck_assert_int_eq(chmod(db_path, 0666), 0);
	ck_assert_int_eq(dlsched_files_trust_owner((uint32_t)getuid()), DLSCHED_OK);
	ck_assert_int_eq(dlsched_epoch_reader_create(db_path, "c", &r, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_epoch_reader_read(r, out, 8, &n, &err), DLSCHED_EIO);
	ck_assert_ptr_nonnull(strstr(err.message, db_path));
	ck_assert_ptr_nonnull(strstr(err.message, "profile database refused: it is writable by every user"));
	dlsched_epoch_reader_destroy(r);
	unlink(db_path);
	unlink(conf_path);
}
END_TEST

/* The core's one metadata parser, from C: comment words, then spank/dlsched's environment. */
START_TEST(job_metadata_from_comment_and_environment)
{
	dlsched_job_metadata_t m;
	const char* env[] = {"PATH=/bin", "DL_EPOCHS=90", "SPANK_DL_ELASTIC=2:8"};

	memset(&m, 0, sizeof(m));
	m.struct_size = sizeof(m);
	ck_assert_int_eq(
		dlsched_parse_job_metadata("model=bert epochs=3 epoch_time_1gpu=60 deadline=1767225900 "
					   "gpus_min=9 gpus_max=4",
					   env, 3, &m, NULL),
		DLSCHED_OK);
	ck_assert_str_eq(m.model, "bert");
	ck_assert(m.epochs == 90 && m.epoch_time_1gpu == 60 && m.deadline == 1767225900);
	ck_assert(m.gpus_min == 2 && m.gpus_max == 8);
	ck_assert_int_eq(m.problems, 1); /* gpus_min=9 gpus_max=4: the wrong way round */
	ck_assert_int_eq(dlsched_parse_job_metadata(NULL, NULL, 0, &m, NULL), DLSCHED_OK);
	ck_assert(m.model[0] == '\0' && m.epochs == 0 && m.gpus_min == 0 && m.problems == 0);
	m.struct_size = 8;
	ck_assert_int_eq(dlsched_parse_job_metadata("epochs=1", NULL, 0, &m, NULL), DLSCHED_EINVAL);
}
END_TEST

/* Issue 27 item 8: a job known by its time limit alone (no model, no epochs) with a deadline its
 * limit misses is not cancelled while its --time-min (time_min, API version 8) still fits: 600-s
 * limit, 120-s time-min, deadline 300 s away. Without a time-min it is cancelled. */
static int admission_of(dlsched_scheduler_t* s, double time_min, char* reason, size_t len)
{
	dlsched_node_view_t nodes[1];
	dlsched_job_view_t jobs[1];
	dlsched_cluster_view_t view;
	dlsched_decisions_t* d = NULL;
	dlsched_error_t err;
	dlsched_action_t a;
	int verdict = 0;

	nodes[0] = node("n1", 4, 4);
	jobs[0] = pending(21, 0, 1);
	jobs[0].model = NULL;
	jobs[0].epochs_total = 0;
	jobs[0].epoch_time_1gpu = 0;
	jobs[0].time_limit = 600;
	jobs[0].deadline = 300;
	jobs[0].time_min = time_min;
	memset(&view, 0, sizeof(view));
	view.struct_size = sizeof(view);
	view.now = 0.001;
	view.nodes = nodes;
	view.node_count = 1;
	view.jobs = jobs;
	view.job_count = 1;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &view, &d, &err), DLSCHED_OK);
	memset(&a, 0, sizeof(a));
	a.struct_size = sizeof(a);
	for (size_t i = 0; i < dlsched_decisions_count(d); i++) {
		ck_assert_int_eq(dlsched_decisions_get(d, i, &a, &err), DLSCHED_OK);
		if (a.kind == DLSCHED_ADMISSION) {
			verdict = a.admission;
			snprintf(reason, len, "%s", a.reason);
		}
	}
	dlsched_decisions_free(d);
	return verdict;
}

START_TEST(a_job_known_by_its_limit_keeps_its_time_min)
{
	dlsched_scheduler_t* s = NULL;
	dlsched_error_t err;
	char reason[256] = "";

	write_conf("Policy=qos-deadline\nDeadlineInfeasible=cancel");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(admission_of(s, 120, reason, sizeof(reason)), DLSCHED_ADMIT_BEST_EFFORT);
	ck_assert_msg(strstr(reason, "its --time-min of 120 s still fits") != NULL, "%s", reason);
	ck_assert_int_eq(admission_of(s, 0, reason, sizeof(reason)), DLSCHED_ADMIT_CANCEL);
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

/* The guard's verdict file (API version 10), as sched/dlsched reads it: strict parsing, staleness at
 * twice GuardInterval=, and a scheduler without a guard refusing a choice. */
START_TEST(guard_verdicts_and_choices)
{
	static const struct {
		const char* text;
		double now;
		int rc;
		int choice;
		const char* message; /* part of the error message ("" for OK) */
	} cases[] = {
		/* at=1000, GuardInterval=100: fresh until 1200 */
		{"choice=learned\nat=1000\njobs=12\nswitches=3\n", 1100, DLSCHED_OK, DLSCHED_GUARD_LEARNED,
		 ""},
		{"# comment\n\nchoice=heuristic\nat=1000\n", 1200, DLSCHED_OK, DLSCHED_GUARD_HEURISTIC, ""},
		{"choice=learned\nat=1000\n", 1201, DLSCHED_EINVAL, DLSCHED_GUARD_LEARNED,
		 "more than twice GuardInterval=100"},
		{"choice=learned\nat=1000\n", 930, DLSCHED_EINVAL, DLSCHED_GUARD_LEARNED, "in the future"},
		{"choice=learned\nat=1000\n", 940, DLSCHED_OK, DLSCHED_GUARD_LEARNED, ""},
		{"choice=maybe\nat=1000\n", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC,
		 "v:1: choice='maybe' is neither"},
		{"choice=learned\n", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC, "v: no at= line"},
		{"at=1000\n", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC, "v: no choice= line"},
		{"choice=learned\nat=soon\n", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC,
		 "v:2: at='soon' is not a number in"},
		{"choice=learned\nat=1000\nwinner=dl2\n", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC,
		 "v:3: unknown key 'winner'"},
		{"choice=learned\nat=1000\njobs=1e300\n", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC,
		 "v:3: jobs='1e300' is not a number in [0, 1e15]"},
		{"learned\n", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC,
		 "v:1: 'learned' is not key=value"},
		{"", 1100, DLSCHED_EPARSE, DLSCHED_GUARD_HEURISTIC, "no choice= line"},
	};
	dlsched_guard_verdict_t v;
	dlsched_error_t err;
	dlsched_scheduler_t* s = NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&v, 0, sizeof(v));
		v.struct_size = sizeof(v);
		ck_assert_msg(dlsched_guard_verdict_parse(cases[i].text, "v", cases[i].now, 100, &v, &err) ==
				      cases[i].rc,
			      "case %zu: %s", i, err.message);
		ck_assert_int_eq(v.choice, cases[i].choice);
		if (cases[i].rc != DLSCHED_OK)
			ck_assert_msg(strstr(err.message, cases[i].message) != NULL, "case %zu: %s", i,
				      err.message);
	}
	memset(&v, 0, sizeof(v));
	v.struct_size = sizeof(v);
	ck_assert_int_eq(dlsched_guard_verdict_parse("choice=learned\nat=1000\nlearned_jct=50.5\n"
						     "heuristic_jct=60\njobs=12\nswitches=3\n",
						     "v", 1030, 100, &v, &err),
			 DLSCHED_OK);
	ck_assert_double_eq_tol(v.age, 30, 1e-9);
	ck_assert_double_eq_tol(v.learned_jct, 50.5, 1e-9);
	ck_assert_double_eq_tol(v.heuristic_jct, 60, 1e-9);
	ck_assert_uint_eq(v.jobs, 12);
	ck_assert_uint_eq(v.switches, 3);
	/* A struct of an older caller (smaller) or no struct at all. */
	v.struct_size = sizeof(size_t);
	ck_assert_int_eq(dlsched_guard_verdict_parse("choice=learned\nat=1000\n", "v", 1000, 100, &v, &err),
			 DLSCHED_EINVAL);
	ck_assert_int_eq(dlsched_guard_verdict_parse("choice=learned\nat=1000\n", "v", 1000, 100, NULL, &err),
			 DLSCHED_EINVAL);

	/* A heuristic policy has no guard: the choice is NONE and cannot be set. */
	write_conf("Policy=srtf");
	ck_assert_int_eq(dlsched_scheduler_create(conf_path, &s, &err), DLSCHED_OK);
	ck_assert_int_eq(dlsched_scheduler_guard_choice(s), DLSCHED_GUARD_NONE);
	ck_assert_int_eq(dlsched_scheduler_set_guard_choice(s, DLSCHED_GUARD_LEARNED, &err), DLSCHED_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "has no guard"));
	ck_assert_int_eq(dlsched_scheduler_guard_choice(NULL), DLSCHED_GUARD_NONE);
	dlsched_scheduler_destroy(s);
	unlink(conf_path);
}
END_TEST

int main(void)
{
	Suite* s = suite_create("capi");
	TCase* tc = tcase_create("capi");

	tcase_add_test(tc, fifo_starts_in_order_with_head_of_line_blocking);
	tcase_add_test(tc, bad_views_are_errors);
	tcase_add_test(tc, bad_configuration_is_an_error_naming_the_file);
	tcase_add_test(tc, views_of_other_api_versions);
	tcase_add_test(tc, accounts_carry_quotas_and_reclaim);
	tcase_add_test(tc, safety_settings_of_a_file_that_does_not_load);
	tcase_add_test(tc, typed_config_getters_read_values_and_defaults);
	tcase_add_test(tc, notes_and_learned_policies_without_models);
	tcase_add_test(tc, place_prefers_the_policys_nodes);
	tcase_add_test(tc, unknown_progress_is_estimated_from_run_time);
	tcase_add_test(tc, preemptions_are_recorded_and_read_back);
	tcase_add_test(tc, job_metadata_from_comment_and_environment);
	tcase_add_test(tc, a_job_known_by_its_limit_keeps_its_time_min);
	tcase_add_test(tc, epoch_samples_teach_gp_placement);
	tcase_add_test(tc, epoch_reader_reads_runs_per_node);
	tcase_add_test(tc, guard_verdicts_and_choices);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
