// The discrete-event simulation of a GPU cluster that hosts a Scheduler (dlsched-sim(1)).
#ifndef DLSCHED_SIM_ENGINE_H
#define DLSCHED_SIM_ENGINE_H

#include <functional>
#include <string>
#include <vector>

#include "estimates.h"
#include "fairness.h"
#include "model/cluster_view.h"
#include "policy/guard.h"
#include "policy/scheduler.h"
#include "predict/hints.h"
#include "predict/overhead.h"
#include "workload/inference_demand.h"
#include "workload/workload.h"

namespace dlsched::sim {

// What a job's placement does to its speed. kNodes: a job runs at the speed of the nodes it spans
// (spread out, slower). kCount (--placement-model count, with the `count` placement): GPUs count
// wherever they are, and a job runs as if packed on the fewest nodes, i.e. at exactly its trace
// runtime (Tiresias' simulator with --scheme=count).
enum class PlacementModel { kNodes, kCount };

struct SimOptions {
	Seconds sched_interval = 60;  // periodic cycles (SchedInterval)
	bool sched_on_events = true;  // cycles on arrivals and completions (SchedOnEvents)
	Seconds restart_cost = 0;     // seconds without progress after every restart or resize
	// RestartCost=model: preemption is two-step, as sched/dlsched does it (predict/overhead.h): a
	// job asked to stop trains on to its next safe point (CheckpointAt=), writes its checkpoint and
	// only then frees its GPUs, or is killed when its grace runs out (Action::grace, else
	// preempt_grace) and loses what it trained since its last epoch boundary; a restart reads the
	// checkpoint back and warms up. Each job's write, read and warm-up times are the model profile's
	// times a per-job log-normal factor (sd cost_noise); policies see the profile's (PreemptionCost).
	bool restart_model = false;
	predict::OverheadParams overhead;
	Seconds preempt_grace = 600;  // PreemptGrace
	// RequeueDelay: a requeued job may not start again before this many seconds have passed (Slurm
	// holds it back for CredExpire + 1 s), and it leaves the view meanwhile, as sched/dlsched's
	// snapshot leaves out a job whose begin time is ahead; a resize (checkpoint, requeue at the new
	// size) resumes that much later. Policies count it in every running job's resume cost, as the C
	// ABI does with slurm.conf's delay. 0 (the default): no delay.
	Seconds requeue_delay = 0;
	double cost_noise = 0.2;
	bool drop_unrunnable = false;  // drop jobs no eligible nodes can ever hold (else an error)
	PlacementModel placement_model = PlacementModel::kNodes;
	// Each node's hidden speed factor (draw_speed_factors(); empty: every node runs at its GPU type's
	// speed). Jobs run at it; policies never see it, only the engine's measurements of it.
	std::vector<double> speed_factor;
	// Speed measurements (ClusterView::observations): every run is measured on each of its nodes
	// once it has progressed `observe_after` seconds, and when it ends (completion, requeue, resize),
	// as an epoch-time collector would; each with multiplicative log-normal noise of this sd, seeded.
	// Estimates::kPredicted times each epoch with the same noise.
	Seconds observe_after = 300;
	double measurement_noise = 0.03;
	// What policies see of each job's length (--estimates; estimates.h): the truth (kOracle), or what
	// a controller would know (kPredicted: its own timed epochs, else same-model history, else the
	// user's word bounded by `hint_limits`; noise from `dlsched-db accuracy`). The engine runs every
	// job at its true speed either way.
	Estimates estimates = Estimates::kOracle;
	predict::HintLimits
		hint_limits;  // HintTrustFactor=, HintFloorNoTimeLimit= (gpus_per_node: the nodes')
	std::size_t observation_history = 512;  // the most recent measurements the view carries
	std::uint64_t seed = 1;                 // of the measurement noise (Seed=)
	DecisionRecorder* recorder = nullptr;   // given to learned policies in every view (dlsched-train)
	// Capacity loaning (--inference-demand): the fraction of the inference nodes' GPUs inference
	// needs, from the workload's first submission on (repeated when shorter). Empty: none.
	InferenceDemand inference_demand;
	// ReclaimTimeout=: a node taken back must be free of training within this many seconds; at the
	// timeout the jobs still on it are killed (back to their last epoch boundary) and the reclaim is
	// counted late. Inference GPUs still missing this long after the need arose are its shortfall.
	Seconds reclaim_timeout = 300;
	// The accounts the jobs are charged to (--quotas; FairnessPolicy=): every account of the workload,
	// with its quota and shares. The engine decays their usage (usage_half_life; 0: never) into the
	// views, and keeps each one's ledger (AccountLedger) with quota_reclaim_timeout. Empty: none.
	std::vector<Account> accounts;
	Seconds quota_reclaim_timeout = 300;
	Seconds usage_half_life = 604800;
	// The learned policy's guard (LearnedGuard=, policy/guard.h): with `guard_scheduler` (the
	// GuardPolicy= preset) and guard.enabled, the scheduler given to simulate() is the learned one;
	// every guard.interval of simulated time the engine replays guard_snapshot() of what it knows
	// then (jobs arrived, finished ones at their measured length, the others at the estimates the
	// policies see) on an empty copy of the cluster with each of the two, and the GuardState's choice
	// decides the cycles until the next evaluation. The replays' wall time is not a decision's.
	const Scheduler* guard_scheduler = nullptr;
	GuardSettings guard;
	// Tests: called with each evaluation's time and the jobs it replays.
	std::function<void(Seconds, const std::vector<Job>&)> guard_observer;
	// Called about once a second of wall time with (simulated time, jobs done, jobs total).
	std::function<void(Seconds, std::size_t, std::size_t)> progress;
};

// What happened to one job.
struct JobOutcome {
	JobId id = 0;
	Seconds submit = 0;
	Seconds first_start = -1;
	Seconds finish = -1;
	Seconds deadline = kNoDeadline;
	std::string qos;
	std::string account;
	double gpu_seconds = 0;  // GPUs held x time
	double lost_gpu_s = 0;   // GPU-seconds of restart costs and work thrown away
	int preemptions = 0;
	int resizes = 0;
	bool cancelled = false;  // held or cancelled by the Admission policy (never ran; finish = then)
};

struct SimResult {
	std::vector<JobOutcome> jobs;
	std::vector<double> decision_ms;  // wall time of each decide() call
	std::size_t cycles = 0;
	std::size_t dropped = 0;  // jobs dropped as unrunnable (drop_unrunnable)
	int total_gpus = 0;
	double lost_gpu_s = 0;  // restart costs x GPUs, and work thrown away by kills
	Seconds makespan = 0;
	// Capacity loaning.
	double loaned_gpu_s = 0;               // GPU-seconds training jobs held on inference nodes
	long reclaims = 0;                     // loaned nodes taken back
	long late_reclaims = 0;                // ... not free of training within ReclaimTimeout=
	long reclaim_preemptions = 0;          // jobs requeued (not shrunk) to free a node taken back
	double inference_shortfall_gpu_s = 0;  // GPUs inference needed and lacked beyond the timeout x s
	double inference_gpu_s = 0;  // GPU-seconds inference used (its demand, as far as it had GPUs)
	int inference_gpus = 0;      // GPUs of the inference nodes
	// The arrival window (first to last submission) and the GPU-seconds training held and inference
	// used in it: the cluster's usage while work arrives (the long tail after it is alike for all).
	Seconds window_s = 0;
	double window_gpu_s = 0;
	Estimates estimates = Estimates::kOracle;  // what the policies saw (SimOptions::estimates)
	// Accounts (SimOptions::accounts), each one's ledger, and the quota reclaims: jobs requeued to
	// give borrowed GPUs back, and their GPUs.
	std::vector<Account> accounts;
	std::vector<AccountLedger::Totals> account_totals;
	long quota_reclaims = 0;
	double quota_reclaimed_gpus = 0;
	// The guard (SimOptions::guard): every evaluation, switches among them, cycles decided by the
	// learned policy, and each evaluation's wall time (both replays).
	bool guard = false;
	std::vector<GuardVerdict> guard_log;
	long guard_switches = 0;
	std::size_t guard_learned_cycles = 0;
	std::vector<double> guard_eval_ms;
};

// Runs `workload` to completion under `scheduler`. Errors: a policy's invalid action (naming the
// policy, cycle and job), a job that can never run, a scheduler that stops making progress.
Result<SimResult> simulate(const Workload& workload, const ModelCatalog& models, std::vector<Node> nodes,
			   const Scheduler& scheduler, const SimOptions& options);

}  // namespace dlsched::sim

#endif
