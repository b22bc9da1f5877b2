// dlsched-train sl: supervised warm-up on baselines' decisions in the simulator (DL2's first
// stage), then DAgger rounds.
#include <cmath>
#include <cstdio>
#include <numeric>

#include "cli.h"
#include "curve.h"
#include "returns.h"
#include "util/random.h"

namespace dlsched::train {

int cmd_sl(const Options& o, const ModelCatalog& models, const std::string& data)
{
	if (o.out.empty())
		return usage_error("sl needs --out FILE");
	Status w = check_writable(o.out, "--out");
	if (!w.is_ok())
		return fail(w);
	auto model = start_model(o);
	if (!model.is_ok())
		return fail(model.status());
	auto wl = Workloads::load(o.workloads.empty() ? default_training(data) : o.workloads, models, o.ep);
	if (!wl.is_ok())
		return fail(wl.status());
	const int episodes = o.episodes > 0 ? o.episodes : 24;
	const int epochs = o.epochs > 0 ? o.epochs : 10;
	Rng rng(o.seed, 11);
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
			rets.push_back(episode_returns(r->steps, r->makespan, o.reward));
			all_ret.insert(all_ret.end(), rets.back().begin(), rets.back().end());
			eps.push_back(std::move(r->steps));
			if (!o.quiet)
				std::fprintf(stderr, "\r[sl] teacher %s: episode %d/%d (%s), %zu rounds   ",
					     t.c_str(), e + 1, episodes, ep->name.c_str(), eps.back().size());
		}
	}
	const double scale = stddev(all_ret);
	for (std::size_t i = 0; i < eps.size(); ++i)
		add_samples(eps[i], rets[i], scale, samples);
	if (!o.quiet)
		std::fprintf(
			stderr,
			"\n[sl] %zu decision rounds from %d teacher runs (teacher slowdown %.3fx) in %.0fs\n",
			samples.size(), runs, teacher_slowdown / std::max(1, runs), clock.seconds());
	if (samples.empty())
		return fail(Status(StatusCode::kInvalidArgument,
				   "the teacher runs held no decisions (every job always fitted): use a "
				   "smaller --cluster or a "
				   "higher --load-min"));
	models::TrainOptions to;
	to.lr = o.lr > 0 ? o.lr : 1e-3;
	models::Trainer trainer(*model, to, o.seed);
	models::TrainStats st;
	for (int ep = 0; ep < epochs; ++ep) {
		st = trainer.supervised_epoch(samples, true);
		if (!o.quiet)
			std::fprintf(stderr,
				     "[sl] epoch %d/%d: loss %.4f, first pick agrees %.1f%%, value loss %.4f "
				     "(%.0fs)\n",
				     ep + 1, epochs, st.policy_loss, 100 * st.first_pick_agreement,
				     st.value_loss, clock.seconds());
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
			std::fprintf(stderr, "[sl] validation %.4fx of the bound (%.0fs)\n", sl_val,
				     clock.seconds());
		const int per_round = std::max(1, episodes / 2);
		for (int round = 1; round <= o.dagger; ++round) {
			std::size_t before = samples.size();
			for (int e = 0; e < per_round; ++e) {
				auto ep = wl->draw(rng);
				if (!ep.is_ok())
					return fail(ep.status());
				auto r = run_dagger(*ep, *model, o.teachers.front(), o.preset, models, o.ep,
						    o.window);
				if (!r.is_ok())
					return fail(r.status());
				std::vector<double> ret = episode_returns(r->steps, r->makespan, o.reward);
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
				std::fprintf(stderr,
					     "[sl] dagger round %d/%d: +%zu rounds, first pick agrees "
					     "%.1f%%, validation %.4fx "
					     "(best %.4fx @%d), %.0fs\n",
					     round, o.dagger, samples.size() - before,
					     100 * st.first_pick_agreement, v->slowdown, best_val, best_round,
					     clock.seconds());
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
	stage.set("load_range",
		  json::Value::string(std::to_string(o.ep.load_min) + "-" + std::to_string(o.ep.load_max)));
	stage.set("epochs", json::Value::integer(epochs));
	stage.set("lr", json::Value::number(to.lr));
	stage.set("seed", json::Value::integer(static_cast<std::int64_t>(o.seed)));
	stage.set("rounds", json::Value::integer(static_cast<std::int64_t>(samples.size())));
	stage.set("first_pick_agreement", json::Value::number(st.first_pick_agreement));
	stage.set("return_scale", json::Value::number(scale));
	if (o.dagger > 0) {
		stage.set("dagger_rounds", json::Value::integer(o.dagger));
		stage.set("dagger_decision_rounds",
			  json::Value::integer(static_cast<std::int64_t>(dagger_rounds)));
		stage.set("validation_after_sl", json::Value::number(sl_val));
		stage.set("best_validation_slowdown", json::Value::number(best_val));
		stage.set("best_dagger_round", json::Value::integer(best_round));
	}
	stage.set("seconds", json::Value::number(clock.seconds()));
	add_stage(**model, stage);
	Status s = (*model)->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf(
		"dlsched-train: sl: %zu rounds, first pick agrees with the teacher %.1f%%, %.0fs: wrote %s\n",
		samples.size(), 100 * st.first_pick_agreement, clock.seconds(), o.out.c_str());
	return 0;
}

}  // namespace dlsched::train
