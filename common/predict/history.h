// From the profile DB's records to the predictors' inputs, and the predictions the scheduler asks
// for: a new job's runtime from same-model jobs, a running job's remaining time, and the costs of
// suspending and resuming it. The DB knows runs (a requeued job starts a new run): the first epoch
// of a run is its warm-up, or the rest of an epoch interrupted by a checkpoint, so it never counts
// as a steady epoch; it measures the warm-up: what it took beyond its share of a steady epoch (the
// whole one, or the rest of the one its checkpoint was taken in).
#ifndef DLSCHED_PREDICT_HISTORY_H
#define DLSCHED_PREDICT_HISTORY_H

#include <cstdint>
#include <string>
#include <vector>

#include "predict/predict.h"
#include "profiledb/profile_db.h"

namespace dlsched::predict {

// What one job's records say, run by run.
struct JobMeasurements {
	std::vector<PastJob> runs;           // steady epochs of each run (the first one left out), its GPUs
	std::vector<Warmup> warmups;         // runs with >= 2 steady epochs: first epoch (the share of
					     // one a mid-epoch resume had to do, plus its warm-up), steady
	std::vector<Transfer> saves, loads;  // checkpoints
	std::vector<double> stop_waits;      // preemptions: seconds from the checkpoint request to the
					     // save's start (the signal's way and the next safe point)
	double training_s = 0;               // sum of all epochs' times
	int epochs = 0;                      // epochs recorded
	std::string user;                    // the job's owner (the DB's jobs.user)
};
JobMeasurements measurements(const db::JobProfile& p);

// The save that answered a preemption: the first one from its request to its grace's end (and a
// second's slack); null when it never answered.
const db::CheckpointRecord* first_save_after(const db::JobProfile& p, const db::PreemptionRecord& pr);

// Same-model jobs' measurements pooled: every run is one past job, warm-ups and transfers merged.
// With `max_per_user` > 0, at most that many jobs of each user (the first ones given: the most
// recent, as ProfileDb::model_history lists them), so that no one user's jobs outweigh everyone
// else's; jobs without a user are not capped.
struct History {
	std::vector<PastJob> runs;
	std::vector<Warmup> warmups;
	std::vector<Transfer> saves, loads;
	std::vector<double> stop_waits;
	std::size_t jobs = 0;
};
constexpr std::size_t kHistoryJobsPerUser = 3;
History pool(const std::vector<JobMeasurements>& jobs, std::size_t max_per_user = 0);

// Training time of a new job: epochs x the history's epoch time at its GPU count (normalised by the
// model's measured scaling), plus the history's mean warm-up (outliers left out). Unknown (samples 0) without
// history.
Estimate predict_runtime(const ModelCatalog& models, int model, const History& h, double epochs, int gpus,
			 int nodes);

// The mean relative error |predicted - actual| / actual of a set of (predicted, actual) pairs, in
// percent, and how many pairs (actual > 0) it rests on.
struct ErrorSummary {
	double mape_pct = 0;
	std::size_t n = 0;
};
ErrorSummary mean_abs_pct_error(const std::vector<std::pair<double, double>>& predicted_actual);

}  // namespace dlsched::predict

#endif
