// What dlsched-sim's policies see of a job's length (--estimates; dlsched-sim(1), ESTIMATES).
//
// kOracle: the truth, each job's epoch time as the workload gives it (every earlier figure).
// kPredicted: what a controller would know, prepared by the controller's own code: the simulated
// measurements below are the evidence (predict::Evidence) of predict::prepare_runtime, the one
// order of precedence sched/dlsched uses (predict/evidence.h):
//  1. the job's own timed epochs, from any of its runs: their mean, brought to one reference GPU by
//     the speedup and GPU-type speed the catalog gives for where they ran (a machine's hidden speed
//     factor stays in it, as it would in Slurm); each epoch timed with log-normal noise (mean 1, sd
//     SimOptions::measurement_noise: 3%, the per-epoch spread of scripts/bench-predict's jobs);
//  2. else its model's history in this run: the latest kHistoryJobs same-model jobs that have
//     timed epochs (finished or still running), each one past job of its mean epoch time on one GPU,
//     through predict::predict_runtime at the job's GPUs and nodes as in Slurm; with the error
//     `dlsched-db accuracy` measured for a job predicted from k same-model jobs (doc/results.md,
//     "Runtime and overhead prediction"): a per-job log-normal factor of sd history_sigma(k)
//     (below; the simulated jobs of a model are otherwise alike);
//  3. else what the user gave: its model's profile epoch time (samples per epoch over samples per
//     second on one GPU); with no profile, its time limit spread over its epochs; with neither,
//     unknown (0). What rests on the user's word is bounded by its time limit (predict::bound_hints).
// The epochs are those the workload declares, exact: a training script runs the epochs it is given
// (--dl-epochs), and `dlsched-db accuracy` predicts at a job's declared epochs too; no figure says how
// far users' epoch counts stray. Progress (epochs done) is the engine's, as a collector reports it.
// Every draw comes from a per-job Rng stream of the simulator's seed: the same seed gives the same
// estimates, whatever the standard library, and one job's draws do not depend on the others'.
#ifndef DLSCHED_SIM_ESTIMATES_H
#define DLSCHED_SIM_ESTIMATES_H

#include <cstdint>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/model_catalog.h"
#include "predict/evidence.h"
#include "predict/hints.h"
#include "predict/predict.h"
#include "util/random.h"
#include "util/status.h"

namespace dlsched::sim {

enum class Estimates { kOracle, kPredicted };

// "oracle", "predicted".
const char* estimates_name(Estimates e);
// The reverse; anything else is an error naming the allowed values.
Result<Estimates> parse_estimates(const std::string& text);

// The relative error (log-normal sd) of a runtime predicted from k same-model jobs: `dlsched-db
// accuracy`'s runtime MAPE at the largest k of its table (1, 2, 4, 8) not above k, as a log-normal
// sd (for small errors E|e| = sd x sqrt(2/pi)). 0 for k = 0.
double history_sigma(std::size_t k);

// Where an estimate came from.
enum class EstimateSource { kMeasured, kHistory, kUser, kUnknown };
const char* estimate_source_name(EstimateSource s);

struct JobEstimate {
	Seconds epoch_time_1gpu = 0;  // seconds per epoch on one reference GPU; 0: unknown
	double runtime_cv = 0;        // its relative spread as the controller reckons it (Job::runtime_cv)
	EstimateSource source = EstimateSource::kUnknown;
	std::size_t samples = 0;  // epochs timed (kMeasured) or same-model jobs (kHistory)
};

// The controller's knowledge of a workload's jobs, by their index in it.
class EstimateModel {
public:
	// Same-model jobs a history holds at most (the most recent to time an epoch), as sched/dlsched's
	// profile reader keeps.
	static constexpr std::size_t kHistoryJobs = 20;
	// The spread assumed where only a profile or the user's word stands: sched/dlsched's.
	static constexpr double kUnmeasuredCv = predict::kUnmeasuredRuntimeCv;

	// `epoch_sd`: the noise of one timed epoch; `limits`: how far the user-given fallback is trusted.
	EstimateModel(const ModelCatalog& models, const std::vector<Job>& jobs, std::uint64_t seed,
		      double epoch_sd, const predict::HintLimits& limits);

	// Job `i` finished `epochs` (> 0) more whole epochs, each truly `epoch_1gpu_s` seconds on one
	// reference GPU as the host reckons it (wall time x the catalog's speed of its placement).
	void timed(std::size_t i, double epochs, double epoch_1gpu_s);

	// What job `i` (whose state is `job`: time limit, sizes, epochs, time run) looks like now.
	JobEstimate estimate(std::size_t i, const Job& job);

	// From now on the history's prediction as the controller makes it, without the error drawn
	// for it (tests that compare the two hosts' views of the same evidence).
	void without_history_error() { history_error_ = false; }

private:
	struct Known {
		int model = -1;
		double epochs = 0;     // timed
		double sum_1gpu = 0;   // their measured times on one reference GPU, summed
		double history_z = 0;  // this job's draw of the history's error (standard normal)
		bool in_history = false;
		Rng rng{0};  // its measurement noise
	};
	struct History {
		std::vector<std::size_t> jobs;  // most recent last, at most kHistoryJobs
		predict::History pooled;        // each one past job of its mean 1-GPU epoch time
		bool stale = true;
	};
	class JobEvidence;

	const History& history(int model);

	const ModelCatalog& models_;
	double epoch_sd_;
	bool history_error_ = true;
	predict::HintLimits limits_;
	std::vector<Known> jobs_;
	std::vector<History> models_history_;  // by model index
};

}  // namespace dlsched::sim

#endif
