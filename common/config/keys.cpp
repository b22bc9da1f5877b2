// The one table of every dlsched.conf key: name, type, default, range and help. `dlsched-sim
// --print-config` prints from it; dlsched.conf(5) (doc/man) is written by hand from the same words:
// keep them in step (testsuite/sim/golden: every key here is in the man page and the example).
#include <cstring>
#include <strings.h>

#include "config/config.h"

namespace dlsched {

const std::vector<ConfigKey>& config_keys()
{
	static const std::vector<ConfigKey> kKeys = {
		// ---- Which policies ----
		{"Policy", ConfigType::kString, "slurm-backfill", 0, 0,
		 "scheduling policy preset: one policy of each kind (dlsched-sim --list-policies)"},
		{"OrderingPolicy", ConfigType::kString, "", 0, 0, "override the preset's ordering policy"},
		{"AllocationPolicy", ConfigType::kString, "", 0, 0,
		 "override the preset's allocation policy"},
		{"PlacementPolicy", ConfigType::kString, "", 0, 0, "override the preset's placement policy"},
		{"AdmissionPolicy", ConfigType::kString, "", 0, 0, "override the preset's admission policy"},
		{"PreemptionPolicy", ConfigType::kString, "", 0, 0,
		 "override the preset's preemption policy"},
		{"LoaningPolicy", ConfigType::kString, "", 0, 0, "override the preset's loaning policy"},
		{"FairnessPolicy", ConfigType::kString, "", 0, 0,
		 "override the preset's fairness between accounts (none: the preset's order alone; quota: "
		 "each account guaranteed its GPUs while it has work, idle quota lent, borrowed GPUs "
		 "reclaimed; fairshare: Slurm's fair-share factor first, then the preset's order)"},
		// ---- Scheduling cycles ----
		{"SchedInterval", ConfigType::kDouble, "60", 1, 86400,
		 "seconds between periodic scheduling cycles"},
		{"SchedOnEvents", ConfigType::kBool, "yes", 0, 0,
		 "also run a cycle when a job arrives or ends"},
		{"Seed", ConfigType::kInt, "1", 0, 2147483647, "seed of every random choice a policy makes"},
		{"RestartCost", ConfigType::kDouble, "0", 0, 86400,
		 "seconds a job loses on every restart or resize (checkpoint + reload); 0 = free; 'model': "
		 "each job's own suspend and resume times from its model (dlsched-sim's physics)",
		 "model"},
		{"RequeueDelay", ConfigType::kDouble, "0", 0, 86400,
		 "dlsched-sim: seconds a requeued job waits before it may start again, as Slurm holds it "
		 "back CredExpire + 1 s (121 s by default; counted in every restart's cost); sched/dlsched "
		 "reads the real delay from slurm.conf and ignores this key"},
		{"ResizePayback", ConfigType::kDouble, "2", 0, 1000,
		 "a running job is resized or moved only once its current run has lasted this many times "
		 "what the restart of a resize loses it (checkpoint write + resume, the requeue delay "
		 "included); 0: at once. Requeues (the order's preemptions, quota and loan reclaims) are "
		 "not held back"},
		{"ModelProfiles", ConfigType::kString, "", 0, 0,
		 "directory of per-model profiles (empty: the installed data directory)"},
		// ---- Profile DB and experience ----
		{"ProfileDB", ConfigType::kString, "", 0, 0,
		 "the job-profile database (SQLite) dlsched-ingestd writes (empty: none)"},
		{"ProfileRefresh", ConfigType::kDouble, "60", 1, 86400,
		 "sched/dlsched: seconds between reads of same-model histories from ProfileDB (a running "
		 "job's own records are read every cycle), and between attempts when it cannot be read; "
		 "both controller plugins: between reads of the epochs per node gp-placement learns machine "
		 "speeds from"},
		{"RecordExperience", ConfigType::kBool, "no", 0, 0,
		 "sched/dlsched: append each cycle of a learned ordering (state, action, reward) to "
		 "ProfileDB's experience table, for online fine-tuning"},
		{"DumpViews", ConfigType::kString, "", 0, 0,
		 "sched/dlsched: directory to write each cycle's view and decisions to as JSON "
		 "(view-NOW-CYCLE.json, the last 200 kept; replay one with dlsched-sim decide --view FILE); "
		 "empty: none"},
		// ---- Priority classes and preemption (policy/preempt_*.cpp, predict/overhead.h) ----
		{"PriorityQos", ConfigType::kString, "high", 0, 0,
		 "QoS names, highest class first (comma-separated), whose jobs go ahead of all other jobs "
		 "and may preempt jobs of lower classes"},
		{"PreemptGrace", ConfigType::kDouble, "600", 0, 86400,
		 "seconds a preempted job has to reach a safe point and write its checkpoint before it is "
		 "requeued anyway (as Slurm's GraceTime)"},
		{"PreemptDelayTolerance", ConfigType::kDouble, "5", 0, 3600,
		 "overhead: victims that free their GPUs within this many seconds of each other count as "
		 "equally soon; among them the fewest and oldest are stopped"},
		// ---- Deadlines (policy/deadline.cpp) ----
		{"DeadlineConfidence", ConfigType::kDouble, "0.9", 0.5, 0.999,
		 "deadline, deadline-autoscale: a job counts as finishing in time when it does so with this "
		 "probability under its prediction's uncertainty"},
		{"DeadlineInfeasible", ConfigType::kString, "best-effort", 0, 0,
		 "deadline: a job whose deadline cannot be met even at its largest size runs best-effort "
		 "(behind every admitted job, the reason shown), is held, or is cancelled",
		 "best-effort|hold|cancel"},
		{"DeadlineUrgency", ConfigType::kDouble, "0.1", 0, 1e6,
		 "deadline-autoscale: a deadline job goes ahead of the jobs without one once its slack is at "
		 "most this many times its remaining time; before that it is ordered among them by "
		 "remaining time"},
		{"LeastSlackBase", ConfigType::kString, "srtf", 0, 0,
		 "least-slack: the ordering of the jobs without a deadline, behind those with one",
		 "srtf|fifo|edf|drf"},
		// ---- Fairness between accounts (policy/fairness.cpp) ----
		{"QuotaReclaimTimeout", ConfigType::kDouble, "300", 0, 86400,
		 "quota: seconds an account below its quota waits for borrowed GPUs to come back on their "
		 "own "
		 "(jobs predicted to end by then are awaited) before the cheapest borrowing jobs are "
		 "checkpointed and requeued for it"},
		{"QuotaFile", ConfigType::kString, "", 0, 0,
		 "sched/dlsched and the advisor: a file of `account,gpus` lines (dlsched-sim --quotas' "
		 "format) whose quotas replace the ones Slurm's shares give (FairnessPolicy=quota); accounts "
		 "it does not list get none; read at every (re)load (empty: the shares)"},
		{"PriorityDecayHalfLife", ConfigType::kDouble, "604800", 0, 1e9,
		 "fairshare: half-life, seconds, of the usage the fair-share factor counts (as slurm.conf's; "
		 "dlsched-sim decays its accounts' usage with it; 0: never decays)"},
		// ---- Capacity loaning (policy/loaning_aryl.cpp) ----
		{"ReclaimTimeout", ConfigType::kDouble, "300", 1, 86400,
		 "aryl: seconds within which a loaned node taken back must be free for inference; its "
		 "training jobs get this long to checkpoint (a later reclaim is counted and logged)"},
		{"LoanHeadroom", ConfigType::kInt, "0", 0, 100000,
		 "aryl: inference nodes kept back beyond what the declared demand needs"},
		{"InferencePartition", ConfigType::kString, "", 0, 0,
		 "sched/dlsched: the Slurm partition whose nodes serve inference and may be lent to training "
		 "(also list them in the training partitions in slurm.conf); empty: no loaning"},
		{"InferenceDemandFile", ConfigType::kString, "", 0, 0,
		 "sched/dlsched: the file holding the inference demand (a fraction in [0, 1]), owned by root "
		 "or SlurmUser and writable by nobody else (empty: "
		 "StateSaveLocation/dlsched-inference-demand)"},
		{"LoanStateFile", ConfigType::kString, "", 0, 0,
		 "sched/dlsched: where the nodes lent to training are kept across restarts (empty: "
		 "StateSaveLocation/dlsched-loans)"},
		{"CheckpointSignal", ConfigType::kString, "USR1", 0, 0,
		 "sched/dlsched: the signal that asks a job to checkpoint and stop (the protocol's; the same "
		 "as plugstack.conf's checkpoint_signal= of spank/dlsched)",
		 "USR1|USR2|TERM|INT|HUP|URG"},
		{"KillWait", ConfigType::kDouble, "30", 0, 65533,
		 "preempt-qos: seconds Slurm gives a requeued job between SIGTERM and SIGKILL (slurm.conf "
		 "KillWait), all its victims have to checkpoint"},
		{"CheckpointAt", ConfigType::kString, "epoch", 0, 0,
		 "where a job can stop and checkpoint when asked: at the end of its epoch, or after any "
		 "iteration (simulator physics; the overhead estimate when nothing is measured)",
		 "epoch|iteration"},
		{"StorageWriteMBps", ConfigType::kDouble, "500", 0.001, 1e9,
		 "MB/s a checkpoint is written at (simulator physics; estimate when nothing is measured)"},
		{"StorageReadMBps", ConfigType::kDouble, "500", 0.001, 1e9,
		 "MB/s a checkpoint is read back at (simulator physics; estimate when nothing is measured)"},
		{"WarmupFraction", ConfigType::kDouble, "0.1", 0, 10,
		 "the first epoch after a restart takes this fraction of an epoch longer: data not cached "
		 "yet (simulator physics; estimate when nothing is measured)"},
		{"WarmupSeconds", ConfigType::kDouble, "0", 0, 86400,
		 "seconds a restarted job's new process takes before it trains (importing the framework, "
		 "the GPU context, building the model, the first iterations' tuning), whatever its epoch; "
		 "dlsched-calibrate measures it (simulator physics; part of every resume estimate)"},
		// ---- Trust in what users say about their jobs (predict/hints.h) ----
		{"HintTrustFactor", ConfigType::kDouble, "10", 1, 1e6,
		 "a job's claimed runtime (--dl-epochs, comment words) counts down to its time limit / "
		 "this factor at the shortest, and never beyond its time limit"},
		{"HintFloorNoTimeLimit", ConfigType::kDouble, "3600", 0, 1e9,
		 "seconds: a job without a time limit counts as at least this long, whatever it claims"},
		// ---- Policy-specific keys (policy/*.cpp) ----
		{"BackfillMaxJobs", ConfigType::kInt, "1000", 1, 1000000,
		 "slurm-backfill: pending jobs examined per cycle (as Slurm's bf_max_job_test)"},
		{"TiresiasQueueThresholds", ConfigType::kDoubleList, "3250,7200", 0, 1e12,
		 "tiresias-las: attained-service thresholds between queues, GPU-seconds, increasing"},
		{"ModelFile", ConfigType::kString, "", 0, 0,
		 "dl2, dual-agent: the trained model (empty: the shipped models/dl2.pt)"},
		{"ModelWindow", ConfigType::kInt, "512", 1, 65536,
		 "dl2, dual-agent: most jobs the network ranks per cycle (the rest follow in arrival order)"},
		{"ModelTimeScale", ConfigType::kDouble, "1", 0.001, 1e6,
		 "dl2, dual-agent: seconds of the model's time per second of this clock; the network's time "
		 "features (hours) are read at this scale. 1 on a real cluster; on an emulated one replaying "
		 "a trace N times faster, N (dlsched-cluster --time-scale)"},
		// The heuristic orderings of policy/builtin.cpp (test_policy checks that these are all of
		// them); learned ones are refused by name.
		{"ModelFallback", ConfigType::kString, "tiresias-las", 0, 0,
		 "dl2, dual-agent: the heuristic ordering used when the model cannot be loaded (the reason "
		 "is logged)",
		 "tiresias-las|srtf|fifo|drf|edf|least-slack", "dl2|dual-agent",
		 "is a learned ordering; a fallback must be a heuristic ordering"},
		// ---- The learned policy's guard (policy/guard.h) ----
		{"LearnedGuard", ConfigType::kBool, "yes", 0, 0,
		 "dl2, dual-agent: every GuardInterval= a shadow evaluation replays the recent jobs with the "
		 "learned policy and with GuardPolicy=, and the better one schedules until the next; no: the "
		 "learned policy always decides"},
		{"GuardInterval", ConfigType::kDouble, "7200", 60, 1e9,
		 "guard: seconds of cluster time between shadow evaluations"},
		{"GuardWindow", ConfigType::kDouble, "86400", 60, 1e9,
		 "guard: an evaluation replays the jobs submitted in the last this many seconds (finished, "
		 "running and pending, as the controller knew them); at least GuardInterval="},
		{"GuardPolicy", ConfigType::kString, "mckp", 0, 0,
		 "guard: the heuristic preset the learned policy is judged against, and that schedules while "
		 "it does better",
		 nullptr, "dl2|dual-agent",
		 "is a learned policy; the guard's policy must be a heuristic preset"},
		{"GuardMargin", ConfigType::kDouble, "0.02", 0, 1,
		 "guard: the learned policy takes the cluster back only when its replayed average JCT is "
		 "this "
		 "fraction better than GuardPolicy='s (0.02 or 2%)",
		 nullptr, nullptr, nullptr, true},
		{"GuardVerdictFile", ConfigType::kString, "", 0, 0,
		 "guard, in Slurm: the verdict file dlsched-guard writes and sched/dlsched follows, owned "
		 "by root or SlurmUser and writable by nobody else (empty: "
		 "StateSaveLocation/dlsched-guard.verdict)"},
		{"TiresiasStarveFactor", ConfigType::kDouble, "0", 0, 1000,
		 "tiresias-las: a job waiting, since it was last preempted, this x its executed time goes to "
		 "the top queue (0 = never)"},
	};
	return kKeys;
}

const ConfigKey* find_config_key(std::string_view name)
{
	for (const ConfigKey& k : config_keys())
		if (std::strlen(k.name) == name.size() && strncasecmp(k.name, name.data(), name.size()) == 0)
			return &k;
	return nullptr;
}

}  // namespace dlsched
