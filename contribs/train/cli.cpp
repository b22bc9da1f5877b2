#include "cli.h"

#include <cstdio>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "models/features.h"
#include "util/csv.h"
#include "util/flag_table.h"

namespace dlsched::train {

namespace {

// The usage lines; the options part of --help is written by the flag table (train_flags).
const char* const kUsage =
	"usage: dlsched-train init --out FILE [--hidden N] [--seed N]\n"
	"       dlsched-train sl --out FILE [--teacher NAME[,NAME...]] [--init FILE] [--episodes N] "
	"[--epochs N]\n"
	"                        [--dagger R] [options]\n"
	"       dlsched-train sacct --out FILE --sacct FILE [--init FILE] [--epochs N] [--cluster SPEC] "
	"[--time-scale N]\n"
	"       dlsched-train rl --init FILE --out FILE [--iterations N] [--episodes N] [--rollouts K] "
	"[--validate SPEC,...]\n"
	"                        [--curve FILE.csv] [--png FILE.png] [--checkpoint-dir DIR] [--resume] "
	"[options]\n"
	"       dlsched-train site --out FILE (--sacct FILE | --workload FILE) --cluster SPEC "
	"[--holdout-fraction F]\n"
	"                          [--json FILE] [--force] [--teacher NAME,...] [--init FILE | --fine-tune "
	"FILE]\n"
	"                          [--iterations N] [options]\n"
	"       dlsched-train online --init FILE --out FILE --db FILE [--cluster-name NAME] [--since S] "
	"[--epochs N]\n"
	"       dlsched-train info FILE\n"
	"\n"
	"sl's teachers (--teacher, default mckp,optimus): presets that preempt or resize (mckp, optimus, "
	"srtf,\n"
	"tiresias-las, ...); their decisions are recorded as the unit picks the learned allocation would "
	"make.\n"
	"\n"
	"site: the site's history (sacct -X -P -o JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment, or a "
	"workload\n"
	"file dlsched-sim reads) split by submit time; warm-up from the best of srtf, mckp, optimus and\n"
	"tiresias-las on the earlier part (--fine-tune FILE: none, PPO starts from FILE), PPO on it, a "
	"report\n"
	"card against them on the later part. --out is\n"
	"written only when dl2 beats the best heuristic there (else exit status 3). Defaults: --restart-cost "
	"model,\n"
	"--estimates predicted, --load-min 1 --load-max 1.5, --episodes 8 --epochs 3 (the warm-up),\n"
	"--iterations 6.\n"
	"\n";

std::vector<std::string> split(const std::string& s)
{
	std::vector<std::string> out;
	std::stringstream ss(s);
	std::string item;
	while (std::getline(ss, item, ','))
		if (!item.empty())
			out.push_back(item);
	return out;
}

}  // namespace

int usage_error(const std::string& m)
{
	std::fprintf(stderr, "dlsched-train: %s\n(dlsched-train --help for usage)\n", m.c_str());
	return 2;
}

int fail(const Status& st)
{
	std::fprintf(stderr, "dlsched-train: %s\n", st.message().c_str());
	return 1;
}

namespace {

// Every flag of every command: what it takes, its range, where its value goes and its --help line.
FlagTable train_flags(Options& o)
{
	auto list = [](std::string name, std::string metavar, std::string help,
		       std::vector<std::string>* dest) {
		return value_flag(std::move(name), std::move(metavar), std::move(help),
				  [dest](const std::string& v) {
					  *dest = split(v);
					  return Status::ok();
				  });
	};
	return FlagTable({
		string_flag(
			"--out", "FILE",
			"the model written (every command but info); checked writable before any training",
			&o.out),
		string_flag("--init", "FILE",
			    "the model to start from (sl, sacct, site's warm-up: optional; rl, online: "
			    "required)",
			    &o.init),
		string_flag("--fine-tune", "FILE",
			    "site: PPO starts from FILE (e.g. the shipped dl2.pt), no warm-up; FILE is\n"
			    "judged on the held-out part too",
			    &o.fine_tune),
		int_flag("--hidden", "N", "init: width of the hidden layers (default 64)", &o.hidden, 4,
			 1024),
		list("--teacher", "NAME[,NAME...]", "sl, site: the teachers (default mckp,optimus)",
		     &o.teachers),
		int_flag("--episodes", "N", "sl, rl: episodes (per iteration in rl)", &o.episodes, 1, 100000),
		int_flag("--epochs", "N", "sl, sacct, online: passes over the samples", &o.epochs, 1, 10000),
		int_flag("--iterations", "N", "rl, site: PPO iterations (default 20; site 6)", &o.iterations,
			 0, 100000),
		string_flag("--sacct", "FILE",
			    "sacct, site: the cluster's history (sacct -X -P output with a header line)",
			    &o.sacct_file),
		string_flag("--workload", "FILE",
			    "site: the history as a workload file (any format dlsched-sim reads)",
			    &o.workload_file),
		list("--workloads", "SPEC,...",
		     "training traces: FILE or FILE@START:COUNT (default: Philly 2017-10-02 jobs\n"
		     "0-3999 and Pollux workloads 1-4, bundled)",
		     &o.workloads),
		list("--validate", "SPEC,...",
		     "validation traces, run whole (default: Philly 2017-10-02 jobs 4000-4999, Pollux 5)",
		     &o.validate),
		string_flag("--cluster", "SPEC",
			    "simulated cluster, NxG or a cluster file (default 32x8; site: required)",
			    &o.ep.cluster),
		number_flag("--holdout-fraction", "F",
			    "site: the later fraction of the jobs, by submit time, judged on (default 0.3)",
			    &o.holdout_fraction, 0.01, 0.99),
		string_flag("--json", "FILE", "site: the report card as JSON", &o.json_out),
		switch_flag("--force", "site: write --out even when dl2 does not beat the best heuristic",
			    &o.force),
		whole_flag("--jobs", "N", "jobs per training episode, a random slice (default 400)",
			   &o.ep.jobs, 10, 1000000),
		number_flag("--load-min", "X",
			    "training load range, inter-arrival compression (default 1 to 3)", &o.ep.load_min,
			    0.01, 1000),
		number_flag("--load-max", "X", "the top of the training load range", &o.ep.load_max, 0.01,
			    1000),
		value_flag("--val-loads", "X,...", "validation loads (default 1,2)",
			   [&o](const std::string& v) {
				   o.val_loads.clear();
				   for (const std::string& t : split(v)) {
					   double x = 0;
					   if (!parse_number(t, x) || x <= 0)
						   return invalid_argument("--val-loads: '" + t +
									   "' is not a positive number");
					   o.val_loads.push_back(x);
				   }
				   return Status::ok();
			   }),
		number_flag("--elastic-fraction", "F", "fraction of elastic jobs in training (default 0)",
			    &o.ep.elastic_fraction, 0, 1),
		value_flag("--restart-cost", "S|model",
			   "seconds a restart costs in the simulator, or each model's predicted suspend\n"
			   "and resume (dlsched-sim --restart-cost) (default 0)",
			   [&o](const std::string& v) {
				   if (v == "model") {
					   o.ep.restart_model = true;
					   return Status::ok();
				   }
				   return number_value(v, 0, 86400, o.ep.restart_cost);
			   }),
		string_flag(
			"--config", "FILE",
			"a dlsched.conf (the site's): its RequeueDelay= and PreemptGrace= hold in every\n"
			"simulation, as dlsched-sim --config takes them (default: their defaults, 0 and 600)",
			&o.config),
		number_flag("--preemption-penalty", "S",
			    "reward: seconds of one job's time charged per preemption (default 120)",
			    &o.reward.preemption_penalty_s, 0, 1e6),
		number_flag(
			"--resize-penalty", "S",
			"reward: seconds of one job's time charged per resize of a running job (default 120)",
			&o.reward.resize_penalty_s, 0, 1e6),
		value_flag("--estimates", "MODE",
			   "what policies see: oracle (the truth) or predicted (the predictor's estimates,\n"
			   "as in slurmctld; dlsched-sim --estimates) (default oracle)",
			   [&o](const std::string& v) {
				   if (v != "oracle" && v != "predicted")
					   return invalid_argument("'" + v + "': want oracle or predicted");
				   o.ep.estimates = v;
				   return Status::ok();
			   }),
		number_flag("--horizon", "S", "reward discount horizon in seconds (default 14400)",
			    &o.reward.horizon_s, 60, 1e8),
		string_flag("--preset", "NAME",
			    "dl2 or dual-agent: the learned agent, with pack or gp-placement (default dl2)",
			    &o.preset),
		whole_flag("--window", "N", "jobs the network looks at per cycle (default 512)", &o.window, 1,
			   65536),
		number_flag("--time-scale", "N",
			    "sacct: the history's cluster ran N times faster than real time (an emulated\n"
			    "replay's speedup; the cluster's ModelTimeScale=) (default 1)",
			    &o.time_scale, 0.001, 1e6),
		number_flag("--lr", "X", "learning rate (default 3e-4; sl 1e-3)", &o.lr, 1e-7, 1),
		int_flag("--ppo-epochs", "N", "PPO epochs per iteration (default 4)", &o.ppo_epochs, 1, 100),
		int_flag("--dagger", "R",
			 "sl: R DAgger rounds after the warm-up (the model acts, the teacher labels;\n"
			 "--episodes/2 runs a round), keeping the best model by validation (default 0)",
			 &o.dagger, 0, 1000),
		int_flag("--rollouts", "K",
			 "rl: sampled rollouts of each drawn workload; a step's baseline is the other\n"
			 "rollouts' return from the same time (default 4; 1: the value network)",
			 &o.rollouts, 1, 64),
		number_flag("--entropy", "X", "rl: entropy bonus (default 0.01)", &o.entropy, 0, 1),
		number_flag("--target-kl", "X",
			    "rl: stop an iteration's update once the policy moved this far (default 0.01; 0: "
			    "never)",
			    &o.target_kl, 0, 10),
		string_flag("--reference", "NAME",
			    "rl: also validate this baseline preset, for scale (default srtf; '' for none)",
			    &o.reference),
		string_flag("--curve", "FILE.csv", "rl: one CSV line per iteration", &o.curve),
		string_flag("--png", "FILE.png", "rl: the curve's plot (gnuplot)", &o.png),
		string_flag("--checkpoint-dir", "DIR",
			    "rl: keep last.pt, best.pt and the iteration number in DIR", &o.checkpoint_dir),
		switch_flag("--resume", "rl: continue from --checkpoint-dir", &o.resume),
		int_flag("--validate-every", "N", "iterations between validations (default 1)",
			 &o.validate_every, 1, 100000),
		string_flag("--db", "FILE", "online: the profile DB with sched/dlsched's experience", &o.db),
		string_flag("--cluster-name", "NAME",
			    "online: the cluster whose rows are read (default: the only one)",
			    &o.cluster_name),
		number_flag("--since", "S", "online: the time (Unix seconds) from which rows are read",
			    &o.since, 0, 1e12),
		whole_flag("--seed", "N", "seed of everything random (default 1)", &o.seed, 0, 2147483647),
		switch_flag("--quiet", "no progress lines", &o.quiet),
	});
}

void print_help()
{
	Options o;
	std::printf("%soptions:\n%s", kUsage, train_flags(o).options_help().c_str());
}

}  // namespace

int parse_args(int argc, char** argv, Options& o)
{
	int first = 1;
	if (first < argc && argv[first][0] != '-')
		o.command = argv[first++];
	FlagTable flags = train_flags(o);
	std::vector<std::string> positional;
	if (Status st = flags.parse(argc, argv, first, &positional); !st.is_ok())
		return usage_error(st.message());
	if (flags.help_asked()) {
		print_help();
		return 0;
	}
	// info FILE: the one argument that is not a flag.
	for (const std::string& a : positional) {
		if (o.command != "info" || !o.info_file.empty())
			return usage_error("unexpected argument '" + a + "'");
		o.info_file = a;
	}
	o.cluster_name_given = flags.given("--cluster-name");
	o.cluster_given = flags.given("--cluster");
	o.teacher_given = flags.given("--teacher");
	o.iterations_given = flags.given("--iterations");
	o.load_given = flags.given("--load-min") || flags.given("--load-max");
	o.restart_given = flags.given("--restart-cost");
	o.estimates_given = flags.given("--estimates");
	if (o.ep.load_max < o.ep.load_min)
		return usage_error("--load-max is below --load-min");
	if (!o.config.empty()) {
		auto c = Config::load_file(o.config);
		if (!c.is_ok())
			return usage_error("--config: " + c.status().message());
		o.ep.preempt_grace = c->get_double("PreemptGrace");
		o.ep.requeue_delay = c->get_double("RequeueDelay");
	}
	return -1;
}

std::vector<std::string> default_training(const std::string& data)
{
	std::vector<std::string> w{data + "/traces/philly/philly_2017-10-02_5000.csv@0:4000"};
	for (int i = 1; i <= 4; ++i)
		w.push_back(data + "/traces/pollux/workload-" + std::to_string(i) + ".csv");
	return w;
}

std::vector<std::string> default_validation(const std::string& data)
{
	return {data + "/traces/philly/philly_2017-10-02_5000.csv@4000:1000",
		data + "/traces/pollux/workload-5.csv"};
}

// Appends a stage to the model's provenance (the JSON in the model file).
void add_stage(models::PolicyModel& m, json::Value stage)
{
	auto doc = json::Value::parse(m.info().info, "model info");
	json::Value root = doc.is_ok() && doc->is_object() ? doc.value() : json::Value::object();
	json::Value stages = root.get("stages");
	if (!stages.is_valid() || !stages.is_array())
		stages = json::Value::array();
	stages.push_back(std::move(stage));
	root.set("trained_by", json::Value::string("dlsched-train"));
	root.set("feature_schema", json::Value::integer(models::kFeatureSchema));
	root.set("stages", stages);
	m.set_info_json(root.dump(0));
}

json::Value string_array(const std::vector<std::string>& v)
{
	json::Value a = json::Value::array();
	for (const std::string& s : v)
		a.push_back(json::Value::string(s));
	return a;
}

Result<std::shared_ptr<models::PolicyModel>> start_model(const Options& o)
{
	if (o.init.empty())
		return models::PolicyModel::create(o.hidden, o.seed);
	auto m = models::PolicyModel::load(o.init);
	if (!m.is_ok())
		return m.status();
	return m.value();
}

Status check_writable(const std::string& path, const char* what)
{
	const std::size_t slash = path.rfind('/');
	const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
	struct stat st;
	if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
		return Status(StatusCode::kNotFound, std::string(what) + " " + path + ": directory " + dir +
							     " does not exist (create it first)");
	if (::access(dir.c_str(), W_OK) != 0)
		return Status(StatusCode::kIoError, std::string(what) + " " + path + ": directory " + dir +
							    " is not writable by this user");
	if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
		return Status(StatusCode::kInvalidArgument,
			      std::string(what) + " " + path + ": is a directory; give a file name");
	if (::stat(path.c_str(), &st) == 0 && ::access(path.c_str(), W_OK) != 0)
		return Status(StatusCode::kIoError,
			      std::string(what) + " " + path + ": exists and is not writable");
	return Status();
}

// Turns an episode's steps into samples with their returns (scaled by `scale`) and, when given,
// their advantages (scaled the same way).
void add_samples(std::vector<PolicyStep>& steps, const std::vector<double>& ret, double scale,
		 std::vector<models::Sample>& out, const std::vector<double>* adv)
{
	for (std::size_t k = 0; k < steps.size(); ++k) {
		models::Sample s;
		if (!models::make_sample(std::move(steps[k]), kMaxDecisions, s))
			continue;
		s.ret = static_cast<float>(ret[k] / scale);
		if (adv)
			s.advantage = static_cast<float>((*adv)[k] / scale);
		out.push_back(std::move(s));
	}
}

Result<Validation> validate(const std::shared_ptr<const models::PolicyModel>& model,
			    const std::vector<Episode>& val, const Options& o, const ModelCatalog& models)
{
	Validation v;
	for (const Episode& e : val) {
		auto r = run_policy(e, model, false, o.seed, o.preset, models, o.ep, o.window, false);
		if (!r.is_ok())
			return r.status();
		v.slowdown += r->metrics.avg_jct_s / std::max(1.0, r->metrics.bound_avg_jct_s);
		v.runs.push_back(r->metrics);
	}
	v.slowdown /= std::max<std::size_t>(1, val.size());
	return v;
}

Result<std::vector<Episode>> validation_set(const Options& o, const ModelCatalog& models,
					    const std::string& data)
{
	auto specs = o.validate.empty() ? default_validation(data) : o.validate;
	auto w = Workloads::load(specs, models, o.ep);
	if (!w.is_ok())
		return w.status();
	std::vector<Episode> all;
	for (double l : o.val_loads) {
		auto e = w->whole(l, o.seed);
		if (!e.is_ok())
			return e.status();
		for (Episode& x : *e)
			all.push_back(std::move(x));
	}
	return all;
}

}  // namespace dlsched::train
