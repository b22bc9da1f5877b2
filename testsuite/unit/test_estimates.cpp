// What dlsched-sim's policies see of jobs' lengths (contribs/sim/estimates.h): the estimate model on
// cases computed by hand, and the engine showing policies its estimates while running jobs at their
// true speed (a spy ordering records what each cycle showed).
#include <cmath>
#include <fstream>
#include <sys/stat.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "capi/dump.h"
#include "config/config.h"
#include "contribs/sim/engine.h"
#include "dlsched/api.h"
#include "json/json.h"
#include "profiledb/profile_db.h"
#include "workload/workload.h"
#include "contribs/sim/estimates.h"
#include "policy/registry.h"
#include "policy/scheduler.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;
using namespace dlsched::sim;

namespace {

const double kTol = 1e-9;

// One model "m": linear scaling, a profile epoch of 1000 samples / 10 per s = 100 s on one GPU.
ModelCatalog catalog()
{
	ModelCatalog models;
	ModelProfile p;
	p.name = "m";
	p.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}, {8, 1, 8}};
	p.samples_per_epoch = 1000;
	p.samples_per_s_1gpu = 10;
	models.add(p);
	ModelProfile q = p;  // "n": no profile epoch time
	q.name = "n";
	q.samples_per_epoch = 0;
	models.add(q);
	return models;
}

Job job(JobId id, Seconds submit, double epochs, Seconds epoch_s, Seconds time_limit, int model = 0)
{
	Job j;
	j.id = id;
	j.model = model;
	j.submit_time = submit;
	j.epochs_total = epochs;
	j.epoch_time_1gpu = epoch_s;
	j.time_limit = time_limit;
	return j;
}

}  // namespace

START_TEST(names_and_the_accuracy_table)
{
	ck_assert_str_eq(estimates_name(Estimates::kOracle), "oracle");
	ck_assert_str_eq(estimates_name(Estimates::kPredicted), "predicted");
	ck_assert(parse_estimates("oracle").value() == Estimates::kOracle);
	ck_assert(parse_estimates("predicted").value() == Estimates::kPredicted);
	const auto bad = parse_estimates("truth");
	ck_assert(!bad.is_ok());
	ck_assert_str_eq(bad.status().message().c_str(), "--estimates 'truth': expected oracle or predicted");
	// doc/results.md's MAPE at k = 1, 2, 4, 8 (3.34, 2.75, 2.62, 2.29 %) x sqrt(pi / 2); between rows
	// the row below; none without history.
	const double r = std::sqrt(M_PI / 2);
	ck_assert_double_eq_tol(history_sigma(0), 0, kTol);
	ck_assert_double_eq_tol(history_sigma(1), 0.0334 * r, kTol);
	ck_assert_double_eq_tol(history_sigma(3), 0.0275 * r, kTol);
	ck_assert_double_eq_tol(history_sigma(7), 0.0262 * r, kTol);
	ck_assert_double_eq_tol(history_sigma(100), 0.0229 * r, kTol);
}
END_TEST

START_TEST(before_any_epoch_the_users_word_bounded)
{
	const ModelCatalog models = catalog();
	predict::HintLimits limits;  // trust factor 10
	// 0: 20 epochs at the profile's 100 s = 2000 s claimed, within [10000 / 10, 10000]: kept.
	// 1: 200 epochs = 20000 s claimed > its 10000 s limit: capped there, 10000 / 200 = 50 s.
	// 2: 2 epochs = 200 s < 10000 / 10: raised to 1000 s, 500 s per epoch.
	// 3: model "n" has no profile epoch: its limit (4000 s) over its 8 epochs on 2 GPUs (linear):
	//    4000 x 2 / 8 = 1000 s on one GPU.
	// 4: neither a profile nor a limit: unknown.
	std::vector<Job> jobs = {job(1, 0, 20, 200, 10000), job(2, 0, 200, 200, 10000),
				 job(3, 0, 2, 200, 10000), job(4, 0, 8, 200, 4000, 1),
				 job(5, 0, 8, 200, kNoTimeLimit, 1)};
	jobs[3].gpus_requested = jobs[3].gpus_min = jobs[3].gpus_max = 2;
	EstimateModel est(models, jobs, 1, 0.03, limits);
	const double want[] = {100, 50, 500, 1000, 0};
	for (std::size_t i = 0; i < jobs.size(); ++i) {
		const JobEstimate e = est.estimate(i, jobs[i]);
		ck_assert_msg(std::fabs(e.epoch_time_1gpu - want[i]) < 1e-6, "job %zu: %g, want %g", i,
			      e.epoch_time_1gpu, want[i]);
		ck_assert(e.source == (i < 4 ? EstimateSource::kUser : EstimateSource::kUnknown));
		ck_assert_double_eq_tol(e.runtime_cv, i < 4 ? EstimateModel::kUnmeasuredCv : 0, kTol);
	}
}
END_TEST

START_TEST(timed_epochs_replace_it_within_the_noise)
{
	const ModelCatalog models = catalog();
	std::vector<Job> jobs = {job(1, 0, 1000, 200, 1e6), job(2, 0, 1000, 200, 1e6, 1)};
	// Without noise the mean of what was timed: (3 x 180 + 1 x 220) / 4 = 190.
	EstimateModel exact(models, jobs, 1, 0, {});
	exact.timed(0, 3, 180);
	exact.timed(0, 1, 220);
	JobEstimate e = exact.estimate(0, jobs[0]);
	ck_assert(e.source == EstimateSource::kMeasured);
	ck_assert_uint_eq(e.samples, 4);
	ck_assert_double_eq_tol(e.epoch_time_1gpu, 190, kTol);
	// With 3% per epoch: one epoch is off by about 3%, 400 by about 0.15% (each well within 5 sd),
	// and never exact. (The first epoch's error weighs 1/400 of the mean.)
	EstimateModel noisy(models, jobs, 7, 0.03, {});
	noisy.timed(0, 1, 200);
	e = noisy.estimate(0, jobs[0]);
	ck_assert_msg(std::fabs(std::log(e.epoch_time_1gpu / 200)) < 5 * 0.03, "one epoch: %g",
		      e.epoch_time_1gpu);
	ck_assert(e.epoch_time_1gpu != 200);
	// Its spread: 3% x sqrt(1 / 1000 epochs left + 1 / 1 timed).
	ck_assert_double_eq_tol(e.runtime_cv, 0.03 * std::sqrt(1.0 / 1000 + 1.0), kTol);
	noisy.timed(0, 399, 200);
	e = noisy.estimate(0, jobs[0]);
	ck_assert_uint_eq(e.samples, 400);
	ck_assert_msg(
		std::fabs(std::log(e.epoch_time_1gpu / 200)) < 5 * 0.03 / std::sqrt(399.0) + 5 * 0.03 / 400,
		"400 epochs: %g", e.epoch_time_1gpu);
}
END_TEST

START_TEST(same_model_history_before_its_own_epochs)
{
	const ModelCatalog models = catalog();
	// Jobs 1 and 2 of model m run (1-GPU epoch times 80 and 88, timed without noise); job 3 of m has
	// not started: its estimate is their mean, 84, times the k = 2 error. Job 4 of model n has no
	// history (only m's jobs ran): the user's word.
	std::vector<Job> jobs = {job(1, 0, 10, 80, 1e5), job(2, 0, 10, 88, 1e5), job(3, 0, 10, 300, 1e5),
				 job(4, 0, 10, 300, 1e5, 1)};
	EstimateModel est(models, jobs, 3, 0, {});
	JobEstimate e = est.estimate(2, jobs[2]);
	ck_assert(e.source == EstimateSource::kUser);
	// Before any history: the profile's 10 x 100 s raised to its limit's trust floor, 1e5 / 10.
	ck_assert_double_eq_tol(e.epoch_time_1gpu, 1000, kTol);
	est.timed(0, 2, 80);
	e = est.estimate(2, jobs[2]);
	ck_assert(e.source == EstimateSource::kHistory);
	ck_assert_uint_eq(e.samples, 1);
	const double one = e.epoch_time_1gpu;
	ck_assert_msg(std::fabs(std::log(one / 80)) < 5 * history_sigma(1) && one != 80, "k=1: %g", one);
	est.timed(1, 5, 88);
	e = est.estimate(2, jobs[2]);
	ck_assert_uint_eq(e.samples, 2);
	// The same draw of the job's error, at k = 2's sigma: exactly log(one / 80) x sigma(2) / sigma(1).
	ck_assert_double_eq_tol(std::log(e.epoch_time_1gpu / 84),
				std::log(one / 80) * history_sigma(2) / history_sigma(1), 1e-9);
	// The history's spread (80, 88: sd sqrt(32) x sqrt(1 + 1/2) over 84) is above sigma(2).
	ck_assert_double_eq_tol(e.runtime_cv, std::sqrt(32.0 * 1.5) / 84, 1e-9);
	e = est.estimate(3, jobs[3]);
	ck_assert(e.source == EstimateSource::kUser);
	ck_assert_double_eq_tol(e.epoch_time_1gpu, 1e5 / 10, kTol);  // no profile: the limit over 10 epochs
}
END_TEST

START_TEST(the_same_seed_gives_the_same_draws)
{
	const ModelCatalog models = catalog();
	std::vector<Job> jobs = {job(1, 0, 100, 200, 1e6), job(2, 0, 100, 200, 1e6)};
	auto draws = [&](std::uint64_t seed) {
		EstimateModel est(models, jobs, seed, 0.03, {});
		std::vector<double> v;
		for (int k = 0; k < 5; ++k) {
			est.timed(0, 1 + k, 200);
			v.push_back(est.estimate(0, jobs[0]).epoch_time_1gpu);
			v.push_back(est.estimate(1, jobs[1]).epoch_time_1gpu);  // history
		}
		return v;
	};
	ck_assert(draws(11) == draws(11));
	ck_assert(draws(11) != draws(12));
}
END_TEST

namespace {

// What a cycle showed of one job.
struct Seen {
	Seconds now;
	JobId id;
	Seconds epoch_time_1gpu;
	double runtime_cv;
	bool operator==(const Seen& o) const
	{
		return now == o.now && id == o.id && epoch_time_1gpu == o.epoch_time_1gpu &&
		       runtime_cv == o.runtime_cv;
	}
};

// First come, first served, noting every job each cycle shows it.
struct SpyOrdering : Ordering {
	std::vector<Seen>* log;
	explicit SpyOrdering(std::vector<Seen>* l) : log(l) {}
	const char* name() const override { return "spy"; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override
	{
		for (const auto* list : {&view.running, &view.pending})
			for (const Job* j : *list)
				log->push_back({view.now, j->id, j->epoch_time_1gpu, j->runtime_cv});
		sort_by_key(jobs, [](const Job& j) { return j.submit_time; });
	}
};

// One GPU; job 1 (20 epochs of 200 s: 4000 s) at 0, job 2 (5 of 200 s) at 1000, both of model m,
// limits 10000 s. Cycles at 0, 1000 (job 2 arrives), 4000 (job 1 ends, job 2 starts), 5000.
struct Run {
	std::vector<Seen> seen;
	SimResult result;
};

Run run(Estimates estimates, std::uint64_t seed)
{
	const ModelCatalog models = catalog();
	Workload w;
	w.jobs = {job(1, 0, 20, 200, 10000), job(2, 1000, 5, 200, 10000)};
	w.trace_runtime_s = {4000, 1000};
	Node n;
	n.name = "n1";
	n.gpus_total = n.gpus_free = 1;
	n.partition = "train";
	Run r;
	PolicyRegistry registry;
	register_builtin_policies(registry);
	std::vector<Seen>* log = &r.seen;
	registry.add_ordering("spy", "test", [log](const Config&) -> Result<std::unique_ptr<Ordering>> {
		return std::unique_ptr<Ordering>(new SpyOrdering(log));
	});
	SchedulerSpec spec;
	spec.ordering = "spy";
	registry.add_preset("spy", "test", spec);
	Config c;
	ck_assert(c.set("Policy", "spy", "test").is_ok());
	auto sched = Scheduler::create(c, registry);
	ck_assert_msg(sched.is_ok(), "%s", sched.status().message().c_str());
	SimOptions so;
	so.estimates = estimates;
	so.seed = seed;
	auto res = simulate(w, models, {n}, **sched, so);
	ck_assert_msg(res.is_ok(), "%s", res.status().message().c_str());
	r.result = *res;
	return r;
}

const Seen* find(const std::vector<Seen>& log, Seconds now, JobId id)
{
	for (const Seen& s : log)
		if (s.now == now && s.id == id)
			return &s;
	return nullptr;
}

}  // namespace

START_TEST(the_engine_shows_estimates_and_runs_the_truth)
{
	const Run oracle = run(Estimates::kOracle, 1);
	const Run predicted = run(Estimates::kPredicted, 1);
	for (const Run* r : {&oracle, &predicted}) {
		// The jobs run at their true speed either way: 0 -> 4000, 4000 -> 5000.
		ck_assert_uint_eq(r->result.jobs.size(), 2);
		ck_assert_double_eq_tol(r->result.jobs[0].finish, 4000, 1e-6);
		ck_assert_double_eq_tol(r->result.jobs[1].finish, 5000, 1e-6);
	}
	ck_assert(oracle.result.estimates == Estimates::kOracle);
	ck_assert(predicted.result.estimates == Estimates::kPredicted);
	// The oracle shows the truth, exact.
	for (const Seen& s : oracle.seen)
		ck_assert(s.epoch_time_1gpu == 200 && s.runtime_cv == 0);
	// Predicted, at 0: job 1 has run nothing and its model no history: the profile's 100 s
	// (20 x 100 s within its limit's bounds), spread 25%.
	const Seen* s = find(predicted.seen, 0, 1);
	ck_assert(s != nullptr);
	ck_assert_double_eq_tol(s->epoch_time_1gpu, 100, kTol);
	ck_assert_double_eq_tol(s->runtime_cv, 0.25, kTol);
	// At 1000: job 1 has timed 5 epochs of 200 s (3% each: the mean within 5 x 3% / sqrt(5)); job 2
	// has run nothing: job 1's measurement, its model's history, within 5 x sigma(1) of it.
	const Seen* one = find(predicted.seen, 1000, 1);
	const Seen* two = find(predicted.seen, 1000, 2);
	ck_assert(one != nullptr && two != nullptr);
	ck_assert_msg(std::fabs(std::log(one->epoch_time_1gpu / 200)) < 5 * 0.03 / std::sqrt(5.0),
		      "job 1 at 1000: %g", one->epoch_time_1gpu);
	ck_assert(one->epoch_time_1gpu != 200);
	ck_assert_msg(std::fabs(std::log(two->epoch_time_1gpu / one->epoch_time_1gpu)) < 5 * history_sigma(1),
		      "job 2 at 1000: %g (job 1 %g)", two->epoch_time_1gpu, one->epoch_time_1gpu);
	// The same seed shows the same; another seed other draws.
	ck_assert(run(Estimates::kPredicted, 1).seen == predicted.seen);
	ck_assert(!(run(Estimates::kPredicted, 2).seen == predicted.seen));
}
END_TEST

// One evidence path: the same evidence (two earlier cifar10 jobs of 80 and 88 s steady epochs on
// one GPU) fed to sched/dlsched's host (the C ABI, from a profile DB) and to dlsched-sim's (timed
// epochs) gives the same view of the jobs waiting: a cifar10 job from that history, an imagenet
// job from its profile, a llama-7b job (no profile, no history) from its time limit.
START_TEST(both_hosts_prepare_the_same_view_of_the_same_evidence)
{
	auto loaded = load_model_catalog(DLSCHED_PROFILES);
	ck_assert_msg(loaded.is_ok(), "%s", loaded.status().message().c_str());
	const ModelCatalog& models = loaded.value();
	char dir[] = "/tmp/dlsched-evidence-test.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const std::string db_path = std::string(dir) + "/profiles.db", views = std::string(dir) + "/views";
	ck_assert_int_eq(mkdir(views.c_str(), 0755), 0);
	{
		auto w = db::ProfileDb::open_writer(db_path);
		ck_assert(w.is_ok());
		const double steady[] = {80, 88};
		for (std::int64_t id = 1; id <= 2; ++id) {
			db::JobRecord r;
			r.cluster = "lab", r.job_id = id, r.model = "cifar10", r.gpus = 1, r.epochs_total = 3;
			r.user = "u" + std::to_string(id), r.submit_s = 100.0 * static_cast<double>(id);
			ck_assert(w->put_job(r).is_ok());
			double t = r.submit_s;
			for (int e = 1; e <= 3; ++e) {  // no warm-up: the first epoch as fast as the rest
				db::EpochRecord er;
				er.cluster = "lab", er.job_id = id, er.run = 0, er.epoch = e, er.gpus = 1;
				er.start_s = t;
				er.end_s = t += steady[id - 1];
				ck_assert(w->add_epoch(er).is_ok());
			}
		}
	}
	// The waiting jobs: 10 epochs on 2 GPUs each, a 2000 s limit (within which the claims count).
	const char* names[] = {"cifar10", "imagenet", "llama-7b"};
	dlsched_node_view_t node{};
	node.struct_size = sizeof node;
	node.name = "n1", node.gpus_total = 8, node.gpus_free = 0, node.partition = "train", node.up = 1;
	dlsched_job_view_t cjobs[3]{};
	std::vector<Job> jobs;
	for (int i = 0; i < 3; ++i) {
		dlsched_job_view_t& v = cjobs[i];
		v.struct_size = sizeof v;
		v.job_id = static_cast<std::uint32_t>(10 + i);
		v.user = "alice", v.model = names[i], v.submit_time = i, v.gpus_requested = 2;
		v.epochs_total = 10, v.time_limit = 2000, v.last_stop_time = -1;
		Job j = job(10 + i, i, 10, 0, 2000, models.find(names[i]));
		j.gpus_requested = j.gpus_min = j.gpus_max = 2;
		jobs.push_back(j);
	}
	jobs.push_back(job(1, 0, 3, 80, 1e4, models.find("cifar10")));  // the two that ran, for the sim
	jobs.push_back(job(2, 0, 3, 88, 1e4, models.find("cifar10")));
	dlsched_cluster_view_t cv{};
	cv.struct_size = sizeof cv;
	cv.now = 10000, cv.cycle = 1, cv.nodes = &node, cv.node_count = 1, cv.jobs = cjobs, cv.job_count = 3;
	cv.inference_demand = 1;

	// sched/dlsched's host: the C ABI, reading the profile DB; what decide() saw, from DumpViews=.
	const std::string conf = std::string(dir) + "/dlsched.conf";
	{
		std::ofstream f(conf);
		f << "Policy=fifo\nProfileDB=" << db_path << "\nDumpViews=" << views
		  << "\nModelProfiles=" << DLSCHED_PROFILES << "\n";
	}
	dlsched_scheduler_t* sched = nullptr;
	dlsched_error_t err;
	ck_assert_msg(dlsched_scheduler_create(conf.c_str(), &sched, &err) == DLSCHED_OK, "%s", err.message);
	ck_assert_int_eq(dlsched_scheduler_set_cluster(sched, "lab"), DLSCHED_OK);
	dlsched_decisions_t* d = nullptr;
	ck_assert_msg(dlsched_scheduler_decide(sched, &cv, &d, &err) == DLSCHED_OK, "%s", err.message);
	dlsched_decisions_free(d);
	dlsched_scheduler_destroy(sched);
	std::ifstream in(views + "/view-0000010000-000001.json");
	const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	auto file = json::Value::parse(text, "view");
	ck_assert_msg(file.is_ok(), "%s", file.status().message().c_str());
	const json::Value prepared = file->get("prepared");
	ck_assert_uint_eq(prepared.size(), 3);

	// dlsched-sim's host: the same epochs, timed without noise, the history without its error.
	EstimateModel sim(models, jobs, 1, 0, {});
	sim.without_history_error();
	sim.timed(3, 2, 80);
	sim.timed(4, 2, 88);
	const double want[] = {84, 0, 2000.0 * 2 / 10};  // history; imagenet's profile (below); the limit
	for (std::size_t i = 0; i < 3; ++i) {
		const JobEstimate e = sim.estimate(i, jobs[i]);
		const json::Value p = prepared.at(i);
		const double slurm_epoch = p.get("epoch_time_1gpu").as_number().value_or(-1);
		const double slurm_cv = p.get("runtime_cv").as_number().value_or(-1);
		ck_assert_msg(std::fabs(e.epoch_time_1gpu - slurm_epoch) <= 1e-9 * slurm_epoch,
			      "%s: sim %.12g s per epoch, sched/dlsched %.12g", names[i], e.epoch_time_1gpu,
			      slurm_epoch);
		ck_assert_msg(std::fabs(e.runtime_cv - slurm_cv) <= 1e-9,
			      "%s: sim cv %.12g, sched/dlsched %.12g", names[i], e.runtime_cv, slurm_cv);
		ck_assert(p.get("runtime_from_limit").as_bool().value_or(false) == (i == 2));
		if (want[i] > 0)
			ck_assert_msg(std::fabs(e.epoch_time_1gpu - want[i]) < 1e-9, "%s: %g", names[i],
				      e.epoch_time_1gpu);
	}
	// The history's sources: 84 s from 2 jobs, their spread (80, 88: sd sqrt(32) x sqrt(1 + 1/2)).
	ck_assert(sim.estimate(0, jobs[0]).source == EstimateSource::kHistory);
	ck_assert_double_eq_tol(sim.estimate(0, jobs[0]).runtime_cv, std::sqrt(32.0 * 1.5) / 84, 1e-9);
	// Imagenet's profile (an hour and more per epoch on one GPU) claims more than the limit allows:
	// capped there, 10 epochs on 2 GPUs in 2000 s.
	const int imagenet = models.find("imagenet");
	ck_assert(models.epoch_time_1gpu(imagenet) * 10 / models.speedup(imagenet, 2) > 2000);
	ck_assert_double_eq_tol(sim.estimate(1, jobs[1]).epoch_time_1gpu * 10 / models.speedup(imagenet, 2),
				2000, 1e-6);
	ck_assert(sim.estimate(2, jobs[2]).source == EstimateSource::kUser);
	std::remove((views + "/view-0000010000-000001.json").c_str());
	rmdir(views.c_str());
}
END_TEST

int main()
{
	Suite* s = suite_create("estimates");
	TCase* tc = tcase_create("estimates");
	tcase_add_test(tc, names_and_the_accuracy_table);
	tcase_add_test(tc, before_any_epoch_the_users_word_bounded);
	tcase_add_test(tc, timed_epochs_replace_it_within_the_noise);
	tcase_add_test(tc, same_model_history_before_its_own_epochs);
	tcase_add_test(tc, the_same_seed_gives_the_same_draws);
	tcase_add_test(tc, the_engine_shows_estimates_and_runs_the_truth);
	tcase_add_test(tc, both_hosts_prepare_the_same_view_of_the_same_evidence);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
