// One evidence path: what decide() sees of a job's length, prepared the same way whichever host
// feeds it. A host supplies the evidence (the Evidence interface: the job's own measured epochs,
// its model's same-model history); prepare_runtime() applies the one order of precedence:
//  1. the job's own measured epochs (a running job, or one that ran: its steady epoch time on one
//     reference GPU, the spread of what is left);
//  2. the user's own epoch time (epoch_time_1gpu=), bounded by its time limit (hints.h), with the
//     history's spread when there is one;
//  3. its model's history (predict_runtime at the job's GPUs and nodes: the past jobs' steady epochs
//     through the model's scaling curve, plus their warm-up); bounded when its epochs are a claim;
//  4. its model profile's epoch time, bounded;
//  5. its time limit, as Slurm's backfill (all of it at the requested size; runtime_from_limit);
//  6. nothing (epoch_time_1gpu 0).
// sched/dlsched's host (the C ABI) feeds it the profile DB (ProfileReader); dlsched-sim's
// --estimates predicted feeds it simulated measurements (contribs/sim/estimates.h). The preemption
// cost and the progress a host does not track are filled here too (preemption_cost,
// progress_from_time).
#ifndef DLSCHED_PREDICT_EVIDENCE_H
#define DLSCHED_PREDICT_EVIDENCE_H

#include "model/job.h"
#include "model/model_catalog.h"
#include "predict/hints.h"
#include "predict/history.h"
#include "predict/overhead.h"
#include "predict/predict.h"

namespace dlsched::predict {

class Evidence {
public:
	virtual ~Evidence() = default;
	// The job's own measured epochs: value, its epoch time on one reference GPU; stddev, the
	// spread of its remaining time relative to it, times value; samples, epochs timed. Unknown
	// (samples 0): none.
	virtual Estimate own_epoch(const Job& job, const ModelCatalog& models) const = 0;
	// Its model's history (other jobs of the model); null: none.
	virtual const History* model_history(const Job& job) const = 0;
	// How a host's history prediction errs beyond the history's own spread: the predicted epoch
	// time is multiplied by `factor` and its relative spread is at least `min_cv`. The profile DB
	// has none (1, 0); dlsched-sim draws the error `dlsched-db accuracy` measured.
	struct HistoryError {
		double factor = 1;
		double min_cv = 0;
	};
	virtual HistoryError history_error(const Job&, std::size_t) const { return {}; }
	// What was measured of stopping the running job (its checkpoints and warm-ups, its model's, the
	// cluster's: overhead.h); false: nothing, the model profile's cost stands.
	virtual bool cost_evidence(const Job&, JobEvidence&) const { return false; }
};

// A host without evidence (no profile DB; dlsched_scheduler_place's conversion).
class NoEvidence : public Evidence {
public:
	Estimate own_epoch(const Job&, const ModelCatalog&) const override { return {}; }
	const History* model_history(const Job&) const override { return nullptr; }
};

enum class RuntimeSource { kMeasured, kClaim, kHistory, kProfile, kLimit, kUnknown };
const char* runtime_source_name(RuntimeSource s);

// What the user said of the job's length, beyond its time limit.
struct Claims {
	double epoch_time_1gpu = 0;  // its own epoch time on one reference GPU (epoch_time_1gpu=); 0: none
	bool epochs_known = true;    // it gave its epochs (--dl-epochs): per-epoch evidence applies
	// Its epochs are its user's word (Slurm: --dl-epochs), so a runtime from its model's history is
	// bounded as a claim is; false where they are exact (dlsched-sim: the workload's).
	bool epochs_claimed = true;
};

// Sets job.epoch_time_1gpu, runtime_cv and runtime_from_limit by the precedence above. The job's
// model, epochs_total and epochs_done, time_limit, executed_s, GPUs and placement are read;
// `samples` (optional) gets the number of epochs (kMeasured) or past jobs (kHistory) it rests on.
RuntimeSource prepare_runtime(Job& job, const Evidence& evidence, const ModelCatalog& models,
			      const HintLimits& limits, const Claims& claims, std::size_t* samples = nullptr);

// The cost of stopping a running job now (PreemptionCost): measured_cost where the evidence has
// measurements, profile_cost otherwise. sched/dlsched fills it from the profile DB
// (ProfileReader::apply); dlsched-sim's RestartCost=model from the profiles (no evidence).
PreemptionCost preemption_cost(const Job& job, const Evidence& evidence, const ModelCatalog& models,
			       const OverheadParams& params, double now);

// Progress where the host tracks none (Slurm: no epochs reported yet): the seconds the job has run
// at its current allocation times the model's speed there over its epoch time on one GPU, at most
// its epochs (exact for a job that never changed size); 0 for a job not running or of unknown
// length. Its records (ProfileReader::apply) replace it where the profile DB has some.
double progress_from_time(const Job& job, const ModelCatalog& models);

// Step 3 alone: the history's epoch time on one reference GPU at the job's size (its warm-up
// spread over the epochs it has left) and its spread (stddev), the host's error applied; unknown
// without history.
Estimate history_epoch(const Job& job, const Evidence& evidence, const ModelCatalog& models);

}  // namespace dlsched::predict

#endif
