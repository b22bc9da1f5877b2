// dlsched-train's command line and what its commands share (options, progress, the model's
// provenance, validation runs). Each command is a thin file of its own (cmd_*.cpp).
#ifndef DLSCHED_TRAIN_CLI_H
#define DLSCHED_TRAIN_CLI_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "episodes.h"
#include "json/json.h"
#include "models/policy_model.h"
#include "models/train.h"
#include "returns.h"

namespace dlsched::train {

struct Options {
	std::string command, out, init, curve, png, checkpoint_dir, db, cluster_name, sacct_file, info_file;
	std::string workload_file, json_out;  // site: the history as a workload file; the report card's JSON
	std::string fine_tune;                // site: PPO starts from this model (no warm-up)
	std::string config;  // a dlsched.conf: its RequeueDelay= and PreemptGrace= go into every simulation
	double holdout_fraction = 0.3;  // site: the later part of the history judged on, never trained on
	std::vector<std::string> teachers{"mckp", "optimus"};
	std::vector<std::string> workloads, validate;
	std::vector<double> val_loads{1, 2};
	EpisodeOptions ep;
	std::string preset = "dl2";
	std::size_t window = 512;
	double time_scale = 1;  // sacct: the history's clock speedup (ModelTimeScale=)
	int hidden = 64;
	int episodes = -1, epochs = -1, iterations = 20, ppo_epochs = 4, validate_every = 1, rollouts = 4;
	double entropy = 0.01, target_kl = 0.01;
	int dagger = 0;
	std::string reference = "srtf";
	double lr = -1, since = 0;
	Reward reward;
	std::uint64_t seed = 1;
	bool resume = false, quiet = false, cluster_name_given = false;
	bool force = false;  // site: write the model even when it does not beat the best heuristic
	// Given on the command line (site picks its own defaults for what was not).
	bool cluster_given = false, teacher_given = false, load_given = false, restart_given = false,
	     estimates_given = false, iterations_given = false;
};

// Parses argv into `o`; returns -1 to go on, else the exit code (usage errors: 2).
int parse_args(int argc, char** argv, Options& o);
int usage_error(const std::string& m);
// Prints `st` in one line and returns 1.
int fail(const Status& st);

// Progress lines on stderr.
struct Clock {
	std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
	double seconds() const
	{
		return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	}
};

std::vector<std::string> default_training(const std::string& data);
std::vector<std::string> default_validation(const std::string& data);
// Appends a stage to the model's provenance (the JSON in the model file).
void add_stage(models::PolicyModel& m, json::Value stage);
json::Value string_array(const std::vector<std::string>& v);
// The model to start from: --init, or fresh weights.
Result<std::shared_ptr<models::PolicyModel>> start_model(const Options& o);
// Whether `path` can be written (its directory exists and is writable, the file is not a
// directory), checked before hours of training rather than after.
Status check_writable(const std::string& path, const char* what);

// Decisions kept per recorded round.
inline constexpr std::size_t kMaxDecisions = 128;
// Turns an episode's steps into samples with their returns (scaled by `scale`) and, when given,
// their advantages (scaled the same way).
void add_samples(std::vector<PolicyStep>& steps, const std::vector<double>& ret, double scale,
		 std::vector<models::Sample>& out, const std::vector<double>* adv = nullptr);

struct Validation {
	double slowdown = 0;  // mean over the validation runs of avg JCT / bound
	std::vector<sim::RunMetrics> runs;
};
Result<Validation> validate(const std::shared_ptr<const models::PolicyModel>& model,
			    const std::vector<Episode>& val, const Options& o, const ModelCatalog& models);
Result<std::vector<Episode>> validation_set(const Options& o, const ModelCatalog& models,
					    const std::string& data);

int cmd_init(const Options& o);
int cmd_info(const Options& o);
int cmd_sl(const Options& o, const ModelCatalog& models, const std::string& data);
int cmd_rl(const Options& o, const ModelCatalog& models, const std::string& data);
int cmd_online(const Options& o);
int cmd_sacct(const Options& o, const ModelCatalog& models);
int cmd_site(const Options& o, const ModelCatalog& models, const std::string& data);

}  // namespace dlsched::train

#endif
