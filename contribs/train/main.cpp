// dlsched-train: trains the learned scheduler's networks (dlsched-train(1)).
//   init    a model with random weights
//   sl      supervised warm-up on a baseline's decisions in the simulator (DL2's first stage)
//   sacct   supervised warm-up on a real cluster's history (sacct records)
//   rl      reinforcement learning (PPO) in dlsched-sim
//   online  fine-tuning from the experience sched/dlsched recorded in the profile DB
//   info    what a model file holds
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "episodes.h"
#include "json/json.h"
#include "models/decode.h"
#include "models/features.h"
#include "models/learned.h"
#include "models/train.h"
#include "profiledb/profile_db.h"
#include "sacct.h"
#include "../sim/cluster_spec.h"
#include "util/csv.h"
#include "workload/workload.h"

using namespace dlsched;
using namespace dlsched::train;

namespace {

const char* const kUsage =
        "usage: dlsched-train init --out FILE [--hidden N] [--seed N]\n"
        "       dlsched-train sl --out FILE [--teacher NAME[,NAME...]] [--init FILE] [--episodes N] [--epochs N]\n"
        "                        [--dagger R] [options]\n"
        "       dlsched-train sacct --out FILE --sacct FILE [--init FILE] [--epochs N] [--cluster SPEC]\n"
        "       dlsched-train rl --init FILE --out FILE [--iterations N] [--episodes N] [--rollouts K] [--validate SPEC,...]\n"
        "                        [--curve FILE.csv] [--png FILE.png] [--checkpoint-dir DIR] [--resume] [options]\n"
        "       dlsched-train online --init FILE --out FILE --db FILE [--cluster-name NAME] [--since S] [--epochs N]\n"
        "       dlsched-train info FILE\n"
        "\n"
        "options:\n"
        "  --workloads SPEC,...   training traces: FILE or FILE@START:COUNT (default: Philly 2017-10-02 jobs\n"
        "                         0-3999 and Pollux workloads 1-4, bundled)\n"
        "  --validate SPEC,...    validation traces, run whole (default: Philly 2017-10-02 jobs 4000-4999, Pollux 5)\n"
        "  --cluster SPEC         simulated cluster, NxG or a cluster file (default 32x8)\n"
        "  --jobs N               jobs per training episode, a random slice (default 400)\n"
        "  --load-min X --load-max X   training load range, inter-arrival compression (default 1 to 3)\n"
        "  --val-loads X,...      validation loads (default 1,2)\n"
        "  --elastic-fraction F   fraction of elastic jobs in training (default 0)\n"
        "  --restart-cost S       seconds a restart costs in the simulator (default 0)\n"
        "  --preemption-penalty S reward: seconds of one job's time charged per preemption (default 120)\n"
        "  --horizon S            reward discount horizon in seconds (default 14400)\n"
        "  --preset NAME          dl2 or dual-agent: allocation and placement around the ordering (default dl2)\n"
        "  --window N             jobs the network ranks per cycle (default 512)\n"
        "  --lr X                 learning rate (default 3e-4; sl 1e-3)\n"
        "  --ppo-epochs N         PPO epochs per iteration (default 4)\n"
        "  --dagger R             sl: R DAgger rounds after the warm-up (the model acts, the teacher labels;\n"
        "                         --episodes/2 runs a round), keeping the best model by validation (default 0)\n"
        "  --rollouts K           rl: sampled rollouts of each drawn workload; a step's baseline is the other\n"
        "                         rollouts' return from the same time (default 4; 1: the value network)\n"
        "  --entropy X            rl: entropy bonus (default 0.01)\n"
        "  --target-kl X          rl: stop an iteration's update once the policy moved this far (default 0.01; 0: never)\n"
        "  --reference NAME       rl: also validate this baseline preset, for scale (default srtf; '' for none)\n"
        "  --validate-every N     iterations between validations (default 1)\n"
        "  --seed N               seed of everything random (default 1)\n"
        "  --quiet                no progress lines\n";

struct Options {
	std::string command, out, init, curve, png, checkpoint_dir, db, cluster_name, sacct_file, info_file;
	std::vector<std::string> teachers{"srtf"};
	std::vector<std::string> workloads, validate;
	std::vector<double> val_loads{1, 2};
	EpisodeOptions ep;
	std::string preset = "dl2";
	std::size_t window = 512;
	int hidden = 64;
	int episodes = -1, epochs = -1, iterations = 20, ppo_epochs = 4, validate_every = 1, rollouts = 4;
	double entropy = 0.01, target_kl = 0.01;
	int dagger = 0;
	std::string reference = "srtf";
	double lr = -1, preemption_penalty = 120, horizon = 14400, since = 0;
	std::uint64_t seed = 1;
	bool resume = false, quiet = false, cluster_name_given = false;
};

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

int parse_args(int argc, char** argv, Options& o)
{
	int i = 1;
	if (i < argc && argv[i][0] != '-')
		o.command = argv[i++];
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
		} else if (a == "--out" || a == "--init" || a == "--curve" || a == "--png" || a == "--checkpoint-dir" ||
		           a == "--db" || a == "--cluster-name" || a == "--sacct" || a == "--cluster" || a == "--preset" ||
		           a == "--teacher" || a == "--workloads" || a == "--validate" || a == "--val-loads") {
			const char* v = need();
			if (!v)
				return usage_error(a + " needs a value");
			std::string s = v;
			if (a == "--out") o.out = s;
			else if (a == "--init") o.init = s;
			else if (a == "--curve") o.curve = s;
			else if (a == "--png") o.png = s;
			else if (a == "--checkpoint-dir") o.checkpoint_dir = s;
			else if (a == "--db") o.db = s;
			else if (a == "--cluster-name") { o.cluster_name = s; o.cluster_name_given = true; }
			else if (a == "--sacct") o.sacct_file = s;
			else if (a == "--cluster") o.ep.cluster = s;
			else if (a == "--preset") o.preset = s;
			else if (a == "--teacher") o.teachers = split(s);
			else if (a == "--workloads") o.workloads = split(s);
			else if (a == "--validate") o.validate = split(s);
			else {
				o.val_loads.clear();
				for (const std::string& t : split(s)) {
					if (!parse_number(t, x) || x <= 0)
						return usage_error("--val-loads: '" + t + "' is not a positive number");
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
		} else if (a == "--load-min") {
			ok = num(o.ep.load_min, 0.01, 1000);
		} else if (a == "--load-max") {
			ok = num(o.ep.load_max, 0.01, 1000);
		} else if (a == "--elastic-fraction") {
			ok = num(o.ep.elastic_fraction, 0, 1);
		} else if (a == "--restart-cost") {
			ok = num(o.ep.restart_cost, 0, 86400);
		} else if (a == "--preemption-penalty") {
			ok = num(o.preemption_penalty, 0, 1e6);
		} else if (a == "--horizon") {
			ok = num(o.horizon, 60, 1e8);
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
	return {data + "/traces/philly/philly_2017-10-02_5000.csv@4000:1000", data + "/traces/pollux/workload-5.csv"};
}

// Progress lines on stderr.
struct Clock {
	std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
	double seconds() const
	{
		return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	}
};

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

// Discounted returns of one episode's steps (reward: minus the jobs in the system x the seconds to
// the next cycle, in hours, minus a penalty per preemption), in place in `ret`.
std::vector<double> episode_returns(const std::vector<PolicyStep>& steps, Seconds end, double penalty_s, double horizon_s)
{
	std::vector<double> ret(steps.size(), 0.0);
	double g = 0;
	for (std::size_t k = steps.size(); k-- > 0;) {
		const PolicyStep& s = steps[k];
		const Seconds next = k + 1 < steps.size() ? steps[k + 1].now : std::max(end, s.now);
		const double dt = std::max(0.0, next - s.now);
		// Running rows the round leaves out are preempted.
		std::size_t preempted = 0;
		if (penalty_s > 0) {
			models::DecodedRound d = models::decode_round(s.need, s.free_gpus, s.order, 0);
			std::vector<bool> started(s.need.size(), false);
			for (int r : d.started)
				started[static_cast<std::size_t>(r)] = true;
			for (std::size_t r = 0; r < s.need.size(); ++r)
				if (s.x[r * models::kJobFeatures + 5] > 0.5f && !started[r])
					++preempted;
		}
		const double reward = -(s.in_system * dt + static_cast<double>(preempted) * penalty_s) / 3600.0;
		g = reward + std::exp(-dt / horizon_s) * g;
		ret[k] = g;
	}
	return ret;
}

// The discounted return from time `t` of an episode whose steps have the returns `ret` (from
// episode_returns): the jobs in the system from t to the next step, then that step's return.
double return_at(const std::vector<PolicyStep>& steps, const std::vector<double>& ret, Seconds end, Seconds t,
                 double horizon_s)
{
	if (steps.empty())
		return 0;
	// The last step at or before t (the first one when t is earlier).
	std::size_t lo = 0, hi = steps.size();
	while (hi - lo > 1) {
		const std::size_t mid = (lo + hi) / 2;
		(steps[mid].now <= t ? lo : hi) = mid;
	}
	if (t < steps[lo].now)
		return ret[lo];
	const Seconds next = lo + 1 < steps.size() ? steps[lo + 1].now : std::max(end, t);
	const double dt = std::max(0.0, next - t);
	const double tail = lo + 1 < steps.size() ? ret[lo + 1] : 0.0;
	return -steps[lo].in_system * dt / 3600.0 + std::exp(-dt / horizon_s) * tail;
}

constexpr std::size_t kMaxDecisions = 64;

// Turns an episode's steps into samples with their returns (scaled by `scale`) and, when given,
// their advantages (scaled the same way).
void add_samples(std::vector<PolicyStep>& steps, const std::vector<double>& ret, double scale,
                 std::vector<models::Sample>& out, const std::vector<double>* adv = nullptr)
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

double stddev(const std::vector<double>& v)
{
	if (v.size() < 2)
		return 1;
	const double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
	double s = 0;
	for (double x : v)
		s += (x - m) * (x - m);
	return std::max(1e-6, std::sqrt(s / static_cast<double>(v.size() - 1)));
}

int cmd_init(const Options& o)
{
	if (o.out.empty())
		return usage_error("init needs --out FILE");
	auto m = models::PolicyModel::create(o.hidden, o.seed);
	json::Value st = json::Value::object();
	st.set("stage", json::Value::string("init"));
	st.set("seed", json::Value::integer(static_cast<std::int64_t>(o.seed)));
	add_stage(*m, st);
	Status s = m->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf("dlsched-train: wrote %s (random weights, %zu parameters)\n", o.out.c_str(), m->parameter_count());
	return 0;
}

int cmd_info(const Options& o)
{
	if (o.info_file.empty())
		return usage_error("info needs a model FILE");
	auto m = models::PolicyModel::load(o.info_file);
	if (!m.is_ok())
		return fail(m.status());
	const models::ModelInfo& i = (*m)->info();
	std::printf("model %s\n  format %d, feature schema %d, hidden %d, %zu parameters\n", o.info_file.c_str(), i.format,
	            i.schema, i.hidden, (*m)->parameter_count());
	std::printf("  job features:");
	for (int f = 0; f < models::kJobFeatures; ++f)
		std::printf("%s %s", f ? ";" : "", models::job_feature_name(f));
	std::printf("\n  training: %s\n", i.info.c_str());
	return 0;
}

struct Validation {
	double slowdown = 0;  // mean over the validation runs of avg JCT / bound
	std::vector<sim::RunMetrics> runs;
};

Result<Validation> validate(const std::shared_ptr<const models::PolicyModel>& model, const std::vector<Episode>& val,
                            const Options& o, const ModelCatalog& models)
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

Result<std::vector<Episode>> validation_set(const Options& o, const ModelCatalog& models, const std::string& data)
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

int cmd_sl(const Options& o, const ModelCatalog& models, const std::string& data)
{
	if (o.out.empty())
		return usage_error("sl needs --out FILE");
	auto model = start_model(o);
	if (!model.is_ok())
		return fail(model.status());
	auto wl = Workloads::load(o.workloads.empty() ? default_training(data) : o.workloads, models, o.ep);
	if (!wl.is_ok())
		return fail(wl.status());
	const int episodes = o.episodes > 0 ? o.episodes : 24;
	const int epochs = o.epochs > 0 ? o.epochs : 10;
	std::mt19937_64 rng(o.seed);
	Clock clock;
	std::vector<models::Sample> samples;
	std::vector<double> all_ret;
	std::vector<std::vector<PolicyStep>> eps;
	std::vector<std::vector<double>> rets;
	double teacher_slowdown = 0;
	int runs = 0;
	for (const std::string& t : o.teachers) {
		for (int e = 0; e < episodes; ++e) {
			auto ep = wl->draw(rng);
			if (!ep.is_ok())
				return fail(ep.status());
			auto r = run_teacher(*ep, t, models, o.ep, o.window);
			if (!r.is_ok())
				return fail(r.status());
			teacher_slowdown += r->metrics.avg_jct_s / std::max(1.0, r->metrics.bound_avg_jct_s);
			++runs;
			rets.push_back(episode_returns(r->steps, r->makespan, o.preemption_penalty, o.horizon));
			all_ret.insert(all_ret.end(), rets.back().begin(), rets.back().end());
			eps.push_back(std::move(r->steps));
			if (!o.quiet)
				std::fprintf(stderr, "\r[sl] teacher %s: episode %d/%d (%s), %zu rounds   ", t.c_str(), e + 1, episodes,
				             ep->name.c_str(), eps.back().size());
		}
	}
	const double scale = stddev(all_ret);
	for (std::size_t i = 0; i < eps.size(); ++i)
		add_samples(eps[i], rets[i], scale, samples);
	if (!o.quiet)
		std::fprintf(stderr, "\n[sl] %zu decision rounds from %d teacher runs (teacher slowdown %.3fx) in %.0fs\n",
		             samples.size(), runs, teacher_slowdown / std::max(1, runs), clock.seconds());
	if (samples.empty())
		return fail(Status(StatusCode::kInvalidArgument,
		                   "the teacher runs held no decisions (every job always fitted): use a smaller --cluster or a "
		                   "higher --load-min"));
	models::TrainOptions to;
	to.lr = o.lr > 0 ? o.lr : 1e-3;
	models::Trainer trainer(*model, to, o.seed);
	models::TrainStats st;
	for (int ep = 0; ep < epochs; ++ep) {
		st = trainer.supervised_epoch(samples, true);
		if (!o.quiet)
			std::fprintf(stderr, "[sl] epoch %d/%d: loss %.4f, first pick agrees %.1f%%, value loss %.4f (%.0fs)\n", ep + 1,
			             epochs, st.policy_loss, 100 * st.first_pick_agreement, st.value_loss, clock.seconds());
	}
	// DAgger rounds: the model acts, the first teacher labels the states the model reached, and the
	// model trains on everything gathered so far. The best model by validation is kept.
	double sl_val = NAN, best_val = NAN;
	int best_round = 0;
	std::size_t dagger_rounds = 0;
	if (o.dagger > 0) {
		auto val = validation_set(o, models, data);
		if (!val.is_ok())
			return fail(val.status());
		auto v = validate(*model, *val, o, models);
		if (!v.is_ok())
			return fail(v.status());
		sl_val = best_val = v->slowdown;
		std::shared_ptr<models::PolicyModel> best_model = (*model)->clone();
		if (!o.quiet)
			std::fprintf(stderr, "[sl] validation %.4fx of the bound (%.0fs)\n", sl_val, clock.seconds());
		const int per_round = std::max(1, episodes / 2);
		for (int round = 1; round <= o.dagger; ++round) {
			std::size_t before = samples.size();
			for (int e = 0; e < per_round; ++e) {
				auto ep = wl->draw(rng);
				if (!ep.is_ok())
					return fail(ep.status());
				auto r = run_dagger(*ep, *model, o.teachers.front(), o.preset, models, o.ep, o.window);
				if (!r.is_ok())
					return fail(r.status());
				std::vector<double> ret = episode_returns(r->steps, r->makespan, o.preemption_penalty, o.horizon);
				add_samples(r->steps, ret, scale, samples);
			}
			dagger_rounds += samples.size() - before;
			for (int ep = 0; ep < std::max(1, epochs / 3); ++ep)
				st = trainer.supervised_epoch(samples, true);
			v = validate(*model, *val, o, models);
			if (!v.is_ok())
				return fail(v.status());
			if (v->slowdown < best_val) {
				best_val = v->slowdown;
				best_model = (*model)->clone();
				best_round = round;
			}
			if (!o.quiet)
				std::fprintf(stderr, "[sl] dagger round %d/%d: +%zu rounds, first pick agrees %.1f%%, validation %.4fx "
				                     "(best %.4fx @%d), %.0fs\n",
				             round, o.dagger, samples.size() - before, 100 * st.first_pick_agreement, v->slowdown,
				             best_val, best_round, clock.seconds());
		}
		*model = best_model;
	}
	json::Value stage = json::Value::object();
	stage.set("stage", json::Value::string("supervised"));
	stage.set("teachers", string_array(o.teachers));
	stage.set("workloads", string_array(o.workloads.empty() ? default_training("DATA") : o.workloads));
	stage.set("cluster", json::Value::string(o.ep.cluster));
	stage.set("episodes_per_teacher", json::Value::integer(episodes));
	stage.set("jobs_per_episode", json::Value::integer(static_cast<std::int64_t>(o.ep.jobs)));
	stage.set("load_range", json::Value::string(std::to_string(o.ep.load_min) + "-" + std::to_string(o.ep.load_max)));
	stage.set("epochs", json::Value::integer(epochs));
	stage.set("lr", json::Value::number(to.lr));
	stage.set("seed", json::Value::integer(static_cast<std::int64_t>(o.seed)));
	stage.set("rounds", json::Value::integer(static_cast<std::int64_t>(samples.size())));
	stage.set("first_pick_agreement", json::Value::number(st.first_pick_agreement));
	stage.set("return_scale", json::Value::number(scale));
	if (o.dagger > 0) {
		stage.set("dagger_rounds", json::Value::integer(o.dagger));
		stage.set("dagger_decision_rounds", json::Value::integer(static_cast<std::int64_t>(dagger_rounds)));
		stage.set("validation_after_sl", json::Value::number(sl_val));
		stage.set("best_validation_slowdown", json::Value::number(best_val));
		stage.set("best_dagger_round", json::Value::integer(best_round));
	}
	stage.set("seconds", json::Value::number(clock.seconds()));
	add_stage(**model, stage);
	Status s = (*model)->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf("dlsched-train: sl: %zu rounds, first pick agrees with the teacher %.1f%%, %.0fs: wrote %s\n",
	            samples.size(), 100 * st.first_pick_agreement, clock.seconds(), o.out.c_str());
	return 0;
}

void write_png(const std::string& csv, const std::string& png)
{
	const std::string script = png + ".gp";
	std::ofstream g(script);
	g << "set terminal pngcairo size 900,500 noenhanced\n"
	  << "set output '" << png << "'\n"
	  << "set datafile separator ','\n"
	  << "set key top right\nset grid\n"
	  << "set title 'dlsched-train rl: validation average JCT / physical limit'\n"
	  << "set xlabel 'iteration'\nset ylabel 'avg JCT / bound'\n"
	  << "plot '" << csv << "' using 1:6 every ::1 with linespoints title 'validation (greedy)', "
	  << "'' using 1:5 every ::1 with lines title 'training episodes (sampled)'\n";
	g.close();
	const std::string cmd = "command -v gnuplot >/dev/null 2>&1 && gnuplot '" + script + "' 2>/dev/null";
	if (std::system(cmd.c_str()) != 0) {
		// pngcairo may be missing (gnuplot-nox has png): try the plain png terminal.
		std::string alt = "sed -i 's/pngcairo/png/' '" + script + "' && command -v gnuplot >/dev/null 2>&1 && gnuplot '" +
		                  script + "'";
		if (std::system(alt.c_str()) != 0)
			std::fprintf(stderr, "dlsched-train: gnuplot not found: no %s (the curve is in %s; apt-get install gnuplot-nox)\n",
			             png.c_str(), csv.c_str());
	}
	std::remove(script.c_str());
}

int cmd_rl(const Options& o, const ModelCatalog& models, const std::string& data)
{
	if (o.out.empty())
		return usage_error("rl needs --out FILE");
	Options opt = o;
	int first_iter = 0;
	std::string resume_from;
	if (o.resume) {
		if (o.checkpoint_dir.empty())
			return usage_error("--resume needs --checkpoint-dir DIR");
		std::ifstream st(o.checkpoint_dir + "/state");
		if (st >> first_iter)
			resume_from = o.checkpoint_dir + "/last.pt";
		else
			first_iter = 0;
	}
	if (!resume_from.empty())
		opt.init = resume_from;
	auto model = start_model(opt);
	if (!model.is_ok())
		return fail(model.status());
	auto wl = Workloads::load(o.workloads.empty() ? default_training(data) : o.workloads, models, o.ep);
	if (!wl.is_ok())
		return fail(wl.status());
	auto val = validation_set(o, models, data);
	if (!val.is_ok())
		return fail(val.status());
	if (!o.checkpoint_dir.empty())
		::mkdir(o.checkpoint_dir.c_str(), 0755);
	const int workloads = o.episodes > 0 ? o.episodes : (o.rollouts > 1 ? 2 : 4);
	const int episodes = workloads * o.rollouts;
	models::TrainOptions to;
	to.lr = o.lr > 0 ? o.lr : 3e-4;
	to.entropy = o.entropy;
	to.target_kl = o.target_kl;
	models::Trainer trainer(*model, to, o.seed + static_cast<std::uint64_t>(first_iter));
	std::mt19937_64 rng(o.seed * 7919 + static_cast<std::uint64_t>(first_iter));
	Clock clock;

	std::FILE* curve = nullptr;
	if (!o.curve.empty()) {
		curve = std::fopen(o.curve.c_str(), first_iter > 0 ? "a" : "w");
		if (!curve)
			return fail(Status(StatusCode::kIoError, o.curve + ": cannot write the curve"));
		if (first_iter == 0)
			std::fprintf(curve, "iteration,seconds,episodes,rounds,train_slowdown,val_slowdown,best_val_slowdown,"
			                    "policy_loss,value_loss,entropy\n");
	}
	auto v0 = validate(*model, *val, o, models);
	if (!v0.is_ok())
		return fail(v0.status());
	// The same validation under a hand-written baseline, for scale (not a target the loss sees).
	double reference = NAN;
	if (!o.reference.empty()) {
		reference = 0;
		for (const Episode& e : *val) {
			auto r = run_preset(e, o.reference, models, o.ep);
			if (!r.is_ok())
				return fail(r.status());
			reference += r->metrics.avg_jct_s / std::max(1.0, r->metrics.bound_avg_jct_s);
		}
		reference /= static_cast<double>(std::max<std::size_t>(1, val->size()));
		if (!o.quiet)
			std::fprintf(stderr, "[rl] reference %s: validation %.4fx of the bound\n", o.reference.c_str(), reference);
	}
	double best = v0->slowdown;
	std::shared_ptr<models::PolicyModel> best_model = (*model)->clone();
	int best_iter = first_iter;
	if (!o.quiet)
		std::fprintf(stderr, "[rl] start: validation %.4fx of the bound over %zu runs\n", best, val->size());
	if (curve && first_iter == 0)
		std::fprintf(curve, "0,%.1f,0,0,,%.5f,%.5f,,,\n", clock.seconds(), best, best);
	double scale = 0;
	for (int it = first_iter + 1; it <= first_iter + o.iterations; ++it) {
		std::vector<models::Sample> samples;
		std::vector<std::vector<PolicyStep>> eps;
		std::vector<std::vector<double>> rets, advs;
		std::vector<double> all_ret;
		double train_slowdown = 0;
		for (int w = 0; w < workloads; ++w) {
			auto ep = wl->draw(rng);
			if (!ep.is_ok())
				return fail(ep.status());
			// K sampled rollouts of the same workload (the same arrivals, other draws of the policy).
			std::vector<EpisodeResult> group;
			for (int k = 0; k < o.rollouts; ++k) {
				auto r = run_policy(*ep, *model, true, rng(), o.preset, models, o.ep, o.window, true);
				if (!r.is_ok())
					return fail(r.status());
				train_slowdown += r->metrics.avg_jct_s / std::max(1.0, r->metrics.bound_avg_jct_s);
				group.push_back(std::move(r.value()));
			}
			const std::size_t first = rets.size();
			for (const EpisodeResult& r : group) {
				rets.push_back(episode_returns(r.steps, r.makespan, o.preemption_penalty, o.horizon));
				all_ret.insert(all_ret.end(), rets.back().begin(), rets.back().end());
			}
			// A step's advantage: its return minus the other rollouts' returns from the same time.
			if (o.rollouts > 1) {
				for (std::size_t i = 0; i < group.size(); ++i) {
					std::vector<double> a(group[i].steps.size());
					for (std::size_t k = 0; k < a.size(); ++k) {
						double b = 0;
						for (std::size_t j = 0; j < group.size(); ++j)
							if (j != i)
								b += return_at(group[j].steps, rets[first + j], group[j].makespan,
								               group[i].steps[k].now, o.horizon);
						a[k] = rets[first + i][k] - b / static_cast<double>(group.size() - 1);
					}
					advs.push_back(std::move(a));
				}
			}
			for (EpisodeResult& r : group)
				eps.push_back(std::move(r.steps));
		}
		train_slowdown /= static_cast<double>(workloads * o.rollouts);
		if (scale == 0)
			scale = stddev(all_ret);
		for (std::size_t i = 0; i < eps.size(); ++i)
			add_samples(eps[i], rets[i], scale, samples, advs.empty() ? nullptr : &advs[i]);
		models::TrainStats st;
		if (!samples.empty()) {
			std::vector<double> adv(samples.size());
			if (advs.empty()) {
				std::vector<float> v = trainer.values(samples);
				for (std::size_t i = 0; i < samples.size(); ++i)
					adv[i] = samples[i].ret - v[i];
			} else {
				for (std::size_t i = 0; i < samples.size(); ++i)
					adv[i] = samples[i].advantage;
			}
			const double m = std::accumulate(adv.begin(), adv.end(), 0.0) / static_cast<double>(adv.size());
			const double sd = stddev(adv);
			for (std::size_t i = 0; i < samples.size(); ++i)
				samples[i].advantage = static_cast<float>((adv[i] - m) / sd);
			trainer.record_log_probs(samples);
			for (int pe = 0; pe < o.ppo_epochs && !st.stopped; ++pe)
				st = trainer.ppo_epoch(samples);
		}
		double vs = NAN;
		if ((it - first_iter) % o.validate_every == 0 || it == first_iter + o.iterations) {
			auto v = validate(*model, *val, o, models);
			if (!v.is_ok())
				return fail(v.status());
			vs = v->slowdown;
			if (vs < best) {
				best = vs;
				best_model = (*model)->clone();
				best_iter = it;
			}
		}
		if (curve) {
			std::fprintf(curve, "%d,%.1f,%d,%zu,%.5f,", it, clock.seconds(), episodes, samples.size(), train_slowdown);
			if (std::isnan(vs))
				std::fprintf(curve, ",");
			else
				std::fprintf(curve, "%.5f,", vs);
			std::fprintf(curve, "%.5f,%.5f,%.5f,%.5f\n", best, st.policy_loss, st.value_loss, st.entropy);
			std::fflush(curve);
		}
		if (!o.checkpoint_dir.empty()) {
			Status s = (*model)->save(o.checkpoint_dir + "/last.pt");
			if (s.is_ok())
				s = best_model->save(o.checkpoint_dir + "/best.pt");
			if (!s.is_ok())
				return fail(s);
			std::ofstream(o.checkpoint_dir + "/state") << it << "\n";
		}
		if (!o.quiet) {
			const double per = clock.seconds() / (it - first_iter);
			std::fprintf(stderr, "[rl] iteration %d/%d: %zu rounds, train %.3fx, validation %s (best %.4fx @%d), "
			                     "entropy %.3f, kl %.4f%s, %.0fs, ETA %.0fs\n",
			             it, first_iter + o.iterations, samples.size(), train_slowdown,
			             std::isnan(vs) ? "-" : (std::to_string(vs).substr(0, 6) + "x").c_str(), best, best_iter,
			             st.entropy, st.kl, st.stopped ? " (stopped)" : "", clock.seconds(),
			             per * (first_iter + o.iterations - it));
		}
	}
	if (curve)
		std::fclose(curve);
	if (!o.png.empty() && !o.curve.empty())
		write_png(o.curve, o.png);
	json::Value stage = json::Value::object();
	stage.set("stage", json::Value::string("ppo"));
	stage.set("preset", json::Value::string(o.preset));
	stage.set("workloads", string_array(o.workloads.empty() ? default_training("DATA") : o.workloads));
	stage.set("validation", string_array(o.validate.empty() ? default_validation("DATA") : o.validate));
	stage.set("cluster", json::Value::string(o.ep.cluster));
	stage.set("iterations", json::Value::integer(first_iter + o.iterations));
	stage.set("episodes_per_iteration", json::Value::integer(episodes));
	stage.set("rollouts_per_workload", json::Value::integer(o.rollouts));
	stage.set("baseline", json::Value::string(o.rollouts > 1 ? "sibling rollouts at the same time" : "value network"));
	stage.set("jobs_per_episode", json::Value::integer(static_cast<std::int64_t>(o.ep.jobs)));
	stage.set("ppo_epochs", json::Value::integer(o.ppo_epochs));
	stage.set("lr", json::Value::number(to.lr));
	stage.set("clip", json::Value::number(to.clip));
	stage.set("entropy", json::Value::number(to.entropy));
	stage.set("target_kl", json::Value::number(to.target_kl));
	stage.set("horizon_s", json::Value::number(o.horizon));
	stage.set("preemption_penalty_s", json::Value::number(o.preemption_penalty));
	stage.set("restart_cost_s", json::Value::number(o.ep.restart_cost));
	stage.set("seed", json::Value::integer(static_cast<std::int64_t>(o.seed)));
	stage.set("start_validation_slowdown", json::Value::number(v0->slowdown));
	if (!std::isnan(reference)) {
		stage.set("reference", json::Value::string(o.reference));
		stage.set("reference_validation_slowdown", json::Value::number(reference));
	}
	stage.set("best_validation_slowdown", json::Value::number(best));
	stage.set("best_iteration", json::Value::integer(best_iter));
	stage.set("seconds", json::Value::number(clock.seconds()));
	add_stage(*best_model, stage);
	Status s = best_model->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf("dlsched-train: rl: validation %.4fx -> %.4fx of the bound (best at iteration %d of %d), %.0fs: wrote %s\n",
	            v0->slowdown, best, best_iter, first_iter + o.iterations, clock.seconds(), o.out.c_str());
	return 0;
}

// Fine-tunes from the experience sched/dlsched recorded (RecordExperience=yes). The logged rounds
// are the deployed policy's argmax, not draws from it, so PPO's ratios do not apply: the update is
// advantage-weighted regression on the logged picks (Peng et al., "Advantage-Weighted Regression",
// 2019), with the same reward as in the simulator.
int cmd_online(const Options& o)
{
	if (o.out.empty() || o.db.empty())
		return usage_error("online needs --db FILE and --out FILE (and --init FILE: the model in use)");
	if (o.init.empty())
		return usage_error("online needs --init FILE: the model sched/dlsched runs (ModelFile=)");
	auto model = start_model(o);
	if (!model.is_ok())
		return fail(model.status());
	auto pdb = dlsched::db::ProfileDb::open_reader(o.db);
	if (!pdb.is_ok())
		return fail(pdb.status());
	// Without --cluster-name: the one cluster the table holds (Slurm's ClusterName, as sched/dlsched
	// recorded it).
	std::string cluster = o.cluster_name;
	if (!o.cluster_name_given) {
		auto clusters = pdb->experience_clusters();
		if (!clusters.is_ok())
			return fail(clusters.status());
		if (clusters->empty())
			return fail(Status(StatusCode::kInvalidArgument,
			                   o.db + ": no experience rows: set RecordExperience=yes and ProfileDB= in dlsched.conf, "
			                          "reconfigure, and let the cluster run"));
		if (clusters->size() > 1) {
			std::string names;
			for (const auto& c : *clusters)
				names += (names.empty() ? "" : ", ") + c.first + " (" + std::to_string(c.second) + " rows)";
			return fail(Status(StatusCode::kInvalidArgument,
			                   o.db + ": experience from several clusters (" + names + "): pass --cluster-name"));
		}
		cluster = clusters->front().first;
		if (!o.quiet)
			std::fprintf(stderr, "[online] cluster '%s' (%d rows)\n", cluster.c_str(), clusters->front().second);
	}
	auto steps = pdb->experience(cluster, o.since);
	if (!steps.is_ok())
		return fail(steps.status());
	Clock clock;
	const std::size_t rows = steps->size();
	const Seconds end = steps->empty() ? 0 : steps->back().now;
	std::vector<double> ret = episode_returns(*steps, end, o.preemption_penalty, o.horizon);
	const double scale = stddev(ret);
	std::vector<models::Sample> samples;
	add_samples(*steps, ret, scale, samples);
	if (samples.size() < 8)
		return fail(Status(StatusCode::kInvalidArgument,
		                   o.db + ": " + std::to_string(rows) + " experience rows with " + std::to_string(samples.size()) +
		                           " decisions in them (cluster '" + cluster +
		                           "'): too few to learn from; set RecordExperience=yes and ProfileDB= in dlsched.conf "
		                           "and let the cluster run longer"));
	models::TrainOptions to;
	to.lr = o.lr > 0 ? o.lr : 1e-4;
	models::Trainer trainer(*model, to, o.seed);
	const int epochs = o.epochs > 0 ? o.epochs : 4;
	models::TrainStats st;
	for (int e = 0; e < epochs; ++e) {
		std::vector<float> v = trainer.values(samples);
		std::vector<double> adv(samples.size());
		for (std::size_t i = 0; i < samples.size(); ++i)
			adv[i] = samples[i].ret - v[i];
		const double m = std::accumulate(adv.begin(), adv.end(), 0.0) / static_cast<double>(adv.size());
		const double sd = stddev(adv);
		for (std::size_t i = 0; i < samples.size(); ++i)
			samples[i].advantage = static_cast<float>((adv[i] - m) / sd);
		st = trainer.awr_epoch(samples);
		if (!o.quiet)
			std::fprintf(stderr, "[online] epoch %d/%d: weighted loss %.4f, value loss %.4f\n", e + 1, epochs,
			             st.policy_loss, st.value_loss);
	}
	json::Value stage = json::Value::object();
	stage.set("stage", json::Value::string("online-awr"));
	stage.set("db", json::Value::string(o.db));
	stage.set("cluster", json::Value::string(cluster));
	stage.set("since_s", json::Value::number(o.since));
	stage.set("experience_rows", json::Value::integer(static_cast<std::int64_t>(rows)));
	stage.set("decision_rounds", json::Value::integer(static_cast<std::int64_t>(samples.size())));
	stage.set("epochs", json::Value::integer(epochs));
	stage.set("lr", json::Value::number(to.lr));
	add_stage(**model, stage);
	Status s = (*model)->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf("dlsched-train: online: %zu experience rows, %zu decision rounds, %.0fs: wrote %s "
	            "(point ModelFile= at it and run scontrol reconfigure)\n",
	            rows, samples.size(), clock.seconds(), o.out.c_str());
	return 0;
}

// Supervised warm-up from the cluster's own history (sacct).
int cmd_sacct(const Options& o, const ModelCatalog& models)
{
	if (o.out.empty() || o.sacct_file.empty())
		return usage_error("sacct needs --sacct FILE (sacct -X -P -o JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment) "
		                   "and --out FILE");
	std::ifstream in(o.sacct_file);
	if (!in)
		return fail(Status(StatusCode::kNotFound, o.sacct_file + ": cannot read"));
	auto nodes = sim::parse_cluster_spec(o.ep.cluster, models.gpu_types());
	if (!nodes.is_ok())
		return fail(nodes.status());
	auto rounds = sacct_rounds(in, o.sacct_file, models, *nodes, o.window);
	if (!rounds.is_ok())
		return fail(rounds.status());
	auto model = start_model(o);
	if (!model.is_ok())
		return fail(model.status());
	const std::size_t n = rounds->size();
	std::vector<double> ret(n, 0.0);
	std::vector<models::Sample> samples;
	add_samples(*rounds, ret, 1.0, samples);
	if (samples.empty())
		return fail(Status(StatusCode::kInvalidArgument,
		                   o.sacct_file + ": " + std::to_string(n) +
		                           " start times, none with a choice in it (the queue never held more than fitted): "
		                           "nothing to learn; check --cluster matches the cluster's GPUs"));
	models::TrainOptions to;
	to.lr = o.lr > 0 ? o.lr : 1e-3;
	models::Trainer trainer(*model, to, o.seed);
	const int epochs = o.epochs > 0 ? o.epochs : 20;
	models::TrainStats st;
	for (int e = 0; e < epochs; ++e)
		st = trainer.supervised_epoch(samples, false);
	json::Value stage = json::Value::object();
	stage.set("stage", json::Value::string("supervised-sacct"));
	stage.set("sacct", json::Value::string(o.sacct_file));
	stage.set("cluster", json::Value::string(o.ep.cluster));
	stage.set("rounds", json::Value::integer(static_cast<std::int64_t>(samples.size())));
	stage.set("epochs", json::Value::integer(epochs));
	stage.set("first_pick_agreement", json::Value::number(st.first_pick_agreement));
	add_stage(**model, stage);
	Status s = (*model)->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf("dlsched-train: sacct: %zu start times, %zu with a choice; first pick agrees with the cluster's "
	            "scheduler %.1f%%: wrote %s\n",
	            n, samples.size(), 100 * st.first_pick_agreement, o.out.c_str());
	return 0;
}

}  // namespace

int main(int argc, char** argv)
{
	Options o;
	const int rc = parse_args(argc, argv, o);
	if (rc >= 0)
		return rc;
	if (o.command.empty())
		return usage_error("no command given (init, sl, sacct, rl, online or info)");
	models::install();
	models::use_one_thread();
	if (o.command == "init")
		return cmd_init(o);
	if (o.command == "info")
		return cmd_info(o);
	auto catalog = load_model_catalog("");
	if (!catalog.is_ok())
		return fail(catalog.status());
	const std::string data = default_data_dir();
	if (o.command == "sl")
		return cmd_sl(o, catalog.value(), data);
	if (o.command == "rl")
		return cmd_rl(o, catalog.value(), data);
	if (o.command == "online")
		return cmd_online(o);
	if (o.command == "sacct")
		return cmd_sacct(o, catalog.value());
	return usage_error("unknown command '" + o.command + "'");
}
