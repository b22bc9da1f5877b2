/*
 * dlsched C ABI: what the Slurm plugins (C glue in plugins/) call to have the C++ core decide.
 *
 * Conventions
 * - Opaque handles (dlsched_scheduler_t, dlsched_decisions_t, dlsched_epoch_reader_t); plain view
 *   structs that start with `size_t struct_size` (set it to sizeof the struct you compiled against:
 *   the ABI can grow at the end without breaking older callers; a cluster view of version 5's size
 *   is still accepted, without what later versions added, and an older one is DLSCHED_EINVAL).
 * - Every function returns DLSCHED_OK (0) or an error code, with a message in the caller's
 *   dlsched_error_t when one is given (may be NULL). No C++ exception ever crosses this boundary:
 *   every entry point catches everything, so nothing can unwind into slurmctld.
 * - Strings passed in are copied or only read during the call; strings and arrays handed out live as
 *   long as the object they came from.
 * - Threads: one scheduler may be used from one thread at a time; different schedulers are
 *   independent. decide() holds no global state.
 */
#ifndef DLSCHED_API_H
#define DLSCHED_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLSCHED_API_VERSION 10

/* The priorities a host gives the jobs it orders for dlsched (sched/dlsched: above priority/basic's
 * range). An administrator's priority at or above DLSCHED_PRIORITY_FLOOR pins a job ahead of every
 * job dlsched orders; a lower one pins it behind them (see dlsched_job_view_t.admin_priority). */
#define DLSCHED_PRIORITY_TOP 0xfffffff0u
#define DLSCHED_PRIORITY_FLOOR 0xffff0001u

enum dlsched_status {
	DLSCHED_OK = 0,
	DLSCHED_EINVAL = 1,    /* bad argument or view (message says which field) */
	DLSCHED_ENOTFOUND = 2, /* missing file, unknown policy or model */
	DLSCHED_EPARSE = 3,    /* malformed configuration or profile (message names file:line) */
	DLSCHED_EIO = 4,
	DLSCHED_EINTERNAL = 5, /* a bug, or an exception inside the core; the message says what */
};

typedef struct dlsched_error {
	int code;
	char message[512];
} dlsched_error_t;

typedef struct dlsched_scheduler dlsched_scheduler_t;
typedef struct dlsched_decisions dlsched_decisions_t;

enum dlsched_partition_kind { DLSCHED_TRAINING = 0, DLSCHED_INFERENCE = 1 };
enum dlsched_job_state { DLSCHED_PENDING = 0, DLSCHED_RUNNING = 1 };
enum dlsched_action_kind {
	DLSCHED_SET_PRIORITY = 0, /* pending job: priority (higher starts first) */
	DLSCHED_START = 1,        /* pending job: start with `gpus` on `shares` */
	DLSCHED_RESIZE = 2,    /* running job: change to `gpus` on `shares` (checkpoint, requeue, resume) */
	DLSCHED_REQUEUE = 3,   /* running job: checkpoint and requeue */
	DLSCHED_LOAN = 4,      /* node: lend to training */
	DLSCHED_RECLAIM = 5,   /* node: give back to inference */
	DLSCHED_ADMISSION = 6, /* pending job: not simply admitted (`admission`, `reason`) */
};
enum dlsched_admission {
	DLSCHED_ADMIT_BEST_EFFORT = 1, /* it runs behind every admitted job: show the reason */
	DLSCHED_ADMIT_HOLD = 2,        /* hold it until released; show the reason */
	DLSCHED_ADMIT_CANCEL = 3,      /* end it (as Slurm's own --deadline does); log the reason */
	DLSCHED_ADMIT_WAIT = 4,        /* it waits (a job of a higher priority class that deadline work
					* holds back): only show the reason */
};

typedef struct dlsched_node_view {
	size_t struct_size;
	const char* name;
	int gpus_total;
	int gpus_free;
	const char* gpu_type;  /* NULL or "": the reference type */
	const char* partition; /* its partitions, "a,b" when several */
	int kind;              /* enum dlsched_partition_kind */
	int loanable;
	int loaned;
	int up;
} dlsched_node_view_t;

typedef struct dlsched_share {
	uint32_t node_index; /* index into the view's node array */
	int gpus;
} dlsched_share_t;

typedef struct dlsched_job_view {
	size_t struct_size;
	uint32_t job_id;
	const char* user;
	const char* partition; /* NULL or "": the default training partition; "a,b": any of them */
	const char* qos;
	const char* model; /* NULL or unknown name: scaled linearly */
	double submit_time;
	int gpus_requested;
	int gpus_min;           /* 0: gpus_requested */
	int gpus_max;           /* 0: gpus_requested */
	double epochs_total;    /* 0: unknown */
	double epochs_done;     /* < 0: unknown; estimated from executed_s at the current allocation */
	double epoch_time_1gpu; /* seconds per epoch on one reference GPU; 0: unknown: the model
				 * profile's (or the profile DB's same-model history) for a known model
				 * and epochs, else one epoch of the time limit */
	double time_limit;      /* seconds; <= 0: none */
	double deadline;        /* absolute; <= 0: none */
	int state;              /* enum dlsched_job_state */
	int gpus_allocated;
	const dlsched_share_t* shares; /* running jobs: where their GPUs are */
	size_t share_count;
	double start_time;
	double attained_gpu_s;
	double executed_s;
	int restarts;
	double last_stop_time; /* < 0: never stopped */
	double last_run_s;
	/* ---- API version 2 ---- */
	int requeueable;                /* 1: the host can checkpoint and requeue the job (Slurm: a batch job
					 * whose requeue is allowed); 0: it is never preempted or resized */
	uint32_t admin_priority;        /* a priority an administrator set (scontrol update Priority=), kept
					 * as it is: >= DLSCHED_PRIORITY_FLOOR pins the job ahead of the jobs
					 * dlsched orders, lower behind them; 0: none */
	int nice;                       /* Slurm's nice: positive goes behind jobs of the same standing */
	double checkpoint_requested_at; /* running jobs: > 0 when the host asked it to checkpoint and
					 * stop then (absolute; a preemption in progress: its GPUs are
					 * freeing, no policy touches it again); <= 0: not asked */
	/* ---- API version 8 ---- */
	double time_min; /* seconds it may run at least (Slurm's --time-min); <= 0: none */
	/* ---- API version 9 ---- */
	const char* account; /* the account (team) it is charged to (Slurm: its association's);
			      * FairnessPolicy= groups jobs by it. NULL or "": none */
} dlsched_job_view_t;

/* ---- API version 9 ---- */
/* One account (team) sharing the cluster, as FairnessPolicy= reads it. */
typedef struct dlsched_account_view {
	size_t struct_size;
	const char* name;
	double quota_gpus;  /* GPUs guaranteed while it has work (FairnessPolicy=quota); 0: none */
	double shares;      /* raw fair-share shares (sacctmgr Fairshare=), normalised over the
			     * view's accounts */
	double usage_gpu_s; /* decayed GPU-seconds used (the association's usage) */
} dlsched_account_view_t;

/* ---- API version 6 ---- */
/* One run's measured speed on one node, as dlsched_epoch_reader_read() finds it in the profile DB:
 * the steady epoch time of a run (the median of its epochs but the first, the warm-up) on the node
 * whose collector reported it. Plain data, no pointers: a host reads them off its locks, keeps them,
 * and points its views at them. */
typedef struct dlsched_epoch_sample {
	char node[65];  /* node name, as the view's nodes are named */
	char model[65]; /* the job's model; "" when unknown */
	int gpus;       /* GPUs the run held */
	int nodes;      /* nodes the job ran on (runs over several nodes teach nothing) */
	int epochs;     /* steady epochs the median is of */
	double epoch_s; /* the run's steady epoch time, seconds */
	double at;      /* when its latest epoch ended (absolute) */
} dlsched_epoch_sample_t;

typedef struct dlsched_cluster_view {
	size_t struct_size;
	double now;
	uint64_t cycle;
	const dlsched_node_view_t* nodes;
	size_t node_count;
	const dlsched_job_view_t* jobs; /* pending and running, any order */
	size_t job_count;
	/* ---- API version 5 ---- */
	double inference_demand; /* capacity loaning: the fraction of the inference nodes' GPUs that
				  * inference needs now, in [0, 1] (nodes of kind INFERENCE) */
	/* ---- API version 6 ---- */
	const dlsched_epoch_sample_t*
		epoch_samples; /* measured runs (dlsched_epoch_reader_read), any
				* order; samples on nodes the view lacks are ignored. The core turns them
				* into the speed observations gp-placement learns from, as dlsched-sim's
				* engine feeds it (common/model/speed_samples.h); NULL: none */
	size_t epoch_sample_count;
	/* ---- API version 8 ---- */
	double requeue_delay; /* seconds a requeued job must wait before it may start again (Slurm:
			       * AuthInfo's cred_expire + 1, 121 s by default): every running job's
			       * resume cost includes it, so preemptions and resizes count it. 0: none */
	/* ---- API version 9 ---- */
	const dlsched_account_view_t* accounts; /* the accounts the jobs are charged to, any order;
						 * NULL: none (FairnessPolicy= then orders as none) */
	size_t account_count;
} dlsched_cluster_view_t;

/* The size of a version 5 cluster view (no epoch samples): still accepted. */
#define DLSCHED_CLUSTER_VIEW_V5_SIZE offsetof(dlsched_cluster_view_t, epoch_samples)

typedef struct dlsched_action {
	size_t struct_size;
	int kind; /* enum dlsched_action_kind */
	uint32_t job_id;
	uint32_t node_index;           /* LOAN / RECLAIM */
	int gpus;                      /* START / RESIZE */
	const dlsched_share_t* shares; /* START / RESIZE; valid while the decisions live */
	size_t share_count;
	double priority;    /* SET_PRIORITY */
	const char* reason; /* never NULL; valid while the decisions live */
	/* ---- API version 2 ---- */
	double grace;             /* REQUEUE / RESIZE: seconds the job may take to checkpoint before it is
				   * requeued anyway; < 0: PreemptGrace= */
	double predicted_suspend; /* REQUEUE / RESIZE: predicted seconds to its safe point + the
				   * checkpoint write; < 0: none */
	double predicted_resume;  /* and to read it back and warm up */
	/* ---- API version 3 ---- */
	int admission; /* ADMISSION: enum dlsched_admission */
} dlsched_action_t;

/* "0.1.0" */
const char* dlsched_version(void);

/* For a host that serves every user (slurmctld): from now on, in this process, a model file is loaded
 * only when it is a regular file owned by root or `trusted_uid` (SlurmUser) and writable by nobody
 * else, and a profile DB is opened only when it is a regular file that "other" users cannot write, in
 * a directory they cannot write (its group may: the ingest service's). A refused model is as a
 * missing one (ModelFallback=, and notes() says why); a refused profile DB as an unreachable one.
 * Call it before the first scheduler is created. Off by default (the tools open what their user
 * names). API version 10. */
int dlsched_files_trust_owner(uint32_t trusted_uid);

/* Reads dlsched.conf (NULL: built-in defaults), loads the model profiles it names and builds the
 * scheduler its Policy= and *Policy= keys describe. */
int dlsched_scheduler_create(const char* conf_path, dlsched_scheduler_t** out, dlsched_error_t* err);
/* The same, for a host that only places jobs (select/dlsched_cons_tres): where this library has no
 * learned policies (the models library is not linked), Policy=dl2 or dual-agent is built with
 * ModelFallback='s ordering and the fallback allocation standing in for the learned ones (they never
 * change a placement), and the preset's placement as configured; notes() says so. API version 7. */
int dlsched_scheduler_create_placement(const char* conf_path, dlsched_scheduler_t** out,
				       dlsched_error_t* err);
/* What the safety rules follow when dlsched.conf does not load as a whole (a typo in Policy=, a key an
 * upgrade renamed): the file's ProfileDB=, ProfileRefresh=, PreemptGrace=, CheckpointSignal=,
 * ReclaimTimeout=, InferencePartition=, InferenceDemandFile=, LoanStateFile= and SchedInterval=, read
 * leniently (any other key, and any line, key or value in error, is passed over and named in notes();
 * a missing file or NULL gives the defaults). The object answers config(), the checkpoint and
 * preemption-row calls and the profile status like any scheduler; decide() and place() refuse
 * (DLSCHED_EINVAL). Hosts keep two-step preemptions, the loan fence and reclaims going with it while
 * Slurm decides alone. API version 8. */
int dlsched_scheduler_create_safety(const char* conf_path, dlsched_scheduler_t** out, dlsched_error_t* err);
/* 1 for a scheduler made by dlsched_scheduler_create_safety(), else 0. API version 8. */
int dlsched_scheduler_is_safety(const dlsched_scheduler_t* sched);
void dlsched_scheduler_destroy(dlsched_scheduler_t* sched);
/* One line for logs: "preset=tiresias-las ordering=tiresias-las allocation=rigid placement=pack ..." */
int dlsched_scheduler_describe(const dlsched_scheduler_t* sched, char* buf, size_t len);

/* What the scheduler asks the host to log after every (re)load, one note per line ('\n' between
 * lines; "" when there is nothing to say): which model a learned ordering loaded ("dl2: model
 * /path/dl2.pt (...)"), or why it fell back to ModelFallback= ("dl2: /path: model file not found;
 * ...; ordering by tiresias-las instead"), and where experience is recorded. DLSCHED_EINVAL when
 * the notes do not fit in `len` (they are cut short, still NUL-terminated). */
int dlsched_scheduler_notes(const dlsched_scheduler_t* sched, char* buf, size_t len);

/* The Slurm cluster name experience rows are recorded under (ClusterName; default ""). */
int dlsched_scheduler_set_cluster(dlsched_scheduler_t* sched, const char* cluster);

/* Experience recording (RecordExperience=yes, ProfileDB=): after each decide() the learned
 * ordering's step is appended to the profile DB's experience table. A write that fails (DB busy
 * for more than 50 ms, not writable, ...) never fails the cycle: the step is dropped and counted. */
typedef struct dlsched_experience_stats {
	size_t struct_size;
	int enabled;          /* RecordExperience=yes and ProfileDB= set */
	uint64_t rows;        /* rows written since the scheduler was created */
	uint64_t errors;      /* cycles whose rows could not be written */
	uint64_t dropped;     /* rows lost to those errors */
	char last_error[512]; /* "" when none yet */
} dlsched_experience_stats_t;
/* Fills *out (set out->struct_size first). */
int dlsched_scheduler_experience_stats(const dlsched_scheduler_t* sched, dlsched_experience_stats_t* out);

/* The effective value of dlsched.conf key `key` (defaults included) as text, e.g. "60" for
 * SchedInterval. DLSCHED_ENOTFOUND for an unknown key, DLSCHED_EINVAL when it does not fit. */
int dlsched_scheduler_config(const dlsched_scheduler_t* sched, const char* key, char* buf, size_t len);

/* Typed reads of dlsched.conf key `key`, so that hosts never restate a default: the value `sched` has
 * (a safety scheduler's included), or with `sched` NULL (dlsched.conf does not load at all) the
 * key's built-in default, from the one table of keys (common/config/keys.cpp). get_double reads
 * number keys (double or integer), get_int integer keys, get_bool yes/no keys (1 or 0), get_text
 * any key as dlsched.conf would write it. DLSCHED_ENOTFOUND for an unknown key, DLSCHED_EINVAL for
 * a key of another type, a NULL `out`, or text that does not fit in `len`. */
int dlsched_config_get_double(const dlsched_scheduler_t* sched, const char* key, double* out);
int dlsched_config_get_int(const dlsched_scheduler_t* sched, const char* key, long* out);
int dlsched_config_get_bool(const dlsched_scheduler_t* sched, const char* key, int* out);
int dlsched_config_get_text(const dlsched_scheduler_t* sched, const char* key, char* buf, size_t len);

/* Decides one cycle. The view is read during the call only. On success *out must be freed with
 * dlsched_decisions_free(). A bad view (node index out of range, negative GPUs, struct_size too
 * small) is DLSCHED_EINVAL naming the job or node. */
int dlsched_scheduler_decide(dlsched_scheduler_t* sched, const dlsched_cluster_view_t* view,
			     dlsched_decisions_t** out, dlsched_error_t* err);

/* Where the Placement policy would put pending job `job_id` of the view with `gpus` GPUs (<= 0:
 * what it requested), on the GPUs the view reports free: fills shares[0 .. *count) with the
 * chosen nodes, best first. DLSCHED_ENOTFOUND when it does not fit (then *count is 0). Used by
 * select/dlsched_cons_tres to prefer the policy's nodes. */
int dlsched_scheduler_place(dlsched_scheduler_t* sched, const dlsched_cluster_view_t* view, uint32_t job_id,
			    int gpus, dlsched_share_t* shares, size_t capacity, size_t* count,
			    dlsched_error_t* err);

/* Two-step preemption: the latest checkpoint save job `job_id` reported at or after `since`
 * (absolute seconds), read from ProfileDB= now (no lock of the host's is needed). DLSCHED_OK and
 * *at set when there is one; DLSCHED_ENOTFOUND when there is none, or no database, or it cannot be
 * read (dlsched_scheduler_profile_status says why). */
int dlsched_scheduler_checkpoint_since(dlsched_scheduler_t* sched, uint32_t job_id, double since, double now,
				       double* at);

/* Record a preemption in ProfileDB='s preemptions table when the checkpoint request is sent, and
 * complete it when the job is requeued (outcome "checkpointed", "grace", "exited" or "gone"), for
 * dlsched-db accuracy and dlsched-report. Writes wait at most 50 ms for another writer; a failure
 * (no database, busy, not writable) is DLSCHED_EIO with the reason and changes nothing else: call
 * them with no lock of the host's held. */
int dlsched_scheduler_record_preemption(dlsched_scheduler_t* sched, uint32_t job_id, double requested_at,
					double grace, int gpus, double predicted_suspend,
					double predicted_resume, const char* reason, dlsched_error_t* err);
int dlsched_scheduler_finish_preemption(dlsched_scheduler_t* sched, uint32_t job_id, double requested_at,
					const char* outcome, double requeued_at, dlsched_error_t* err);

/* "" while ProfileDB= is read fine (or none is set); otherwise why it cannot be read, in which case
 * progress and overhead come from the model profiles. Hosts log it when it changes. */
int dlsched_scheduler_profile_status(const dlsched_scheduler_t* sched, char* buf, size_t len);

/* ---- API version 4: a job's dlsched metadata, read by the core's one parser ---- */
typedef struct {
	size_t struct_size;
	char model[65];         /* "" when none */
	double epochs;          /* 0: not given */
	double epoch_time_1gpu; /* 0: not given (comment word only) */
	int gpus_min;           /* 0: not given */
	int gpus_max;           /* 0: not given */
	double deadline;        /* the comment word deadline=<epoch s>; 0: none */
	int problems;           /* values given but ignored (out of spank/dlsched's limits, not numbers) */
} dlsched_job_metadata_t;

/* Parses the job's comment words (model= epochs= epoch_time_1gpu= gpus_min= gpus_max= deadline=) and
 * then spank/dlsched's environment entries (DL_MODEL=, DL_EPOCHS=, DL_ELASTIC=MIN:MAX, with or
 * without a SPANK_ prefix), which win. Either may be NULL. Set out->struct_size first. */
int dlsched_parse_job_metadata(const char* comment, const char* const* env, size_t env_count,
			       dlsched_job_metadata_t* out, dlsched_error_t* err);

/* ---- API version 8 ---- */
/* The deadline a job's comment word deadline= claims, judged as Slurm judges --deadline at
 * submission and held to what dlsched first saw (model/job_metadata.h, judge_deadline_word):
 * `first_seen` > 0 (the admin comment's deadline=) counts whatever the word says now; otherwise the
 * word counts only after `earliest_start` (submit or begin time) + `time_min_s` (--time-min, 0:
 * none). *deadline: the one that counts (0: none); `problem` (may be NULL): why the word did not
 * count, "" when it did. */
int dlsched_judge_deadline_word(double word, double first_seen, double earliest_start, double time_min_s,
				double* deadline, char* problem, size_t problem_len, dlsched_error_t* err);

/* ---- API version 6: speed observations from the profile DB ---- */
typedef struct dlsched_epoch_reader dlsched_epoch_reader_t;

/* A reader of ProfileDB `db_path`'s epochs for Slurm cluster `cluster` (NULL: ""). Opens nothing
 * yet: the database is opened at the first read (and again after a failed one). A host that reads
 * from its own thread creates the reader there: a reader is used by one thread at a time, and is
 * independent of any scheduler. */
int dlsched_epoch_reader_create(const char* db_path, const char* cluster, dlsched_epoch_reader_t** out,
				dlsched_error_t* err);
void dlsched_epoch_reader_destroy(dlsched_epoch_reader_t* reader);

/* Reads the latest `capacity` runs that reported epochs with their node (most recent first), one
 * sample each: its steady epoch time on that node (runs with no steady epoch yet are left out; of one
 * user's runs on one node, the 3 most recent only: kSpeedRunsPerUserNode).
 * Waits at most 200 ms for the database's writer; reads a bounded number of rows however large the
 * database is. Call it with no lock of the host's held. A database of schema 4 or older (no nodes
 * recorded) gives 0 samples; a missing, unreadable or corrupt one is DLSCHED_EIO (or
 * DLSCHED_ENOTFOUND when missing) with the reason, *count 0. */
int dlsched_epoch_reader_read(dlsched_epoch_reader_t* reader, dlsched_epoch_sample_t* out, size_t capacity,
			      size_t* count, dlsched_error_t* err);

/* ---- API version 10: the learned policy's guard (LearnedGuard=, doc/admin-guide.md) ----
 * dlsched_scheduler_create() of a learned policy (dl2, dual-agent) with LearnedGuard=yes builds
 * GuardPolicy='s scheduler beside it; decide() asks the one the guard's choice names. The choice
 * starts with the heuristic (the safe side) and changes only through set_guard_choice(). */
enum dlsched_guard_choice {
	DLSCHED_GUARD_NONE = 0,      /* no guard: not a learned policy, LearnedGuard=no, safety/placement */
	DLSCHED_GUARD_HEURISTIC = 1, /* GuardPolicy= decides */
	DLSCHED_GUARD_LEARNED = 2,   /* the learned policy decides */
};
/* The scheduler's guard choice (enum dlsched_guard_choice); DLSCHED_GUARD_NONE for NULL. */
int dlsched_scheduler_guard_choice(const dlsched_scheduler_t* sched);
/* Who decides from the next decide() on: DLSCHED_GUARD_HEURISTIC or DLSCHED_GUARD_LEARNED.
 * DLSCHED_EINVAL for a scheduler without a guard (its decisions do not change) or another value. */
int dlsched_scheduler_set_guard_choice(dlsched_scheduler_t* sched, int choice, dlsched_error_t* err);

/* A verdict file as dlsched-guard(1) writes it: one key=value a line (choice=learned|heuristic,
 * at=seconds since the epoch, learned_jct=, heuristic_jct=, jobs=, switches=). */
typedef struct dlsched_guard_verdict {
	size_t struct_size;
	int choice; /* DLSCHED_GUARD_HEURISTIC or DLSCHED_GUARD_LEARNED, as the file says */
	double at;  /* when the evaluation ran, seconds since the epoch */
	double age; /* now - at */
	double learned_jct, heuristic_jct;
	uint64_t jobs, switches;
} dlsched_guard_verdict_t;
/* Parses the verdict file's text (`name` names it in messages) as read at `now` with GuardInterval=
 * `interval`. DLSCHED_EPARSE for text that is not a verdict (the message names name:line and what is
 * wrong; *out is left at HEURISTIC); DLSCHED_EINVAL for a verdict that parses but is stale (older
 * than twice `interval`, or more than 60 s in the future: *out is filled, the message says which),
 * or a NULL argument or struct_size too small. A host follows `choice` only on DLSCHED_OK. */
int dlsched_guard_verdict_parse(const char* text, const char* name, double now, double interval,
				dlsched_guard_verdict_t* out, dlsched_error_t* err);

size_t dlsched_decisions_count(const dlsched_decisions_t* d);
/* Fills *out (set out->struct_size first) with action i, 0 <= i < count. */
int dlsched_decisions_get(const dlsched_decisions_t* d, size_t i, dlsched_action_t* out,
			  dlsched_error_t* err);
/* Pending jobs in the policy's order (most urgent first); the array lives with the decisions. */
const uint32_t* dlsched_decisions_order(const dlsched_decisions_t* d, size_t* count);
void dlsched_decisions_free(dlsched_decisions_t* d);

#ifdef __cplusplus
}
#endif

#endif /* DLSCHED_API_H */
