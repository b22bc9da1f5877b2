// dlsched-train init, info, online (fine-tuning from sched/dlsched's recorded experience) and
// sacct (warm-up from a cluster's history).
#include <cstdio>
#include <fstream>

#include "cli.h"
#include "models/features.h"
#include "profiledb/profile_db.h"
#include "returns.h"
#include "sacct.h"
#include "../sim/cluster_spec.h"

namespace dlsched::train {

int cmd_init(const Options& o)
{
	if (o.out.empty())
		return usage_error("init needs --out FILE");
	Status w = check_writable(o.out, "--out");
	if (!w.is_ok())
		return fail(w);
	auto m = models::PolicyModel::create(o.hidden, o.seed);
	json::Value st = json::Value::object();
	st.set("stage", json::Value::string("init"));
	st.set("seed", json::Value::integer(static_cast<std::int64_t>(o.seed)));
	add_stage(*m, st);
	Status s = m->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf("dlsched-train: wrote %s (random weights, %zu parameters)\n", o.out.c_str(),
		    m->parameter_count());
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
	std::printf("model %s\n  format %d, feature schema %d, hidden %d, %zu parameters\n",
		    o.info_file.c_str(), i.format, i.schema, i.hidden, (*m)->parameter_count());
	std::printf("  row features:");
	for (int f = 0; f < models::kRowFeatures; ++f)
		std::printf("%s %s", f ? ";" : "", models::job_feature_name(f));
	std::printf("\n  training: %s\n", i.info.c_str());
	return 0;
}

// Fine-tunes from the experience sched/dlsched recorded (RecordExperience=yes). The logged rounds
// are the deployed policy's argmax, not draws from it, so PPO's ratios do not apply: the update is
// advantage-weighted regression on the logged picks (Peng et al., "Advantage-Weighted Regression",
// 2019), with the same reward as in the simulator.
int cmd_online(const Options& o)
{
	if (o.out.empty() || o.db.empty())
		return usage_error(
			"online needs --db FILE and --out FILE (and --init FILE: the model in use)");
	if (o.init.empty())
		return usage_error("online needs --init FILE: the model sched/dlsched runs (ModelFile=)");
	Status w = check_writable(o.out, "--out");
	if (!w.is_ok())
		return fail(w);
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
					   o.db + ": no experience rows: set RecordExperience=yes and "
						  "ProfileDB= in dlsched.conf, "
						  "reconfigure, and let the cluster run"));
		if (clusters->size() > 1) {
			std::string names;
			for (const auto& c : *clusters)
				names += (names.empty() ? "" : ", ") + c.first + " (" +
					 std::to_string(c.second) + " rows)";
			return fail(Status(StatusCode::kInvalidArgument,
					   o.db + ": experience from several clusters (" + names +
						   "): pass --cluster-name"));
		}
		cluster = clusters->front().first;
		if (!o.quiet)
			std::fprintf(stderr, "[online] cluster '%s' (%d rows)\n", cluster.c_str(),
				     clusters->front().second);
	}
	auto steps = pdb->experience(cluster, o.since);
	if (!steps.is_ok())
		return fail(steps.status());
	Clock clock;
	const std::size_t rows = steps->size();
	const Seconds end = steps->empty() ? 0 : steps->back().now;
	std::vector<double> ret = episode_returns(*steps, end, o.reward);
	const double scale = stddev(ret);
	std::vector<models::Sample> samples;
	add_samples(*steps, ret, scale, samples);
	if (samples.size() < 8)
		return fail(Status(StatusCode::kInvalidArgument,
				   o.db + ": " + std::to_string(rows) + " experience rows with " +
					   std::to_string(samples.size()) + " decisions in them (cluster '" +
					   cluster +
					   "'): too few to learn from; set RecordExperience=yes and "
					   "ProfileDB= in dlsched.conf "
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
		normalise(adv);
		for (std::size_t i = 0; i < samples.size(); ++i)
			samples[i].advantage = static_cast<float>(adv[i]);
		st = trainer.awr_epoch(samples);
		if (!o.quiet)
			std::fprintf(stderr, "[online] epoch %d/%d: weighted loss %.4f, value loss %.4f\n",
				     e + 1, epochs, st.policy_loss, st.value_loss);
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
	std::printf(
		"dlsched-train: online: %zu experience rows, %zu decision rounds, %.0fs: wrote %s "
		"(point ModelFile= at it and run scontrol reconfigure)\n",
		rows, samples.size(), clock.seconds(), o.out.c_str());
	return 0;
}

// Supervised warm-up from the cluster's own history (sacct).
int cmd_sacct(const Options& o, const ModelCatalog& models)
{
	if (o.out.empty() || o.sacct_file.empty())
		return usage_error(
			"sacct needs --sacct FILE (sacct -X -P -o "
			"JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment) "
			"and --out FILE");
	Status w = check_writable(o.out, "--out");
	if (!w.is_ok())
		return fail(w);
	std::ifstream in(o.sacct_file);
	if (!in)
		return fail(Status(StatusCode::kNotFound, o.sacct_file + ": cannot read"));
	auto nodes = sim::parse_cluster_spec(o.ep.cluster, models.gpu_types());
	if (!nodes.is_ok())
		return fail(nodes.status());
	auto rounds = sacct_rounds(in, o.sacct_file, models, *nodes, o.window, o.time_scale);
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
					   " start times, none with a choice in it (the queue never held "
					   "more than fitted): "
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
	std::printf(
		"dlsched-train: sacct: %zu start times, %zu with a choice; first pick agrees with the "
		"cluster's "
		"scheduler %.1f%%: wrote %s\n",
		n, samples.size(), 100 * st.first_pick_agreement, o.out.c_str());
	return 0;
}

}  // namespace dlsched::train
