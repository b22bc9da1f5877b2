// Job: what the scheduler knows about one training job in one scheduling cycle.
#ifndef DLSCHED_MODEL_JOB_H
#define DLSCHED_MODEL_JOB_H

#include <string>
#include <vector>

#include "model/types.h"

namespace dlsched {

// GPUs a job holds (or will hold) on one node.
struct NodeShare {
	NodeIndex node = 0;
	int gpus = 0;
	bool operator==(const NodeShare& o) const { return node == o.node && gpus == o.gpus; }
};

enum class JobState : std::uint8_t { kPending, kRunning };

// What stopping a running job now would cost (PickyMan: Chen et al., "PickyMan: A Preemptive
// Scheduler for Deep Learning Jobs on GPU Clusters", IPCCC'22): suspending runs on to the next safe
// point and writes a checkpoint; resuming reads it back and re-warms the data. Hosts fill it with the
// same estimator (predict/overhead.h): dlsched-sim from the model profiles, Slurm from the profile DB.
struct PreemptionCost {
	Seconds to_safe_point = 0;     // training on until the job can checkpoint (its GPUs stay busy)
	Seconds checkpoint_write = 0;  // writing the checkpoint: GPUs held, no progress
	Seconds resume = 0;            // reading it back and the slower first epoch: no progress
	Seconds since_checkpoint = 0;  // training since its latest checkpoint: lost if it is killed instead
	double stddev = 0;             // uncertainty of suspend + resume
	bool measured = false;         // from the job's or its model's measurements, not the profile

	Seconds suspend() const { return to_safe_point + checkpoint_write; }
	// Per GPU, the seconds a restart at once loses (a resize: the checkpoint written now, read back).
	Seconds restart_loss() const { return checkpoint_write + resume; }
	// Per GPU, the seconds stopping it with `grace` to checkpoint loses: a restart when it reaches its
	// safe point and writes in time; else it holds its GPUs for the grace, is killed, and loses what
	// it trained since its latest checkpoint too.
	Seconds stop_loss(Seconds grace) const
	{
		return suspend() <= grace ? restart_loss() : since_checkpoint + grace + resume;
	}
	// When its GPUs are free after the request: at its checkpoint, or when the grace runs out.
	Seconds stop_delay(Seconds grace) const { return suspend() <= grace ? suspend() : grace; }
};

struct Job {
	// ---- What the user asked for (fixed for the job's life) ----
	JobId id = 0;
	std::string user;       // user name (Slurm: from the uid); used by fairness policies
	std::string partition;  // empty: the default training partition
	std::string qos;
	// The account (team) it is charged to (Slurm: its association's account); FairnessPolicy=
	// groups by it. Empty: none (no quota, a fair-share factor of 0 where shares are known).
	std::string account;
	int model = -1;  // index into ModelCatalog; -1 when the model is unknown
	Seconds submit_time = 0;
	int gpus_requested = 1;  // the size a rigid job runs at
	int gpus_min = 1;        // elastic range; rigid jobs have min == max == requested
	int gpus_max = 1;
	double epochs_total = 1;
	Seconds time_limit = kNoTimeLimit;  // requested wall-clock limit (backfill uses it)
	Seconds time_min = 0;               // the least it may run (Slurm's --time-min); 0: none
	Seconds deadline = kNoDeadline;     // absolute completion deadline
	// Whether the host can checkpoint and requeue the job (Slurm: a batch job that allows requeue).
	// A job that cannot be requeued is never preempted, resized or moved by any policy.
	bool requeueable = true;
	int nice = 0;  // positive: behind jobs of the same standing (Slurm's --nice); negative: ahead
	// A place in the queue an administrator fixed (Slurm: scontrol update Priority=): +1 ahead of
	// every job the policies order, -1 behind them, 0 none. Pinned jobs go by admin_priority, highest
	// first; policies never reorder them.
	int admin_pin = 0;
	double admin_priority = 0;

	// ---- What has been measured or estimated ----
	// Seconds per epoch on one reference GPU (speed factor 1) for this job's model and batch size.
	// In the simulator this is the ground truth; in Slurm it comes from the predictors; 0 = unknown.
	Seconds epoch_time_1gpu = 0;
	// Relative uncertainty of that estimate (standard deviation / mean): the deadline policies
	// admit a job when its finish is likely in time at DeadlineConfidence=. 0: exact (the
	// simulator's oracle; a job with no measurements in Slurm gets the predictor's spread).
	double runtime_cv = 0;
	// Nothing but its time limit stands for that estimate (the host assumed it runs all of it):
	// the admission neither holds nor cancels it while it could still finish by its time_min.
	bool runtime_from_limit = false;

	// ---- Current state ----
	JobState state = JobState::kPending;
	double epochs_done = 0;            // completed (possibly fractional) epochs, across restarts
	int gpus_allocated = 0;            // 0 while pending
	std::vector<NodeShare> placement;  // empty while pending
	Seconds start_time = -1;           // start of the current run; -1 while pending
	Seconds first_start_time = -1;     // first time the job ever ran
	double attained_gpu_s = 0;         // GPU-seconds of service received so far (LAS policies)
	Seconds executed_s = 0;            // wall seconds run so far, across restarts
	int restarts = 0;                  // preemptions and resizes so far
	Seconds last_stop_time = -1;       // when it was last checkpointed and requeued; -1: never
	Seconds last_run_s = 0;            // length of the run that ended then
	// When the host asked the running job to checkpoint and stop (a preemption in progress: its
	// GPUs are freeing, no policy reconsiders it); -1: not asked.
	Seconds checkpoint_requested_at = -1;
	PreemptionCost preempt_cost;  // running jobs: the cost of stopping it now

	bool elastic() const { return gpus_min != gpus_max; }
	bool has_deadline() const { return deadline != kNoDeadline; }
	bool running() const { return state == JobState::kRunning; }
	bool stopping() const { return running() && checkpoint_requested_at >= 0; }
	double epochs_left() const { return epochs_total > epochs_done ? epochs_total - epochs_done : 0.0; }
};

}  // namespace dlsched

#endif
