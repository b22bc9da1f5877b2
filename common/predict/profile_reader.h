// ProfileReader: what a controller knows about its running jobs from the profile DB, read outside
// slurmctld's locks (sched/dlsched calls it from dlsched_scheduler_decide, after the snapshot's read
// lock is released). Each cycle it reads the records of the running jobs it is asked about (indexed
// by cluster and job id: a few rows each); same-model histories are read at most every
// ProfileRefresh seconds. A missing, unreadable or corrupt database is not an error: the reader says
// why once (status()), the estimates fall back to the model profiles, and it tries again after
// ProfileRefresh seconds.
#ifndef DLSCHED_PREDICT_PROFILE_READER_H
#define DLSCHED_PREDICT_PROFILE_READER_H

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/model_catalog.h"
#include "predict/evidence.h"
#include "predict/history.h"
#include "predict/overhead.h"
#include "profiledb/profile_db.h"

namespace dlsched::predict {

// What the records say about one job.
struct JobRecords {
	JobMeasurements measured;
	int last_epoch = 0;            // highest epoch reported (1-based, across restarts); 0: none
	double last_epoch_end_s = -1;  // when it ended
	double last_save_s = -1;       // latest checkpoint save: when, and the progress it holds
	double last_save_epoch = -1;
	double last_load_epoch = -1;  // progress the latest run resumed from
	std::int64_t checkpoint_bytes = 0;
	bool fractional_saves = false;  // saved at fractions of an epoch: stops at the next iteration
};

// The profile DB as the evidence of decide()'s one path (predict/evidence.h).
class ProfileReader : public Evidence {
public:
	// `path` empty: no database (every job is estimated from the profiles). A controller reader
	// waits at most `busy_ms` for the writer's lock.
	ProfileReader(std::string path, std::string cluster, double refresh_s, int busy_ms = 200);

	// Reads the records of these running jobs (and, when due, their models' histories). `now` is
	// absolute (seconds since the epoch, as the records). Never throws; errors go to status().
	// `pending`: queued jobs whose models' histories are wanted too, and whose own records are read
	// when they ran before (restarts > 0: a requeued job's progress is in its checkpoints).
	void refresh(const std::vector<const Job*>& running, const ModelCatalog& models, double now,
		     const std::vector<const Job*>& pending = {});

	const JobRecords* job(JobId id) const;
	const History* model(int model) const;

	// Fills a running job from its records: its progress (epochs_done, when `estimate_progress`:
	// the host does not track it), its measured epoch time on one GPU, and its PreemptionCost
	// (measured where there are measurements, the profile otherwise). Returns true when records
	// were used.
	bool apply(Job& job, const ModelCatalog& models, const OverheadParams& params, double now,
		   bool estimate_progress) const;

	// Evidence: a running job's own steady epochs in its latest run at the GPUs it holds, the
	// spread of its remaining time; its model's history (as model()).
	Estimate own_epoch(const Job& job, const ModelCatalog& models) const override;
	const History* model_history(const Job& job) const override { return model(job.model); }
	// Its records, its model's and the cluster's as evidence of what stopping it costs.
	bool cost_evidence(const Job& job, JobEvidence& out) const override;
	// A requeued pending job's progress: the epoch its latest checkpoint holds.
	void checkpoint_progress(Job& job) const;

	// A job's runtime for the deadline policies, from the best evidence there is: its own steady
	// epochs (running jobs), else its model's history in the DB (replacing epoch_time_1gpu only when
	// `from_profile`: the host took it from the model profile, not from the user or a measurement),
	// else what it has. Sets runtime_cv to the evidence's relative spread (`profile_cv` when there
	// is none). A requeued pending job's progress is the epoch its latest checkpoint holds. True when
	// the history replaced epoch_time_1gpu. Without the bounds on claims: decide() prepares jobs with
	// prepare_runtime() (evidence.h), whose history step this shares.
	bool estimate_runtime(Job& job, const ModelCatalog& models, bool from_profile,
			      double profile_cv) const;

	// The time of the job's latest checkpoint save recorded at or after `since` (absolute), read
	// from the database now; -1 when there is none or the database cannot be read.
	double checkpoint_since(JobId id, double since, double now);

	// Reads only what was recorded at or before `t` (seconds since the epoch; default: everything),
	// as profile_as_of() cuts it: dlsched-guard replays the past with what the controller knew then,
	// never a record written after the moment it judges. Forgets the histories read so far.
	void read_as_of(double t);

	// "" while the database is read fine; else what went wrong (for the host to log once).
	const std::string& status() const { return status_; }
	bool enabled() const { return !path_.empty(); }
	// How many times the whole file was checked (PRAGMA quick_check), for tests.
	int quick_checks() const { return quick_checks_; }
	static constexpr double kQuickCheckInterval = 86400;

private:
	// Opens the database unless it is open or the last failure's back-off (ProfileRefresh) runs;
	// PRAGMA quick_check (every page read) at the first open and then at most every
	// kQuickCheckInterval seconds, never at each reconnect.
	bool connect(double now);
	void give_up(const std::string& why, double now);

	std::string path_, cluster_;
	double refresh_s_;
	double as_of_;  // read_as_of(); +infinity: everything
	int busy_ms_;
	std::unique_ptr<db::ProfileDb> db_;
	double retry_at_ = 0;
	double checked_at_ = -1;  // when quick_check last passed; < 0: never
	int quick_checks_ = 0;
	std::string status_;
	std::map<JobId, JobRecords> jobs_;
	struct ModelHistory {
		History history;
		bool fractional_saves = false;  // some job of the model saved mid-epoch
		double read_at = -1;
	};
	std::map<int, ModelHistory> models_;
	History everyone_;  // every model's history and running job's records pooled (JobEvidence::cluster)
};

// JobRecords from one job's profile (exposed for tests).
JobRecords job_records(const db::JobProfile& profile);

// The profile as it stood at `t`: the epochs that had ended, the checkpoints written and the
// preemptions requested by then (a requeue after `t` not yet done), the job's row with a start
// or end after `t` not yet there ("running" until it ended).
db::JobProfile profile_as_of(const db::JobProfile& profile, double t);

}  // namespace dlsched::predict

#endif
