// What dlsched-train simulates: training and validation workloads (slices of traces at a load),
// episodes under a teacher or under the policy being trained, with every decision recorded.
#ifndef DLSCHED_TRAIN_EPISODES_H
#define DLSCHED_TRAIN_EPISODES_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../sim/engine.h"
#include "../sim/metrics.h"
#include "models/policy_model.h"
#include "policy/registry.h"
#include "util/random.h"

namespace dlsched::train {

// "FILE" or "FILE@START:COUNT": jobs START .. START+COUNT-1 of a trace (by submit time).
struct TraceSpec {
	std::string path;
	std::size_t start = 0;
	std::size_t count = 0;  // 0: to the end
	std::string text;       // as given
};
Result<TraceSpec> parse_trace_spec(const std::string& text);

// A workload ready to simulate, with its physical limit (each job alone) on `nodes`.
struct Episode {
	std::string name;
	Workload workload;
	std::vector<Node> nodes;
	std::vector<double> bound;
	std::vector<double>
		speed_factor;  // each node's hidden speed (a cluster file's Fluctuation=); empty: none
};

struct EpisodeOptions {
	std::string cluster = "32x8";
	std::size_t jobs = 400;  // jobs per training episode (a random slice of a trace)
	double load_min = 1, load_max = 3;
	double elastic_fraction = 0;
	double restart_cost = 0;
	bool restart_model = false;  // --restart-cost model: each job's predicted suspend and resume
	double sched_interval = 60;
	std::string estimates = "oracle";  // what policies see: oracle or predicted (dlsched-sim --estimates)
	// From --config's dlsched.conf, as dlsched-sim takes them (their defaults otherwise): the grace a
	// preempted job has to checkpoint (PreemptGrace=), and how long a requeued job waits before it
	// may start again (RequeueDelay=: Slurm's CredExpire + 1 s), in every simulation.
	double preempt_grace = 600;
	double requeue_delay = 0;
};

class Workloads {
public:
	static Result<Workloads> load(const std::vector<std::string>& specs, const ModelCatalog& models,
				      const EpisodeOptions& options);
	// A random training episode: a random trace, a random slice of `jobs` jobs, a random load.
	Result<Episode> draw(Rng& rng) const;
	// Every spec whole, at `load` (validation and evaluation).
	Result<std::vector<Episode>> whole(double load, std::uint64_t seed) const;

private:
	Result<Episode> make(const TraceSpec& spec, std::size_t start, std::size_t count, double load,
			     std::uint64_t seed) const;
	std::vector<TraceSpec> specs_;
	std::vector<std::size_t> lengths_;  // jobs in each trace
	const ModelCatalog* models_ = nullptr;
	EpisodeOptions options_;
	std::vector<Node> nodes_;
	std::vector<double> fluctuation_;  // per node; a new draw of hidden speeds for every episode
};

struct EpisodeResult {
	sim::RunMetrics metrics;
	std::vector<PolicyStep> steps;
	Seconds makespan = 0;
};

// Runs `episode` under the preset `teacher` (a baseline that preempts or resizes: srtf, mckp,
// optimus, ...), recording its allocation's decisions as PolicySteps (unit picks) over the window the
// learned allocation would see.
Result<EpisodeResult> run_teacher(const Episode& episode, const std::string& teacher,
				  const ModelCatalog& models, const EpisodeOptions& options,
				  std::size_t window);

// Runs `episode` with the learned allocation of `model` (greedy) deciding, under `preset`, and the
// `teacher` preset's decisions on the same state recorded as each round's label (DAgger).
Result<EpisodeResult> run_dagger(const Episode& episode, std::shared_ptr<const models::PolicyModel> model,
				 const std::string& teacher, const std::string& preset,
				 const ModelCatalog& models, const EpisodeOptions& options,
				 std::size_t window);

// Runs `episode` under a baseline preset, recording nothing (a reference figure).
Result<EpisodeResult> run_preset(const Episode& episode, const std::string& preset,
				 const ModelCatalog& models, const EpisodeOptions& options);

// Runs `episode` under the learned ordering and allocation of `model` (sampled picks when `sample`),
// with the placement of `preset` (dl2 or dual-agent).
Result<EpisodeResult> run_policy(const Episode& episode, std::shared_ptr<const models::PolicyModel> model,
				 bool sample, std::uint64_t seed, const std::string& preset,
				 const ModelCatalog& models, const EpisodeOptions& options,
				 std::size_t window, bool record);

}  // namespace dlsched::train

#endif
