#include "cli.h"

#include <cstdio>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "models/features.h"
#include "util/csv.h"
#include "util/flags.h"

namespace dlsched::train {

namespace {

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
	"                          [--json FILE] [--force] [--teacher NAME,...] [--iterations N] [options]\n"
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
	"tiresias-las on the earlier part, PPO on it, a report card against them on the later part. --out "
	"is\n"
	"written only when dl2 beats the best heuristic there (else exit status 3). Defaults: --restart-cost "
	"model,\n"
	"--estimates predicted, --load-min 1 --load-max 1.5, --episodes 8 --epochs 3 (the warm-up),\n"
	"--iterations 6.\n"
	"\n"
	"options:\n"
	"  --workloads SPEC,...   training traces: FILE or FILE@START:COUNT (default: Philly 2017-10-02 "
	"jobs\n"
	"                         0-3999 and Pollux workloads 1-4, bundled)\n"
	"  --validate SPEC,...    validation traces, run whole (default: Philly 2017-10-02 jobs 4000-4999, "
	"Pollux 5)\n"
	"  --cluster SPEC         simulated cluster, NxG or a cluster file (default 32x8; site: required)\n"
	"  --sacct FILE           sacct, site: the cluster's history (sacct -X -P output with a header "
	"line)\n"
	"  --workload FILE        site: the history as a workload file (any format dlsched-sim reads)\n"
	"  --holdout-fraction F   site: the later fraction of the jobs, by submit time, judged on (default "
	"0.3)\n"
	"  --json FILE            site: the report card as JSON\n"
	"  --force                site: write --out even when dl2 does not beat the best heuristic\n"
	"  --jobs N               jobs per training episode, a random slice (default 400)\n"
	"  --load-min X --load-max X   training load range, inter-arrival compression (default 1 to 3)\n"
	"  --val-loads X,...      validation loads (default 1,2)\n"
	"  --elastic-fraction F   fraction of elastic jobs in training (default 0)\n"
	"  --restart-cost S|model seconds a restart costs in the simulator, or each model's predicted "
	"suspend\n"
	"                         and resume (dlsched-sim --restart-cost) (default 0)\n"
	"  --preemption-penalty S reward: seconds of one job's time charged per preemption (default 120)\n"
	"  --resize-penalty S     reward: seconds of one job's time charged per resize of a running job "
	"(default 120)\n"
	"  --estimates MODE       what policies see: oracle (the truth) or predicted (the predictor's "
	"estimates,\n"
	"                         as in slurmctld; dlsched-sim --estimates) (default oracle)\n"
	"  --horizon S            reward discount horizon in seconds (default 14400)\n"
	"  --preset NAME          dl2 or dual-agent: the learned agent, with pack or gp-placement (default "
	"dl2)\n"
	"  --window N             jobs the network looks at per cycle (default 512)\n"
	"  --time-scale N         sacct: the history's cluster ran N times faster than real time (an "
	"emulated\n"
	"                         replay's speedup; the cluster's ModelTimeScale=) (default 1)\n"
	"  --lr X                 learning rate (default 3e-4; sl 1e-3)\n"
	"  --ppo-epochs N         PPO epochs per iteration (default 4)\n"
	"  --dagger R             sl: R DAgger rounds after the warm-up (the model acts, the teacher "
	"labels;\n"
	"                         --episodes/2 runs a round), keeping the best model by validation (default "
	"0)\n"
	"  --rollouts K           rl: sampled rollouts of each drawn workload; a step's baseline is the "
	"other\n"
	"                         rollouts' return from the same time (default 4; 1: the value network)\n"
	"  --entropy X            rl: entropy bonus (default 0.01)\n"
	"  --target-kl X          rl: stop an iteration's update once the policy moved this far (default "
	"0.01; 0: never)\n"
	"  --reference NAME       rl: also validate this baseline preset, for scale (default srtf; '' for "
	"none)\n"
	"  --validate-every N     iterations between validations (default 1)\n"
	"  --seed N               seed of everything random (default 1)\n"
	"  --quiet                no progress lines\n";

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

int parse_args(int argc, char** argv, Options& o)
{
	int i = 1;
	if (i < argc && argv[i][0] != '-')
		o.command = argv[i++];
	FlagUse flags;  // none is repeatable
	for (; i < argc; ++i) {
		const std::string a = argv[i];
		auto need = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
		auto num = [&](double& d, double lo, double hi) -> bool {
			const char* v = need();
			return v && parse_number(v, d) && d >= lo && d <= hi;
		};
		auto whole = [&](long long& d, long long lo, long long hi) -> bool {
			const char* v = need();
			return v && parse_integer(v, d) && d >= lo && d <= hi;
		};
		long long n = 0;
		double x = 0;
		bool ok = true;
		if (a == "-h" || a == "--help") {
			std::fputs(kUsage, stdout);
			return 0;
		} else if (a == "--out" || a == "--init" || a == "--curve" || a == "--png" ||
			   a == "--checkpoint-dir" || a == "--db" || a == "--cluster-name" ||
			   a == "--sacct" || a == "--cluster" || a == "--preset" || a == "--teacher" ||
			   a == "--workloads" || a == "--validate" || a == "--val-loads" ||
			   a == "--workload" || a == "--json") {
			const char* v = need();
			if (!v)
				return usage_error(a + " needs a value");
			std::string s = v;
			if (a == "--out")
				o.out = s;
			else if (a == "--init")
				o.init = s;
			else if (a == "--curve")
				o.curve = s;
			else if (a == "--png")
				o.png = s;
			else if (a == "--checkpoint-dir")
				o.checkpoint_dir = s;
			else if (a == "--db")
				o.db = s;
			else if (a == "--cluster-name") {
				o.cluster_name = s;
				o.cluster_name_given = true;
			} else if (a == "--sacct")
				o.sacct_file = s;
			else if (a == "--cluster") {
				o.ep.cluster = s;
				o.cluster_given = true;
			} else if (a == "--workload")
				o.workload_file = s;
			else if (a == "--json")
				o.json_out = s;
			else if (a == "--preset")
				o.preset = s;
			else if (a == "--teacher") {
				o.teachers = split(s);
				o.teacher_given = true;
			} else if (a == "--workloads")
				o.workloads = split(s);
			else if (a == "--validate")
				o.validate = split(s);
			else {
				o.val_loads.clear();
				for (const std::string& t : split(s)) {
					if (!parse_number(t, x) || x <= 0)
						return usage_error("--val-loads: '" + t +
								   "' is not a positive number");
					o.val_loads.push_back(x);
				}
			}
		} else if (a == "--hidden") {
			ok = whole(n, 4, 1024);
			o.hidden = static_cast<int>(n);
		} else if (a == "--seed") {
			ok = whole(n, 0, 2147483647);
			o.seed = static_cast<std::uint64_t>(n);
		} else if (a == "--episodes") {
			ok = whole(n, 1, 100000);
			o.episodes = static_cast<int>(n);
		} else if (a == "--epochs") {
			ok = whole(n, 1, 10000);
			o.epochs = static_cast<int>(n);
		} else if (a == "--iterations") {
			ok = whole(n, 0, 100000);
			o.iterations = static_cast<int>(n);
			o.iterations_given = true;
		} else if (a == "--ppo-epochs") {
			ok = whole(n, 1, 100);
			o.ppo_epochs = static_cast<int>(n);
		} else if (a == "--rollouts") {
			ok = whole(n, 1, 64);
			o.rollouts = static_cast<int>(n);
		} else if (a == "--reference") {
			const char* v = need();
			ok = v != nullptr;
			if (v)
				o.reference = v;
		} else if (a == "--dagger") {
			ok = whole(n, 0, 1000);
			o.dagger = static_cast<int>(n);
		} else if (a == "--target-kl") {
			ok = num(o.target_kl, 0, 10);
		} else if (a == "--entropy") {
			ok = num(o.entropy, 0, 1);
		} else if (a == "--validate-every") {
			ok = whole(n, 1, 100000);
			o.validate_every = static_cast<int>(n);
		} else if (a == "--jobs") {
			ok = whole(n, 10, 1000000);
			o.ep.jobs = static_cast<std::size_t>(n);
		} else if (a == "--window") {
			ok = whole(n, 1, 65536);
			o.window = static_cast<std::size_t>(n);
		} else if (a == "--time-scale") {
			ok = num(o.time_scale, 0.001, 1e6);
		} else if (a == "--load-min") {
			ok = num(o.ep.load_min, 0.01, 1000);
			o.load_given = true;
		} else if (a == "--load-max") {
			ok = num(o.ep.load_max, 0.01, 1000);
			o.load_given = true;
		} else if (a == "--holdout-fraction") {
			ok = num(o.holdout_fraction, 0.01, 0.99);
		} else if (a == "--force") {
			o.force = true;
		} else if (a == "--elastic-fraction") {
			ok = num(o.ep.elastic_fraction, 0, 1);
		} else if (a == "--restart-cost") {
			const char* v = need();
			o.restart_given = true;
			if (v && std::string(v) == "model")
				o.ep.restart_model = true;
			else
				ok = v && parse_number(v, o.ep.restart_cost) && o.ep.restart_cost >= 0 &&
				     o.ep.restart_cost <= 86400;
		} else if (a == "--preemption-penalty") {
			ok = num(o.reward.preemption_penalty_s, 0, 1e6);
		} else if (a == "--resize-penalty") {
			ok = num(o.reward.resize_penalty_s, 0, 1e6);
		} else if (a == "--horizon") {
			ok = num(o.reward.horizon_s, 60, 1e8);
		} else if (a == "--estimates") {
			const char* v = need();
			if (!v)
				return usage_error("--estimates needs a value: oracle or predicted");
			if (std::string(v) != "oracle" && std::string(v) != "predicted")
				return usage_error(std::string("--estimates: '") + v +
						   "': want oracle or predicted");
			o.ep.estimates = v;
			o.estimates_given = true;
		} else if (a == "--lr") {
			ok = num(o.lr, 1e-7, 1);
		} else if (a == "--since") {
			ok = num(o.since, 0, 1e12);
		} else if (a == "--resume") {
			o.resume = true;
		} else if (a == "--quiet") {
			o.quiet = true;
		} else if (o.command == "info" && o.info_file.empty() && a[0] != '-') {
			o.info_file = a;
		} else {
			return usage_error("unknown option '" + a + "'");
		}
		if (!ok)
			return usage_error(a + ": missing or out-of-range value");
		if (a[0] == '-') {
			Status st = flags.note(a);
			if (!st.is_ok())
				return usage_error(st.message());
		}
	}
	if (o.ep.load_max < o.ep.load_min)
		return usage_error("--load-max is below --load-min");
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
