// dlsched-train rl: PPO in dlsched-sim, with the sibling-rollout baseline.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sys/stat.h>

#include "cli.h"
#include "curve.h"
#include "returns.h"
#include "util/random.h"

namespace dlsched::train {

int cmd_rl(const Options& o, const ModelCatalog& models, const std::string& data)
{
	if (o.out.empty())
		return usage_error("rl needs --out FILE");
	for (const auto& [path, what] :
	     {std::pair<std::string, const char*>{o.out, "--out"}, {o.curve, "--curve"}, {o.png, "--png"}})
		if (!path.empty()) {
			Status w = check_writable(path, what);
			if (!w.is_ok())
				return fail(w);
		}
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
		::mkdir(o.checkpoint_dir.c_str(),
			0755);  // checked below when the first checkpoint is written
	const int workloads = o.episodes > 0 ? o.episodes : (o.rollouts > 1 ? 2 : 4);
	const int episodes = workloads * o.rollouts;
	models::TrainOptions to;
	to.lr = o.lr > 0 ? o.lr : 3e-4;
	to.entropy = o.entropy;
	to.target_kl = o.target_kl;
	models::Trainer trainer(*model, to, o.seed + static_cast<std::uint64_t>(first_iter));
	Rng rng(o.seed, 7919 + static_cast<std::uint64_t>(first_iter));
	Clock clock;

	std::unique_ptr<CurveCsv> curve;
	if (!o.curve.empty()) {
		auto c = CurveCsv::open(o.curve, first_iter > 0);
		if (!c.is_ok())
			return fail(c.status());
		curve.reset(c.value());
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
			std::fprintf(stderr, "[rl] reference %s: validation %.4fx of the bound\n",
				     o.reference.c_str(), reference);
	}
	double best = v0->slowdown;
	std::shared_ptr<models::PolicyModel> best_model = (*model)->clone();
	int best_iter = first_iter;
	if (!o.quiet)
		std::fprintf(stderr, "[rl] start: validation %.4fx of the bound over %zu runs\n", best,
			     val->size());
	if (curve && first_iter == 0) {
		CurvePoint p;
		p.seconds = clock.seconds();
		p.val_slowdown = p.best_val_slowdown = best;
		curve->add(p);
	}
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
			// K sampled rollouts of the same workload (the same arrivals, other draws of the
			// policy).
			std::vector<EpisodeResult> group;
			for (int k = 0; k < o.rollouts; ++k) {
				auto r = run_policy(*ep, *model, true, rng.next(), o.preset, models, o.ep,
						    o.window, true);
				if (!r.is_ok())
					return fail(r.status());
				train_slowdown +=
					r->metrics.avg_jct_s / std::max(1.0, r->metrics.bound_avg_jct_s);
				group.push_back(std::move(r.value()));
			}
			const std::size_t first = rets.size();
			for (const EpisodeResult& r : group) {
				rets.push_back(episode_returns(r.steps, r.makespan, o.reward));
				all_ret.insert(all_ret.end(), rets.back().begin(), rets.back().end());
			}
			// A step's advantage: its return minus the other rollouts' returns from the same
			// time.
			if (o.rollouts > 1) {
				std::vector<Rollout> rolls;
				for (std::size_t i = 0; i < group.size(); ++i)
					rolls.push_back(
						{&group[i].steps, &rets[first + i], group[i].makespan});
				for (std::size_t i = 0; i < group.size(); ++i)
					advs.push_back(sibling_advantages(rolls, i, o.reward.horizon_s));
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
			normalise(adv);
			for (std::size_t i = 0; i < samples.size(); ++i)
				samples[i].advantage = static_cast<float>(adv[i]);
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
			CurvePoint p;
			p.iteration = it;
			p.seconds = clock.seconds();
			p.episodes = episodes;
			p.rounds = samples.size();
			p.train_slowdown = train_slowdown;
			p.val_slowdown = vs;
			p.best_val_slowdown = best;
			p.policy_loss = st.policy_loss;
			p.value_loss = st.value_loss;
			p.entropy = st.entropy;
			curve->add(p);
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
			char vtext[32] = "-";
			if (!std::isnan(vs))
				std::snprintf(vtext, sizeof vtext, "%.4fx", vs);
			const double per = clock.seconds() / (it - first_iter);
			std::fprintf(stderr,
				     "[rl] iteration %d/%d: %zu rounds, train %.3fx, validation %s (best "
				     "%.4fx @%d), "
				     "entropy %.3f, kl %.4f%s, %.0fs, ETA %.0fs\n",
				     it, first_iter + o.iterations, samples.size(), train_slowdown, vtext,
				     best, best_iter, st.entropy, st.kl, st.stopped ? " (stopped)" : "",
				     clock.seconds(), per * (first_iter + o.iterations - it));
		}
	}
	curve.reset();
	if (!o.png.empty() && !o.curve.empty())
		write_chart(o.curve, o.png);
	json::Value stage = json::Value::object();
	stage.set("stage", json::Value::string("ppo"));
	stage.set("preset", json::Value::string(o.preset));
	stage.set("workloads", string_array(o.workloads.empty() ? default_training("DATA") : o.workloads));
	stage.set("validation", string_array(o.validate.empty() ? default_validation("DATA") : o.validate));
	stage.set("cluster", json::Value::string(o.ep.cluster));
	stage.set("iterations", json::Value::integer(first_iter + o.iterations));
	stage.set("episodes_per_iteration", json::Value::integer(episodes));
	stage.set("rollouts_per_workload", json::Value::integer(o.rollouts));
	stage.set("baseline", json::Value::string(o.rollouts > 1 ? "sibling rollouts at the same time"
								 : "value network"));
	stage.set("jobs_per_episode", json::Value::integer(static_cast<std::int64_t>(o.ep.jobs)));
	stage.set("ppo_epochs", json::Value::integer(o.ppo_epochs));
	stage.set("lr", json::Value::number(to.lr));
	stage.set("clip", json::Value::number(to.clip));
	stage.set("entropy", json::Value::number(to.entropy));
	stage.set("target_kl", json::Value::number(to.target_kl));
	stage.set("horizon_s", json::Value::number(o.reward.horizon_s));
	stage.set("preemption_penalty_s", json::Value::number(o.reward.preemption_penalty_s));
	stage.set("resize_penalty_s", json::Value::number(o.reward.resize_penalty_s));
	stage.set("elastic_fraction", json::Value::number(o.ep.elastic_fraction));
	stage.set("estimates", json::Value::string(o.ep.estimates));
	stage.set("restart_cost",
		  o.ep.restart_model ? json::Value::string("model") : json::Value::number(o.ep.restart_cost));
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
	std::printf(
		"dlsched-train: rl: validation %.4fx -> %.4fx of the bound (best at iteration %d of %d), "
		"%.0fs: wrote %s\n",
		v0->slowdown, best, best_iter, first_iter + o.iterations, clock.seconds(), o.out.c_str());
	return 0;
}

}  // namespace dlsched::train
