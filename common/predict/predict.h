// Runtime and overhead predictors over measured jobs (the profile DB's records). Every predictor
// returns a value with its uncertainty (one standard deviation) and the number of measurements it
// rests on, so that a scheduler can use the spread as well as the value (slack for deadlines, risk
// for preemption). Pure functions over plain inputs: the DB, the simulator and tests feed them alike.
//
// What they rest on:
//  - Epoch times of a training job are stable once the first epoch (warm-up: data not cached yet,
//    allocator and cuDNN autotuning) is past (Gandiva, Xiao et al. OSDI'18; Optimus, Peng et al.
//    EuroSys'18): the rest of a job is predicted from its own steady epochs.
//  - Jobs of the same model at the same batch size take the same time per epoch up to the GPU count,
//    whose effect the model's measured scaling curve gives (PickyMan: a few profiled same-model jobs
//    suffice); a new job's runtime comes from its model's history, normalised to one GPU.
//  - Bytes read from storage per epoch are the dataset's size, so traffic counts epochs even when
//    a job reports none (PickyMan).
//  - Suspending costs the rest of the current epoch (a job checkpoints at an epoch boundary) plus
//    writing the checkpoint; resuming costs reading it back plus the slower first epoch.
#ifndef DLSCHED_PREDICT_PREDICT_H
#define DLSCHED_PREDICT_PREDICT_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model_catalog.h"

namespace dlsched::predict {

struct Estimate {
	double value = 0;
	double stddev = 0;        // one standard deviation of the prediction
	std::size_t samples = 0;  // measurements used; 0: nothing to predict from (value is 0)

	bool known() const { return samples > 0; }
};

// The mean of a sample, with the spread of a new draw around it (sample sd x sqrt(1 + 1/n); 0 for
// fewer than two values) and its size.
Estimate mean_of(const std::vector<double>& values);

// The values that lie within kOutlierScales robust scales of their median (the scale: 1.4826 x the
// median absolute deviation, at least 5% of the median), in their order; all of them when there are
// fewer than three. Same-model histories pass through it, so that a few jobs' absurd records (one
// user's, say) cannot move the estimate or its spread for everyone else.
constexpr double kOutlierScales = 3;
std::vector<double> without_outliers(const std::vector<double>& values);

// The steady time of one epoch from a run's epoch durations, in order. The first epoch is left out
// when there are at least three (warm-up). Mean and sample standard deviation of the rest.
Estimate steady_epoch_time(const std::vector<double>& epoch_s);

// Remaining time of a running job: the epochs left times its steady epoch time. Uncertainty: the
// epochs' own noise over the epochs left plus the error of the mean that multiplies them.
Estimate remaining_time(const std::vector<double>& epoch_s, double epochs_total, double epochs_done);

// One earlier job of the same model: its GPUs and nodes and its measured epoch durations.
struct PastJob {
	int gpus = 1;
	int nodes = 1;
	std::vector<double> epoch_s;
};

// Runtime of a new job of `model` with `epochs` epochs on `gpus` GPUs over `nodes` nodes, from past
// jobs of the same model: each one's steady epoch time times its measured speedup is its epoch time
// on one GPU; their mean (outliers left out: without_outliers) over the new job's speedup gives its
// epoch time. Uncertainty: the spread between jobs (predictive: sd x sqrt(1 + 1/k)); with one job,
// that job's own epoch noise.
Estimate runtime_from_history(const ModelCatalog& models, int model, const std::vector<PastJob>& history,
			      double epochs, int gpus, int nodes);

// Epochs done, counted from storage traffic: bytes read so far over the bytes one epoch reads
// (the mean of measured epochs, of this job or of same-model jobs).
Estimate epochs_from_traffic(const std::vector<std::int64_t>& bytes_per_epoch,
			     std::int64_t bytes_read_so_far);

// Suspend: finish the current epoch (the part of `epoch` not yet done, `fraction_done` in [0, 1))
// and write a checkpoint of `checkpoint_bytes` at the write bandwidth measured in past saves
// (bytes, seconds pairs). Without past saves the write time is unknown and left out (samples
// counts only the epoch part).
struct Transfer {
	std::int64_t bytes = 0;
	double seconds = 0;
};
Estimate suspend_cost(const Estimate& epoch, double fraction_done, std::int64_t checkpoint_bytes,
		      const std::vector<Transfer>& past_saves);

// Resume: read the checkpoint back at the measured load bandwidth, plus the warm-up, the first
// epoch after a restart minus a steady one (each pair: first epoch, steady epoch of one run).
struct Warmup {
	double first_epoch_s = 0;
	double steady_epoch_s = 0;
};
Estimate resume_cost(std::int64_t checkpoint_bytes, const std::vector<Transfer>& past_loads,
		     const std::vector<Warmup>& past_warmups);

}  // namespace dlsched::predict

#endif
