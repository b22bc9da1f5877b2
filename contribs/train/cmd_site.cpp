// dlsched-train site: a site's own model from its own history. The history (sacct records, or a
// workload file) is split by submit time; the earlier part is trained on (the best heuristic's
// decisions, then PPO: cmd_sl and cmd_rl as they are; with --fine-tune, PPO alone from a given model,
// DL2's transfer of a trained model to a new cluster), the later part judges the result against the
// heuristics (a report card). The model is written only when dl2 beats the best of them there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "cli.h"
#include "sacct.h"

namespace dlsched::train {

namespace {

// The heuristics the report card compares with; the teacher is the best of them on the earlier part.
const char* const kHeuristics[] = {"srtf", "mckp", "optimus", "tiresias-las"};

// Exit status when the model does not beat the best heuristic on the held-out part (not written).
constexpr int kNotBetter = 3;

// A scratch directory for the converted history and the stages' models, removed on the way out.
struct Scratch {
	std::string dir;
	~Scratch()
	{
		if (dir.empty())
			return;
		for (const char* f : {"history.csv", "sl.pt", "rl.pt"})
			::unlink((dir + "/" + f).c_str());
		::rmdir(dir.c_str());
	}
};

void progress(const Options& o, const Clock& clock, int stage, const char* what)
{
	if (!o.quiet)
		std::fprintf(stderr, "[site] stage %d/4: %s (%.0fs elapsed)\n", stage, what, clock.seconds());
}

json::Value metrics_json(const sim::RunMetrics& m)
{
	json::Value v = json::Value::object();
	v.set("avg_jct_s", json::Value::number(m.avg_jct_s));
	v.set("p99_jct_s", json::Value::number(m.p99_jct_s));
	v.set("preemptions", json::Value::integer(m.preemptions));
	v.set("resizes", json::Value::integer(m.resizes));
	v.set("jobs", json::Value::integer(static_cast<std::int64_t>(m.jobs)));
	if (!m.fallback.empty())
		v.set("fallback", json::Value::string(m.fallback));
	return v;
}

}  // namespace

int cmd_site(const Options& in, const ModelCatalog& models, const std::string& data)
{
	if (in.out.empty())
		return usage_error(
			"site needs --out FILE (written only when dl2 beats the best heuristic, or with "
			"--force)");
	if (in.sacct_file.empty() == in.workload_file.empty())
		return usage_error(
			"site needs one history: --sacct FILE (sacct -X -P -o "
			"JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment) or --workload FILE");
	if (!in.cluster_given)
		return usage_error(
			"site needs --cluster SPEC: the site's GPUs (NxG, or a cluster file as dlsched-sim "
			"takes)");
	if (!in.init.empty() && !in.fine_tune.empty())
		return usage_error(
			"site takes --init FILE (the warm-up starts from it) or --fine-tune FILE (no "
			"warm-up: PPO starts from it), not both");
	for (const auto& [path, what] : {std::pair<std::string, const char*>{in.out, "--out"},
					 {in.json_out, "--json"},
					 {in.curve, "--curve"}})
		if (!path.empty()) {
			Status w = check_writable(path, what);
			if (!w.is_ok())
				return fail(w);
		}
	// The model to fine-tune, read before any work: a missing file or another feature schema fails
	// here, not after the heuristics' runs.
	std::shared_ptr<models::PolicyModel> start;
	if (!in.fine_tune.empty()) {
		auto m = models::PolicyModel::load(in.fine_tune);
		if (!m.is_ok())
			return fail(Status(m.status().code(),
					   "--fine-tune " + in.fine_tune + ": " + m.status().message()));
		start = m.value();
	}
	Clock clock;
	Options o = in;
	// What the controller sees, unless told otherwise: each model's predicted restart cost and the
	// predictor's estimates; around the site's own load.
	if (!o.restart_given)
		o.ep.restart_model = true;
	if (!o.estimates_given)
		o.ep.estimates = "predicted";
	if (!o.load_given) {
		o.ep.load_min = 1;
		o.ep.load_max = 1.5;
	}
	// Sized for a 5,000-job history in under 30 minutes on two cores: a smaller warm-up than sl's
	// (8 runs of the teacher, 3 epochs) and 6 PPO iterations.
	if (!o.iterations_given)
		o.iterations = 6;
	o.val_loads = {1};
	o.quiet = in.quiet;

	Scratch scratch;
	char tmpl[] = "/tmp/dlsched-site.XXXXXX";
	if (!::mkdtemp(tmpl))
		return fail(io_error(
			"cannot create a scratch directory under /tmp (set TMPDIR? /tmp must be writable)"));
	scratch.dir = tmpl;

	// Stage 1: the history as a workload, split by submit time.
	progress(o, clock, 1, "the workload");
	std::string history = o.workload_file;
	if (!o.sacct_file.empty()) {
		std::ifstream sin(o.sacct_file);
		if (!sin)
			return fail(not_found(o.sacct_file + ": cannot read"));
		history = scratch.dir + "/history.csv";
		std::ofstream hout(history);
		auto n = sacct_workload(sin, o.sacct_file, models, hout, o.time_scale);
		if (!n.is_ok())
			return fail(n.status());
		hout.close();
		if (!hout)
			return fail(io_error(history + ": cannot write the converted history"));
	}
	BuildOptions b;
	auto whole = load_workload(history, ReadOptions(), b, models);
	if (!whole.is_ok())
		return fail(whole.status());
	const std::size_t n = whole->jobs.size();
	const std::size_t held =
		static_cast<std::size_t>(std::llround(o.holdout_fraction * static_cast<double>(n)));
	const std::size_t train = n - held;
	if (train < 10 || held < 10)
		return fail(invalid_argument(
			(o.sacct_file.empty() ? o.workload_file : o.sacct_file) + ": " + std::to_string(n) +
			" jobs, " + std::to_string(train) + " to train on and " + std::to_string(held) +
			" held out: each part needs at least 10 jobs (a longer history, or another "
			"--holdout-fraction)"));
	const std::string train_spec = history + "@0:" + std::to_string(train);
	const std::string held_spec = history + "@" + std::to_string(train) + ":" + std::to_string(held);
	// Model selection during RL looks at the last quarter of the earlier part, never the held-out one.
	const std::size_t nval = std::max<std::size_t>(10, train / 4);
	o.workloads = {train_spec};
	o.validate = {history + "@" + std::to_string(train - nval) + ":" + std::to_string(nval)};
	o.ep.jobs = std::min(o.ep.jobs, train);
	if (!o.quiet)
		std::fprintf(stderr,
			     "[site] %zu jobs: %zu to train on (jobs 1-%zu by submit time), %zu held out\n",
			     n, train, train, held);

	auto train_wl = Workloads::load({train_spec}, models, o.ep);
	if (!train_wl.is_ok())
		return fail(train_wl.status());
	auto held_wl = Workloads::load({held_spec}, models, o.ep);
	if (!held_wl.is_ok())
		return fail(held_wl.status());
	auto train_eps = train_wl->whole(1, o.seed);
	if (!train_eps.is_ok())
		return fail(train_eps.status());
	auto held_eps = held_wl->whole(1, o.seed);
	if (!held_eps.is_ok())
		return fail(held_eps.status());

	// Stage 2: the best heuristic on the earlier part teaches (unless --teacher names them); with
	// --fine-tune it is only PPO's reference.
	progress(o, clock, 2,
		 start ? "the heuristics on the earlier part (no warm-up: --fine-tune)"
		       : "the heuristics on the earlier part, and the warm-up from the best");
	json::Value train_card = json::Value::object();
	std::string best_train;
	double best_train_jct = INFINITY;
	for (const char* h : kHeuristics) {
		auto r = run_preset(train_eps->front(), h, models, o.ep);
		if (!r.is_ok())
			return fail(r.status());
		train_card.set(h, metrics_json(r->metrics));
		if (r->metrics.avg_jct_s < best_train_jct) {
			best_train_jct = r->metrics.avg_jct_s;
			best_train = h;
		}
		if (!o.quiet)
			std::fprintf(stderr,
				     "[site]   %-13s avg JCT %.0fs on the earlier part (%.0fs elapsed)\n", h,
				     r->metrics.avg_jct_s, clock.seconds());
	}
	if (!o.teacher_given)
		o.teachers = {best_train};
	Options sl = o;
	sl.out = scratch.dir + "/sl.pt";
	sl.episodes = in.episodes > 0 ? in.episodes : 8;
	sl.epochs = in.epochs > 0 ? in.epochs : 3;
	if (!start) {
		int rc = cmd_sl(sl, models, data);
		if (rc != 0)
			return rc;
	}

	// Stage 3: PPO in the simulator on the earlier part, from the warm-up or the model given. It keeps
	// the best model by validation, the one it started from included.
	progress(o, clock, 3, "reinforcement learning on the earlier part");
	Options rl = o;
	rl.init = start ? in.fine_tune : sl.out;
	rl.out = scratch.dir + "/rl.pt";
	rl.reference = best_train;
	rl.resume = false;
	rl.checkpoint_dir.clear();
	int rc = cmd_rl(rl, models, data);
	if (rc != 0)
		return rc;
	auto model = models::PolicyModel::load(rl.out);
	if (!model.is_ok())
		return fail(model.status());

	// Stage 4: the report card on the held-out part.
	progress(o, clock, 4, "the report card on the held-out part");
	const Episode& judged = held_eps->front();
	std::vector<std::pair<std::string, sim::RunMetrics>> card;
	for (const char* h : kHeuristics) {
		auto r = run_preset(judged, h, models, o.ep);
		if (!r.is_ok())
			return fail(r.status());
		card.emplace_back(h, r->metrics);
	}
	auto d = run_policy(judged, *model, false, o.seed, o.preset, models, o.ep, o.window, false);
	if (!d.is_ok())
		return fail(d.status());
	const sim::RunMetrics& dl2 = d->metrics;
	// The model fine-tuned from, on the same part: did the site's own workload improve on it?
	sim::RunMetrics from;
	if (start) {
		auto f = run_policy(judged, start, false, o.seed, o.preset, models, o.ep, o.window, false);
		if (!f.is_ok())
			return fail(f.status());
		from = f->metrics;
	}
	std::size_t best = 0;
	for (std::size_t i = 1; i < card.size(); ++i)
		if (card[i].second.avg_jct_s < card[best].second.avg_jct_s)
			best = i;
	const sim::RunMetrics& bh = card[best].second;
	const double ratio_avg = dl2.avg_jct_s / std::max(1e-9, bh.avg_jct_s);
	const double ratio_p99 = dl2.p99_jct_s / std::max(1e-9, bh.p99_jct_s);
	const bool wins = dl2.avg_jct_s < bh.avg_jct_s && dl2.fallback.empty();

	std::printf("dlsched-train site: report card on the held-out part (%zu jobs, %s, cluster %s)\n", held,
		    held_spec.c_str(), o.ep.cluster.c_str());
	std::printf("  %-13s %12s %12s %12s %10s %10s\n", "policy", "avg JCT (s)", "p99 JCT (s)",
		    "preemptions", "avg/best", "p99/best");
	auto row = [&](const std::string& name, const sim::RunMetrics& m) {
		std::printf("  %-13s %12.0f %12.0f %12ld %10.3f %10.3f\n", name.c_str(), m.avg_jct_s,
			    m.p99_jct_s, m.preemptions, m.avg_jct_s / std::max(1e-9, bh.avg_jct_s),
			    m.p99_jct_s / std::max(1e-9, bh.p99_jct_s));
	};
	for (const auto& [name, m] : card)
		row(name, m);
	row(o.preset, dl2);
	if (start) {
		row("(from)", from);
		std::printf("  (from: %s, the model --fine-tune started from)\n", in.fine_tune.c_str());
	}
	if (!dl2.fallback.empty())
		std::printf("  (%s fell back to %s on the held-out part)\n", o.preset.c_str(),
			    dl2.fallback.c_str());

	json::Value policies = json::Value::object();
	for (const auto& [name, m] : card)
		policies.set(name, metrics_json(m));
	policies.set(o.preset, metrics_json(dl2));
	json::Value ratios = json::Value::object();
	ratios.set("avg_jct_vs_best", json::Value::number(ratio_avg));
	ratios.set("p99_jct_vs_best", json::Value::number(ratio_p99));
	for (const auto& [name, m] : card)
		ratios.set("avg_jct_vs_" + name,
			   json::Value::number(dl2.avg_jct_s / std::max(1e-9, m.avg_jct_s)));
	json::Value doc = json::Value::object();
	doc.set("history", json::Value::string(o.sacct_file.empty() ? o.workload_file : o.sacct_file));
	doc.set("cluster", json::Value::string(o.ep.cluster));
	doc.set("jobs", json::Value::integer(static_cast<std::int64_t>(n)));
	doc.set("train_jobs", json::Value::integer(static_cast<std::int64_t>(train)));
	doc.set("heldout_jobs", json::Value::integer(static_cast<std::int64_t>(held)));
	doc.set("teachers", string_array(o.teachers));
	doc.set("estimates", json::Value::string(o.ep.estimates));
	doc.set("restart_cost",
		o.ep.restart_model ? json::Value::string("model") : json::Value::number(o.ep.restart_cost));
	doc.set("elastic_fraction", json::Value::number(o.ep.elastic_fraction));
	doc.set("train_part", train_card);
	doc.set("policies", policies);
	doc.set("best_heuristic", json::Value::string(card[best].first));
	doc.set("ratios", ratios);
	if (start) {
		json::Value f = metrics_json(from);
		f.set("file", json::Value::string(in.fine_tune));
		f.set("avg_jct_vs_best", json::Value::number(from.avg_jct_s / std::max(1e-9, bh.avg_jct_s)));
		doc.set("fine_tuned_from", f);
	}
	doc.set("beats_best", json::Value::boolean(wins));
	doc.set("written", json::Value::boolean(wins || o.force));
	doc.set("seconds", json::Value::number(clock.seconds()));
	if (!o.json_out.empty()) {
		std::ofstream js(o.json_out);
		js << doc.dump(2) << "\n";
		if (!js)
			return fail(io_error(o.json_out + ": cannot write the report card"));
	}

	if (!wins && !o.force) {
		std::printf(
			"dlsched-train: site: %s does not beat %s on the held-out part (avg JCT %.3fx): %s "
			"not written "
			"(keep the heuristic; --force writes it anyway), %.0fs\n",
			o.preset.c_str(), card[best].first.c_str(), ratio_avg, o.out.c_str(),
			clock.seconds());
		return kNotBetter;
	}
	json::Value stage = json::Value::object();
	stage.set("stage", json::Value::string("site"));
	stage.set("report_card", doc);
	add_stage(**model, stage);
	Status s = (*model)->save(o.out);
	if (!s.is_ok())
		return fail(s);
	std::printf(
		"dlsched-train: site: %s %s %s on the held-out part (avg JCT %.3fx, p99 %.3fx), %.0fs: wrote "
		"%s%s\n",
		o.preset.c_str(), wins ? "beats" : "does not beat", card[best].first.c_str(), ratio_avg,
		ratio_p99, clock.seconds(), o.out.c_str(), wins ? "" : " (--force)");
	return 0;
}

}  // namespace dlsched::train
