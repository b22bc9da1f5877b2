// The overhead of preempting a running job, as PickyMan models it (Chen et al., "PickyMan: A
// Preemptive Scheduler for Deep Learning Jobs on GPU Clusters", IPCCC'22): suspending means training
// on to the next safe point (the end of the epoch, or of the iteration, for jobs that can checkpoint
// there) and writing a checkpoint; resuming means reading it back and a slower first epoch while the
// data is not cached yet. A job killed before it checkpoints loses the training since its latest
// checkpoint instead (jobs keep one at every epoch boundary).
//
// One estimator for every host: dlsched-sim fills each running job's PreemptionCost from the model
// profiles (profile_cost), which are also its physics' expected values; sched/dlsched from the
// profile DB's measurements of the job and of same-model jobs (measured_cost), falling back to the
// profile for what was never measured.
#ifndef DLSCHED_PREDICT_OVERHEAD_H
#define DLSCHED_PREDICT_OVERHEAD_H

#include "config/config.h"
#include "model/job.h"
#include "model/model_catalog.h"
#include "predict/history.h"

namespace dlsched::predict {

struct OverheadParams {
	bool epoch_safe_points = true;  // CheckpointAt=epoch (else iteration: stops at once)
	double write_mbps = 500;        // StorageWriteMBps
	double read_mbps = 500;         // StorageReadMBps
	double warmup_fraction = 0.1;   // WarmupFraction: extra share of an epoch after a restart
	double warmup_seconds = 0;      // WarmupSeconds: a new process's start before it trains

	static OverheadParams from_config(const Config& c);
};

// Seconds to write / read the model's checkpoint at the configured bandwidth (0 for an unknown model).
double checkpoint_write_s(const ModelCatalog& models, int model, const OverheadParams& p);
double checkpoint_read_s(const ModelCatalog& models, int model, const OverheadParams& p);

// Seconds per epoch of a running job at its current allocation (reference GPUs, packed on the nodes
// it spans); 0 when unknown.
double epoch_seconds(const Job& running, const ModelCatalog& models);

// The cost of stopping `running` now, from its model's profile and its progress (epochs_done; the
// fraction of the current epoch done is what a checkpoint at the next safe point keeps).
PreemptionCost profile_cost(const Job& running, const ModelCatalog& models, const OverheadParams& p);

// What the profile DB says about a running job now: its own records and its model's pooled history.
struct JobEvidence {
	const JobMeasurements* own = nullptr;  // may be null
	const History* model = nullptr;        // may be null
	double last_epoch_end_s = -1;          // when its latest recorded epoch ended (absolute); -1: none
	double last_checkpoint_s = -1;         // when its latest checkpoint was saved; -1: none
	std::int64_t checkpoint_bytes = 0;     // size of its (or its model's) latest checkpoint; 0: unknown
	bool fractional_saves = false;         // it (or its model) saved at fractions of an epoch:
					       // it stops at the next iteration, not the epoch's end
	bool save_pending = false;             // its latest epoch ended (last_epoch_end_s) and the save
					       // it makes at each epoch's end is not reported yet
	const History* cluster = nullptr;      // every job's the reader knows, for what neither the job
					       // nor its model measured (the storage and the signal's
					       // way are the cluster's); may be null
};

// The cost from measurements where there are some: the steady epoch time of this run, the write
// and read bandwidth of past checkpoints, past warm-ups, where the job checkpoints and, for a job
// that stops at its next iteration, how long past preemptions took to reach their save. Each from
// the job's and its model's records, else the cluster's (the storage and the signal's way are
// shared; a warm-up as a share of the epoch); the profile for the rest. `now` is absolute, as the evidence's
// times.
PreemptionCost measured_cost(const Job& running, const ModelCatalog& models, const OverheadParams& p,
			     const JobEvidence& evidence, double now);

}  // namespace dlsched::predict

#endif
