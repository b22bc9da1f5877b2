// The job-profile database (SQLite, WAL): what the profiling plugins measured of each job - its
// epochs (timing and storage-network traffic) and its checkpoints (size, save and load times) -
// for the runtime and overhead predictors. One writer of profiles (dlsched-ingestd); readers (the
// controller plugins, dlsched-db, the trainer) open it read-only. sched/dlsched with
// RecordExperience=yes also appends to the experience table (short transactions, 50 ms busy
// timeout: under WAL the two writers take turns).
//
// The schema is versioned (PRAGMA user_version) and identified as dlsched's (PRAGMA
// application_id). Opening a database of an older version upgrades it in one transaction
// (writer) or names the version (reader); a newer version, a foreign SQLite file or a corrupt one
// is an error that names the file and what to do.
#ifndef DLSCHED_PROFILEDB_PROFILE_DB_H
#define DLSCHED_PROFILEDB_PROFILE_DB_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "model/policy_step.h"
#include "profiledb/sqlite.h"

namespace dlsched::db {

struct JobRecord {
	std::string cluster;  // Slurm cluster name ("" for one cluster)
	std::int64_t job_id = 0;
	std::string user;
	std::string model;  // --dl-model; "" when unknown
	int gpus = 0;
	int nodes = 1;
	double epochs_total = 0;                      // 0: unknown
	double submit_s = 0, start_s = 0, end_s = 0;  // epoch seconds; 0: not yet
	std::string state;                            // "running", "completed", ...
};

struct EpochRecord {
	std::string cluster;
	std::int64_t job_id = 0;
	int run = 0;    // 0 for the first run, +1 for each restart
	int epoch = 0;  // 1-based epoch number, unique per job across restarts
	int gpus = 0;   // GPUs the job held for this epoch
	double start_s = 0, end_s = 0;
	std::int64_t bytes_read = -1;  // -1: not measured
	std::int64_t net_rx_bytes = -1;
	std::int64_t nfs_read_bytes = -1;
	std::string node;  // the node whose collector reported it (schema 5); "" when unknown

	double seconds() const { return end_s - start_s; }
};

struct CheckpointRecord {
	std::string cluster;
	std::int64_t job_id = 0;
	int run = 0;
	double epoch = 0;  // progress saved (save) or resumed from (load)
	std::string kind;  // "save" or "load"
	std::int64_t bytes = 0;
	double seconds = 0;  // time to write (save) or read and restore (load)
	double at_s = 0;
};

// One preemption as the controller carried it out (sched/dlsched writes the row when it sends the
// checkpoint request and completes it when the job is requeued): with the costs it predicted, so that
// `dlsched-db accuracy` and dlsched-report can set them against what the job's records then show.
struct PreemptionRecord {
	std::string cluster;
	std::int64_t job_id = 0;
	double requested_s = 0;           // the checkpoint request was sent (epoch seconds)
	double grace_s = 0;               // requeued at the latest this long after
	int gpus = 0;                     // the GPUs it held
	double predicted_suspend_s = -1;  // to its safe point + the checkpoint write; -1: none predicted
	double predicted_resume_s = -1;   // checkpoint read + warm-up
	std::string reason;               // "preempted for job 123 (overhead)"
	std::string outcome;              // "checkpointed", "grace", "exited", "gone"; "" until requeued
	double requeued_s = 0;            // when it was requeued (0: not yet)
};

// One run's epochs as one node reported them: what the controller's speed model learns from
// (recent_node_runs).
struct NodeRun {
	std::int64_t job_id = 0;
	int run = 0;
	std::string node;
	std::string model;                // the job's ("" when unknown)
	std::string user;                 // the job's owner ("" when unknown)
	int nodes = 1;                    // nodes the job ran on (its jobs row: the latest run's)
	std::vector<EpochRecord> epochs;  // by epoch number
};

struct JobProfile {
	JobRecord job;
	std::vector<EpochRecord> epochs;            // by epoch number
	std::vector<CheckpointRecord> checkpoints;  // by time
	std::vector<PreemptionRecord> preemptions;  // by request time
};

class ProfileDb {
public:
	static constexpr int kSchemaVersion = 5;
	static constexpr std::int32_t kApplicationId = 0x646c7363;  // "dlsc"

	// The single writer of profiles (dlsched-ingestd): creates the file if missing, upgrades an older
	// schema, WAL mode. `busy_timeout_ms`: how long a statement waits for another writer's lock
	// before it fails (sched/dlsched appends experience rows with 50 ms: it never waits longer).
	// `check` as for open_reader.
	static Result<ProfileDb> open_writer(const std::string& path,
					     int busy_timeout_ms = Database::kBusyTimeoutMs,
					     bool check = true);
	// A reader: the file must exist and be a dlsched profile DB this version can read. `check`:
	// run PRAGMA quick_check first (it reads every page: a reader that reconnects runs it on its
	// first open only, or seldom; predict::ProfileReader).
	static Result<ProfileDb> open_reader(const std::string& path,
					     int busy_timeout_ms = Database::kBusyTimeoutMs,
					     bool check = true);
	// Tests and migrations: a new database created at an older schema version.
	static Result<ProfileDb> create_at_version(const std::string& path, int version);

	int schema_version() const { return version_; }
	const std::string& path() const { return db_.path(); }

	// One write transaction around several of the calls below (BEGIN IMMEDIATE; rolled back
	// unless committed): dlsched-ingestd writes each batch whole or not at all.
	Transaction transaction() { return Transaction(db_); }

	// Inserts or replaces the job's record.
	Status put_job(const JobRecord& j);
	// Inserts an epoch; false when that epoch of that job is already recorded (a record delivered
	// twice is ignored, so that delivery can be retried safely).
	Result<bool> add_epoch(const EpochRecord& e);
	// Inserts a checkpoint; false when it is already recorded (same job, run, kind and time).
	Result<bool> add_checkpoint(const CheckpointRecord& c);
	// Deletes everything recorded of one job id (its row, epochs, checkpoints and preemptions):
	// dlsched-ingestd, when Slurm gave the id to another job (MaxJobId wrapped, state rebuilt).
	Status forget_job(const std::string& cluster, std::int64_t job_id);
	// Records a preemption when its checkpoint request is sent (a row already there for the same
	// job and request time is replaced), and completes it when the job is requeued.
	Status add_preemption(const PreemptionRecord& p);
	Status finish_preemption(const std::string& cluster, std::int64_t job_id, double requested_s,
				 const std::string& outcome, double requeued_s);
	// Appends one step of a learned ordering to the experience table (profiledb/experience.h has
	// the row's format). Several steps: inside one transaction().
	Status add_experience(const std::string& cluster, const PolicyStep& step);
	// Appends several steps in one transaction: all of them or, on an error, none.
	Status add_experience(const std::string& cluster, const std::vector<PolicyStep>& steps);

	// Models with their number of jobs that have at least one recorded epoch, by name.
	Result<std::vector<std::pair<std::string, int>>> models();
	// Rows of each kind (epochs, checkpoints, preemptions) job() reads at most: the newest ones. A
	// job's history reaches slurmctld through here, bounded however much was reported for it.
	static constexpr std::size_t kJobRowLimit = 2000;
	// The job with its newest `row_limit` epochs, checkpoints and preemptions (each in time order;
	// 0: all of them).
	Result<JobProfile> job(const std::string& cluster, std::int64_t job_id,
			       std::size_t row_limit = kJobRowLimit);
	// The job's row only (no epochs, no checkpoints); kNotFound when there is none.
	Result<JobRecord> job_record(const std::string& cluster, std::int64_t job_id);
	// Jobs of `model` with recorded epochs, most recent first, at most `limit` (0: all).
	Result<std::vector<JobProfile>> model_history(const std::string& model, std::size_t limit = 0);
	// The cluster's latest `runs` runs that reported epochs with their node (schema 5; none before),
	// by their latest epoch's end, most recent first, each with all its epochs on that node. Reads
	// at most `max_rows` epochs to find them (an index on the end time): bounded however large the
	// database grows.
	Result<std::vector<NodeRun>> recent_node_runs(const std::string& cluster, std::size_t runs,
						      std::size_t max_rows = 100000);
	// The cluster's experience rows recorded at or after `since_s` (the step's `now`), oldest first
	// (by time, then cycle, then insertion), at most `limit` (0: all). A malformed row is an error
	// that names its rowid and the field at fault (nothing is skipped silently: read on from after
	// that row with a later `since_s`, or delete it).
	Result<std::vector<PolicyStep>> experience(const std::string& cluster, double since_s,
						   std::size_t limit = 0);
	// The clusters with experience rows and their row counts, by name.
	Result<std::vector<std::pair<std::string, int>>> experience_clusters();

	Status vacuum();
	// A consistent copy of the whole database in a new file `dest` (SQLite's VACUUM INTO: one read
	// transaction, so the writer goes on meanwhile; the copy is compact and not in WAL mode). An
	// existing `dest` is an error that names it.
	Status backup(const std::string& dest);
	// One table ("jobs", "epochs", "checkpoints", "preemptions") as CSV with a header line.
	Status export_csv(const std::string& table, std::ostream& out);

private:
	static Result<ProfileDb> open_checked(const std::string& path, Database::Mode mode, bool migrate,
					      int busy_ms, bool check = true);
	Status migrate_to(int version);
	// Each the newest `limit` rows (0: all), in time order.
	Result<std::vector<EpochRecord>> epochs_of(const std::string& cluster, std::int64_t job_id,
						   std::size_t limit);
	Result<std::vector<CheckpointRecord>> checkpoints_of(const std::string& cluster, std::int64_t job_id,
							     std::size_t limit);
	Result<std::vector<PreemptionRecord>> preemptions_of(const std::string& cluster, std::int64_t job_id,
							     std::size_t limit);
	// The epochs' node column, or '' in a database older than schema 5 (readers do not upgrade).
	const char* node_column() const;
	// Reads p.job's newest `limit` epochs, checkpoints and preemptions into p (0: all).
	Status fill(JobProfile& p, std::size_t limit);

	Database db_;
	int version_ = 0;
};

}  // namespace dlsched::db

#endif
