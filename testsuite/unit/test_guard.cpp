// The learned policy's guard (policy/guard.h, SimOptions::guard): the switching rule on hand-built
// histories, the snapshot an evaluation replays (never a job submitted after it, never a length not
// known then), and the engine switching between two real schedulers by their replays.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "contribs/sim/engine.h"
#include "policy/guard.h"
#include "policy/guard_verdict.h"
#include "policy/registry.h"
#include "policy/scheduler.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;
using namespace dlsched::sim;

namespace {

const double kTol = 1e-9;

ModelCatalog catalog()
{
	ModelCatalog models;
	ModelProfile p;
	p.name = "m";
	p.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}, {8, 1, 8}};
	p.samples_per_epoch = 1000;
	p.samples_per_s_1gpu = 10;  // the profile says 100 s per epoch on one GPU
	models.add(p);
	return models;
}

Job job(JobId id, Seconds submit, double epochs, Seconds epoch_s, Seconds time_limit = 1e6)
{
	Job j;
	j.id = id;
	j.model = 0;
	j.submit_time = submit;
	j.epochs_total = epochs;
	j.epoch_time_1gpu = epoch_s;
	j.time_limit = time_limit;
	return j;
}

GuardKnown known(const Job& j, bool finished = false, Seconds measured = 0)
{
	GuardKnown k;
	k.job = j;
	k.finished = finished;
	k.measured_epoch_time_1gpu = measured;
	return k;
}

}  // namespace

START_TEST(switching_on_hand_built_histories)
{
	GuardState g(0.02);
	ck_assert(g.choice() == GuardChoice::kHeuristic);  // starts with what the site ran before
	// Learned 1% better: not beyond the margin, the heuristic stays.
	GuardVerdict v = g.evaluate(100, 10, 99, 100);
	ck_assert(!v.switched() && g.choice() == GuardChoice::kHeuristic);
	// Exactly 2% better: still not beyond it.
	v = g.evaluate(200, 10, 98, 100);
	ck_assert(!v.switched());
	// 3% better: the learned policy takes the cluster.
	v = g.evaluate(300, 10, 97, 100);
	ck_assert(v.switched() && v.before == GuardChoice::kHeuristic && v.after == GuardChoice::kLearned);
	ck_assert_int_eq(g.switches(), 1);
	// Equal: the learned policy keeps it (the heuristic is not better).
	v = g.evaluate(400, 10, 100, 100);
	ck_assert(!v.switched() && g.choice() == GuardChoice::kLearned);
	// An evaluation with no job, or a failed replay, changes nothing.
	v = g.evaluate(500, 0, 1000, 1);
	ck_assert(!v.switched() && g.choice() == GuardChoice::kLearned);
	v = g.evaluate(550, 5, INFINITY, 1);
	ck_assert(!v.switched() && g.choice() == GuardChoice::kLearned);
	// The heuristic 0.5% better: back to it at once.
	v = g.evaluate(600, 10, 100.5, 100);
	ck_assert(v.switched() && g.choice() == GuardChoice::kHeuristic);
	ck_assert_int_eq(g.switches(), 2);
	ck_assert_int_eq(g.evaluations(), 7);
	ck_assert_str_eq(guard_choice_name(GuardChoice::kLearned), "learned");
	// Another margin: 10%.
	GuardState wide(0.10);
	ck_assert(!wide.evaluate(0, 3, 91, 100).switched());
	ck_assert(wide.evaluate(0, 3, 89, 100).switched());
}
END_TEST

START_TEST(the_snapshot_holds_what_was_known_then)
{
	// At t = 10000 with a window of 5000: job 1 (before the window), 2 (finished, measured 120 s per
	// epoch though the policies had seen 100), 3 (running, estimated 100, truly anything), 4 (pending,
	// no estimate: its time limit of 800 s at 2 GPUs spread over 4 epochs), 5 (submitted at 10001:
	// after the evaluation, even though the host passed it).
	Job j1 = job(1, 4000, 10, 100);
	Job j2 = job(2, 6000, 10, 100);
	Job j3 = job(3, 8000, 10, 100);
	j3.state = JobState::kRunning;
	j3.epochs_done = 4;
	j3.gpus_allocated = 2;
	j3.placement = {{0, 2}};
	j3.start_time = 8500;
	j3.attained_gpu_s = 1000;
	j3.restarts = 1;
	Job j4 = job(4, 9999, 4, 0, 800);
	j4.gpus_requested = j4.gpus_min = j4.gpus_max = 2;
	Job j5 = job(5, 10001, 1, 100);
	const std::vector<GuardKnown> k = {known(j5), known(j3), known(j1), known(j2, true, 120), known(j4)};
	const std::vector<Job> s = guard_snapshot(k, 10000, 5000);
	ck_assert_uint_eq(s.size(), 3);
	ck_assert_int_eq(s[0].id, 2);
	ck_assert_int_eq(s[1].id, 3);
	ck_assert_int_eq(s[2].id, 4);
	for (const Job& j : s) {
		ck_assert(j.submit_time <= 10000);
		ck_assert(!j.running() && j.epochs_done == 0 && j.placement.empty() && j.gpus_allocated == 0);
		ck_assert(j.attained_gpu_s == 0 && j.restarts == 0 && j.start_time == -1);
	}
	ck_assert_double_eq_tol(s[0].epoch_time_1gpu, 120, kTol);  // measured once it ended
	ck_assert_double_eq_tol(s[1].epoch_time_1gpu, 100, kTol);  // the estimate, not a truth unknown then
	ck_assert_double_eq_tol(s[2].epoch_time_1gpu, 800.0 * 2 / 4, kTol);
	// The backlog at the window's start: job 1 (submitted at 4000, 6 of its 10 epochs left when the
	// window began) is replayed from 5000 with 6 epochs; a carried job with nothing left is not.
	GuardKnown c1 = known(j1);
	c1.carried = true;
	c1.epochs_left_then = 6;
	GuardKnown c0 = known(job(6, 3000, 5, 100));
	c0.carried = true;
	c0.epochs_left_then = 0;
	const std::vector<Job> with = guard_snapshot({known(j2, true, 120), c1, c0}, 10000, 5000);
	ck_assert_uint_eq(with.size(), 2);
	ck_assert_int_eq(with[0].id, 1);
	ck_assert_double_eq_tol(with[0].submit_time, 5000, kTol);
	ck_assert_double_eq_tol(with[0].epochs_total, 6, kTol);
	ck_assert_double_eq_tol(with[0].epoch_time_1gpu, 100, kTol);
	// A later evaluation sees job 5; an earlier one neither 4 nor 5.
	ck_assert_uint_eq(guard_snapshot(k, 10001, 5000).size(), 4);
	ck_assert_uint_eq(guard_snapshot(k, 9000, 5000).size(), 2);
}
END_TEST

START_TEST(settings_from_the_configuration)
{
	Config c;
	auto s = GuardSettings::from_config(c, true);
	ck_assert(s.is_ok());
	ck_assert(s->enabled);
	ck_assert_str_eq(s->policy.c_str(), "mckp");
	ck_assert_double_eq_tol(s->margin, 0.02, kTol);
	ck_assert(!GuardSettings::from_config(c, false)->enabled);  // heuristics have no guard
	ck_assert(c.set("GuardMargin", "5%", "test").is_ok());
	ck_assert_double_eq_tol(c.get_double("GuardMargin"), 0.05, kTol);
	ck_assert(!c.set("GuardMargin", "x%", "test").is_ok());
	ck_assert(!c.set("GuardMargin", "150%", "test").is_ok());
	ck_assert(c.set("LearnedGuard", "no", "test").is_ok());
	ck_assert(!GuardSettings::from_config(c, true)->enabled);
	const Status learned = c.set("GuardPolicy", "dl2", "test");
	ck_assert(!learned.is_ok());
	ck_assert_msg(learned.message().find("heuristic preset") != std::string::npos, "%s",
		      learned.message().c_str());
	Config w;
	ck_assert(w.set("GuardInterval", "7200", "test").is_ok());
	ck_assert(w.set("GuardWindow", "3600", "test").is_ok());
	const auto bad = GuardSettings::from_config(w, true);
	ck_assert(!bad.is_ok());
	ck_assert_msg(bad.status().message().find("GuardWindow=3600") != std::string::npos, "%s",
		      bad.status().message().c_str());
}
END_TEST

namespace {

// One GPU. Every 3000 s a long job (20 epochs of `epoch_s`, 100 s by default) then, 10 s later, three
// short ones (1 epoch): srtf runs the short ones first, fifo makes them wait behind the long one.
Workload workload(int rounds, Seconds epoch_s = 100)
{
	Workload w;
	JobId id = 0;
	for (int r = 0; r < rounds; ++r) {
		const Seconds t = r * 3000.0;
		w.jobs.push_back(job(++id, t, 20, epoch_s));
		for (int k = 0; k < 3; ++k)
			w.jobs.push_back(job(++id, t + 10 + k, 1, epoch_s));
	}
	for (const Job& j : w.jobs)
		w.trace_runtime_s.push_back(j.epochs_total * j.epoch_time_1gpu);
	return w;
}

struct Guarded {
	SimResult result;
	std::vector<std::pair<Seconds, std::vector<Job>>> snapshots;
};

double mean_jct(const SimResult& r)
{
	double s = 0;
	for (const JobOutcome& o : r.jobs)
		s += o.finish - o.submit;
	return s / static_cast<double>(r.jobs.size());
}

std::unique_ptr<Scheduler> preset(const PolicyRegistry& registry, const std::string& name)
{
	Config c;
	ck_assert(c.set("Policy", name, "test").is_ok());
	auto s = Scheduler::create(c, registry);
	ck_assert_msg(s.is_ok(), "%s", s.status().message().c_str());
	return std::move(s.value());
}

// `main` stands for the learned policy, `guard` for GuardPolicy=.
Guarded run(const std::string& main, const std::string& guard, Estimates estimates, bool enabled = true,
	    Seconds epoch_s = 100)
{
	const ModelCatalog models = catalog();
	const Workload w = workload(8, epoch_s);
	Node n;
	n.name = "n1";
	n.gpus_total = n.gpus_free = 1;
	n.partition = "train";
	PolicyRegistry registry;
	register_builtin_policies(registry);
	auto learned = preset(registry, main);
	auto heuristic = preset(registry, guard);
	Guarded g;
	SimOptions so;
	so.estimates = estimates;
	so.guard_scheduler = heuristic.get();
	so.guard.enabled = enabled;
	so.guard.interval = 3000;
	so.guard.window = 6000;
	so.guard.margin = 0.02;
	so.guard_observer = [&g](Seconds t, const std::vector<Job>& jobs) {
		g.snapshots.emplace_back(t, jobs);
	};
	auto res = simulate(w, models, {n}, *learned, so);
	ck_assert_msg(res.is_ok(), "%s", res.status().message().c_str());
	g.result = *res;
	return g;
}

}  // namespace

// The verdict file dlsched-guard writes reads back as written; GuardPolicy='s configuration keeps a
// learned ordering set over the preset on the learned side.
START_TEST(verdict_files_round_trip_and_go_stale)
{
	GuardVerdictFile v;
	v.choice = GuardChoice::kLearned;
	v.at = 1764240000;
	v.learned_jct = 1234.5;
	v.heuristic_jct = 1500.25;
	v.jobs = 42;
	v.switches = 3;
	auto back = parse_guard_verdict(format_guard_verdict(v), "verdict");
	ck_assert_msg(back.is_ok(), "%s", back.status().message().c_str());
	ck_assert(back->choice == GuardChoice::kLearned);
	ck_assert_double_eq_tol(back->at, v.at, kTol);
	ck_assert_double_eq_tol(back->learned_jct, 1234.5, kTol);
	ck_assert_double_eq_tol(back->heuristic_jct, 1500.25, kTol);
	ck_assert_uint_eq(back->jobs, 42);
	ck_assert_uint_eq(back->switches, 3);
	// Stale past twice the interval, or from more than a minute ahead.
	ck_assert(guard_verdict_stale(1000, 1000 + 2 * 3600, 3600).empty());
	ck_assert(!guard_verdict_stale(1000, 1001 + 2 * 3600, 3600).empty());
	ck_assert(guard_verdict_stale(1000, 1000 - kGuardVerdictSkew, 3600).empty());
	ck_assert(!guard_verdict_stale(1000, 999 - kGuardVerdictSkew, 3600).empty());
	// A negative count is not a count.
	ck_assert(!parse_guard_verdict("choice=learned\nat=5\njobs=-1\n", "v").is_ok());

	Config c;
	ck_assert(c.set("Policy", "srtf", "test").is_ok());
	ck_assert(c.set("OrderingPolicy", "dl2", "test").is_ok());
	GuardSettings g;
	g.policy = "optimus";
	auto gc = guard_policy_config(c, g);
	ck_assert(gc.is_ok());
	// Held: ck_assert_str_eq keeps the pointer past the full expression a temporary lives in.
	const std::string policy = gc->get_string("Policy"), ordering = gc->get_string("OrderingPolicy");
	ck_assert_str_eq(policy.c_str(), "optimus");
	ck_assert_str_eq(ordering.c_str(), "");
}
END_TEST

START_TEST(the_engine_follows_the_better_replay)
{
	// The "learned" policy is fifo, the guard's srtf: srtf wins every replay, fifo never decides.
	const Guarded bad = run("fifo", "srtf", Estimates::kOracle);
	ck_assert(bad.result.guard);
	ck_assert_uint_gt(bad.result.guard_log.size(), 3);
	ck_assert_int_eq(bad.result.guard_switches, 0);
	ck_assert_uint_eq(bad.result.guard_learned_cycles, 0);
	for (const GuardVerdict& v : bad.result.guard_log)
		if (v.jobs > 0)
			ck_assert_msg(v.heuristic_jct < v.learned_jct, "at %g: srtf %g, fifo %g", v.at,
				      v.heuristic_jct, v.learned_jct);
	// The other way round: srtf as the "learned" one takes over at the first evaluation with jobs.
	const Guarded good = run("srtf", "fifo", Estimates::kOracle);
	ck_assert_int_eq(good.result.guard_switches, 1);
	ck_assert_uint_gt(good.result.guard_learned_cycles, 0);
	ck_assert_uint_lt(good.result.guard_learned_cycles, good.result.cycles);  // fifo's until then
	const Guarded srtf_alone = run("srtf", "fifo", Estimates::kOracle, false);
	const Guarded fifo_alone = run("fifo", "srtf", Estimates::kOracle, false);
	ck_assert(!srtf_alone.result.guard && srtf_alone.result.guard_log.empty());
	ck_assert_uint_eq(srtf_alone.result.guard_learned_cycles, srtf_alone.result.cycles);
	ck_assert(mean_jct(good.result) < mean_jct(fifo_alone.result));
	ck_assert(mean_jct(good.result) >= mean_jct(srtf_alone.result) - kTol);
	// Guarded by srtf, fifo does as srtf does.
	ck_assert_double_eq_tol(mean_jct(bad.result), mean_jct(srtf_alone.result), kTol);
}
END_TEST

START_TEST(an_evaluation_never_reads_the_future)
{
	// Predicted estimates: the policies see the profile's 100 s epochs until a job has timed its own.
	// Make the truth 250 s for every job, so that a snapshot showing 250 for a job that has not
	// ended would have read what was not known.
	const Guarded g = run("srtf", "fifo", Estimates::kPredicted, true, 250);
	ck_assert_uint_gt(g.snapshots.size(), 3);
	const Workload w = workload(8, 250);
	std::size_t estimated = 0, measured = 0;
	for (const auto& [t, jobs] : g.snapshots) {
		// Every job submitted since the previous evaluation (3000 s) is there, no job submitted after
		// t, and each job once.
		for (const Job& j : w.jobs)
			if (j.submit_time <= t && j.submit_time > t - 3000) {
				bool in = false;
				for (const Job& r : jobs)
					in = in || r.id == j.id;
				ck_assert_msg(in, "evaluation at %g misses job %u", t,
					      static_cast<unsigned>(j.id));
			}
		for (const Job& j : jobs) {
			ck_assert_msg(w.jobs[j.id - 1].submit_time <= t,
				      "evaluation at %g replays job %u submitted at %g", t,
				      static_cast<unsigned>(j.id), w.jobs[j.id - 1].submit_time);
			ck_assert(j.submit_time >= w.jobs[j.id - 1].submit_time);
			for (const Job& r : jobs)
				ck_assert(&r == &j || r.id != j.id);
			// Its finish in the real run: before t its measured length is known, else an
			// estimate.
			Seconds finish = -1;
			for (const JobOutcome& o : g.result.jobs)
				if (o.id == j.id)
					finish = o.finish;
			if (finish >
			    t) {  // an estimate (the profile's 100 s, or its own noisy epochs), not the truth
				ck_assert_msg(j.epoch_time_1gpu != 250,
					      "job %u unfinished at %g replayed at its true length",
					      static_cast<unsigned>(j.id), t);
				++estimated;
			} else {
				ck_assert_double_eq_tol(j.epoch_time_1gpu, 250, kTol);
				++measured;
			}
		}
	}
	ck_assert_uint_gt(estimated, 0);
	ck_assert_uint_gt(measured, 0);
}
END_TEST

int main()
{
	Suite* s = suite_create("guard");
	TCase* tc = tcase_create("guard");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, switching_on_hand_built_histories);
	tcase_add_test(tc, the_snapshot_holds_what_was_known_then);
	tcase_add_test(tc, settings_from_the_configuration);
	tcase_add_test(tc, verdict_files_round_trip_and_go_stale);
	tcase_add_test(tc, the_engine_follows_the_better_replay);
	tcase_add_test(tc, an_evaluation_never_reads_the_future);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
