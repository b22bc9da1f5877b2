// The one table of every dlsched.conf key: name, type, default, range and help. dlsched.conf(5) and
// `dlsched-sim --print-config` are generated from the same words; keep them in step.
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
	        {"AllocationPolicy", ConfigType::kString, "", 0, 0, "override the preset's allocation policy"},
	        {"PlacementPolicy", ConfigType::kString, "", 0, 0, "override the preset's placement policy"},
	        {"AdmissionPolicy", ConfigType::kString, "", 0, 0, "override the preset's admission policy"},
	        {"PreemptionPolicy", ConfigType::kString, "", 0, 0, "override the preset's preemption policy"},
	        {"LoaningPolicy", ConfigType::kString, "", 0, 0, "override the preset's loaning policy"},
	        // ---- Scheduling cycles ----
	        {"SchedInterval", ConfigType::kDouble, "60", 1, 86400,
	         "seconds between periodic scheduling cycles"},
	        {"SchedOnEvents", ConfigType::kBool, "yes", 0, 0,
	         "also run a cycle when a job arrives or ends"},
	        {"Seed", ConfigType::kInt, "1", 0, 2147483647, "seed of every random choice a policy makes"},
	        {"RestartCost", ConfigType::kDouble, "0", 0, 86400,
	         "seconds a job loses on every restart or resize (checkpoint + reload); 0 = free"},
	        {"ModelProfiles", ConfigType::kString, "", 0, 0,
	         "directory of per-model profiles (empty: the installed data directory)"},
	        // ---- Profile DB and experience ----
	        {"ProfileDB", ConfigType::kString, "", 0, 0,
	         "the job-profile database (SQLite) dlsched-ingestd writes (empty: none)"},
	        {"RecordExperience", ConfigType::kBool, "no", 0, 0,
	         "sched/dlsched: append each cycle of a learned ordering (state, action, reward) to "
	         "ProfileDB's experience table, for online fine-tuning"},
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
	        {"ModelFallback", ConfigType::kString, "tiresias-las", 0, 0,
	         "dl2, dual-agent: ordering used when the model cannot be loaded (the reason is logged)"},
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
