// The figures every dlsched-sim run reports, and how they are printed (table, JSON).
#ifndef DLSCHED_SIM_METRICS_H
#define DLSCHED_SIM_METRICS_H

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine.h"
#include "fairness.h"
#include "json/json.h"

namespace dlsched::sim {

// The figures of the jobs of one QoS (priority class).
struct QosMetrics {
	std::size_t jobs = 0;
	double avg_jct_s = 0, avg_queue_s = 0, p95_queue_s = 0;
	std::optional<double> deadline_met_rate;
};

struct RunMetrics {
	std::string policy;
	std::string fallback;  // the heuristic a learned policy fell back to (empty: none)
	Estimates estimates = Estimates::kOracle;  // what the policy saw of the jobs' lengths
	std::size_t jobs = 0;
	double avg_jct_s = 0, p50_jct_s = 0, p95_jct_s = 0, p99_jct_s = 0;
	double avg_queue_s = 0;                   // first start - submit
	double makespan_s = 0;                    // last completion - first submit (0)
	double gpu_util = 0;                      // GPU-seconds held / (GPUs x makespan)
	std::optional<double> deadline_met_rate;  // none when no job has a deadline
	long preemptions = 0;
	long resizes = 0;
	double lost_gpu_s = 0;
	double decision_ms_p50 = 0, decision_ms_p99 = 0;
	double bound_avg_jct_s = 0;  // mean runtime alone at requested GPUs: the physical limit
	std::size_t cycles = 0;
	std::size_t dropped = 0;
	std::size_t cancelled = 0;  // held or cancelled by the Admission policy (DeadlineInfeasible=)
	std::map<std::string, QosMetrics> by_qos;  // by QoS name ("normal" for jobs without one)
	// Capacity loaning (--inference-demand): see SimResult. cluster_gpu_util: training's and
	// inference's GPU-seconds over all GPUs x makespan (training's alone without a demand series).
	bool loaning = false;
	double loaned_gpu_s = 0;
	long reclaims = 0, late_reclaims = 0, reclaim_preemptions = 0;
	double inference_shortfall_gpu_s = 0;
	double cluster_gpu_util = 0;
	double window_gpu_util = 0;  // the same over the arrival window (SimResult::window_s)
	// --quotas: the accounts' figures (by_account and fairness in the JSON).
	std::optional<FairnessMetrics> fairness;
	// A learned policy (dl2, dual-agent) and its guard (SimResult::guard*): set by the host.
	bool learned = false;
	bool guard = false;
	std::string guard_policy;
	long guard_evaluations = 0, guard_switches = 0;
	double guard_learned_fraction = 1;  // of the scheduling cycles, decided by the learned policy
	double guard_eval_ms_p50 = 0, guard_eval_ms_max = 0;  // wall time of one evaluation (both replays)
};

// Nearest-rank percentile of `v` (copied and sorted); 0 for an empty vector.
double percentile(std::vector<double> v, double p);

// The physical limit of each job (by job id - 1): its runtime alone on the empty cluster `nodes` at
// its requested GPUs, on the fewest eligible nodes of the fastest GPU type that can hold it (a
// mixed placement runs at its slowest GPU). The workload's own trace_runtime_s assumes 8-GPU nodes
// of the reference GPU; this follows the cluster simulated.
std::vector<double> bound_runtimes(const Workload& w, const ModelCatalog& models,
				   const std::vector<Node>& nodes);

// `bound`: bound_runtimes() of the same workload and cluster (empty: the workload's trace runtimes).
RunMetrics compute_metrics(const std::string& policy, const SimResult& r, const Workload& w,
			   const std::vector<double>& bound = {});

json::Value to_json(const RunMetrics& m);
// One table, the ratio column against the first run.
std::string format_table(const std::vector<RunMetrics>& runs);
// "45s", "12.5m", "3.20h", "2.1d".
std::string human_duration(double seconds);

}  // namespace dlsched::sim

#endif
