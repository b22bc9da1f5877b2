// The deadline policies (policy/deadline.cpp) on hand-computed cases. The world's linear model
// runs an epoch in 60 s on one GPU and scales perfectly: 10 epochs take 600 s on 1 GPU, 300 s on 2,
// 200 s on 3, 150 s on 4.
#include <check.h>

#include <cmath>

#include "check_main.h"

#include "policy/builtin_policies.h"
#include "predict/profile_reader.h"
#include "profiledb/profile_db.h"
#include "temp_path.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::test;

namespace {

Job& elastic(Job& j, int lo, int hi)
{
	j.gpus_min = lo;
	j.gpus_max = hi;
	return j;
}

std::string reason_of_impl(const World& w, const char* preset,
			   std::vector<std::pair<std::string, std::string>> keys = {})
{
	const Decisions d = make_scheduler(preset, std::move(keys))->decide(w.view());
	for (const Action& a : d.actions)
		if (a.kind == ActionKind::kAdmission)
			return a.reason;
	return "";
}

// The reason of the first admission action ("" if none), compared with `want`.
void expect_reason(const World& w, const char* want,
		   std::vector<std::pair<std::string, std::string>> keys = {})
{
	const std::string got = reason_of_impl(w, "qos-deadline", std::move(keys));
	ck_assert_msg(got == want, "reason \"%s\", want \"%s\"", got.c_str(), want);
}

}  // namespace

START_TEST(normal_quantiles)
{
	ck_assert_double_eq_tol(normal_quantile(0.5), 0, 1e-9);
	ck_assert_double_eq_tol(normal_quantile(0.9), 1.2815516, 1e-6);
	ck_assert_double_eq_tol(normal_quantile(0.975), 1.9599640, 1e-6);
	ck_assert(std::isinf(normal_quantile(1)));
}
END_TEST

// 150 s at 4 GPUs, its best, against 100 s left: infeasible. Best-effort (the default) still runs
// it, at its requested size, and says why; cancel ends it; hold holds it. The reason names the
// need, the size and what is left.
START_TEST(infeasible_at_its_largest_size)
{
	World w({4});
	elastic(w.pending(1, 0, 1), 1, 4).deadline = 100;
	expect_decisions(w, "qos-deadline", "admission 1; start 1 [0:1]");
	expect_reason(w, "deadline infeasible: needs 150 s at 4 GPUs, 100 s left; runs best-effort");
	expect_decisions(w, "qos-deadline", "admission 1; prio 1=1", {{"DeadlineInfeasible", "cancel"}});
	expect_reason(w, "deadline infeasible: needs 150 s at 4 GPUs, 100 s left; held",
		      {{"DeadlineInfeasible", "hold"}});
	// A best-effort job goes behind an admitted one that arrived later.
	w.pending(2, 5, 4, 1).deadline = 1000;  // 15 s at 4 GPUs: feasible
	expect_decisions(w, "qos-deadline", "admission 1; start 2 [0:4]; prio 1=1");
}
END_TEST

// Exactly on time at 4 GPUs (150 s, 150 s left; 3 GPUs take 200 s): it gets 4, not its requested 1.
// With a 10% spread and 90% confidence it needs 150 x 1.128 s: infeasible.
START_TEST(exactly_on_time_takes_the_size_that_meets_it)
{
	World w({4});
	elastic(w.pending(1, 0, 1), 1, 4).deadline = 150;
	expect_decisions(w, "qos-deadline", "start 1 [0:4]");
	w.jobs.back().deadline = 200;  // 3 GPUs suffice now: the fewest that meet it
	expect_decisions(w, "qos-deadline", "start 1 [0:3]");
	w.jobs.back().deadline = 150;
	w.jobs.back().runtime_cv = 0.1;
	expect_reason(w, "deadline infeasible: needs 169 s at 4 GPUs, 150 s left; runs best-effort");
	expect_reason(w, "", {{"DeadlineConfidence", "0.5"}});
}
END_TEST

// Job 1 runs on all 4 GPUs with a far deadline (1 GPU would do: 600 s of 10,000). Job 2 arrives with
// 400 s left: 2 GPUs (300 s) meet it, 1 does not. Job 1 shrinks to 2 to admit it.
START_TEST(shrinks_an_over_provisioned_job_to_admit_another)
{
	World w({4});
	elastic(w.running(1, 0, {{0, 4}}), 1, 4).deadline = 10000;
	elastic(w.pending(2, 0, 1), 1, 4).deadline = 400;
	expect_decisions(w, "qos-deadline", "resize 1 [0:2]; start 2 [0:2]");
	// Without a deadline of its own, job 1 is work that can wait: job 2's deadline cannot, and
	// takes the GPUs it needs from it (job 1 is requeued, as under srtf).
	w.jobs.front().deadline = kNoDeadline;
	expect_decisions(w, "qos-deadline", "requeue 1; start 2 [0:2]");
	// A deadline job with slack to spare (more than DeadlineUrgency= x its remaining time) waits
	// among the jobs without one by remaining time: job 1 (running, 150 s left at 4 GPUs... 600 s
	// at its requested 1) goes first as srtf would, and job 2 waits.
	w.jobs.back().deadline = 1000;  // slack 1000 - 600 = 400 > 0.1 x 600
	expect_decisions(w, "qos-deadline", "prio 2=1", {{"DeadlineUrgency", "0.1"}});
	expect_decisions(w, "qos-deadline", "requeue 1; start 2 [0:1]", {{"DeadlineUrgency", "1"}});
}
END_TEST

// Job 1 runs on 1 GPU, 600 s left, 200 s to its deadline: it grows to 3 (200 s). When a restart costs
// 50 s, 3 GPUs take 250 s and 4 take 200 s: it grows to 4.
START_TEST(grows_a_running_job_that_drifts_behind)
{
	World w({4});
	elastic(w.running(1, 0, {{0, 1}}), 1, 4).deadline = 200;
	expect_decisions(w, "qos-deadline", "resize 1 [0:3]");
	w.jobs.front().preempt_cost.checkpoint_write = 20;
	w.jobs.front().preempt_cost.resume = 30;
	// (Its run has just started: ResizePayback=0, else it first pays back a restart, test_policy.)
	expect_decisions(w, "qos-deadline", "resize 1 [0:4]", {{"ResizePayback", "0"}});
	// On time at its size: left alone.
	w.jobs.front().deadline = 600;
	expect_decisions(w, "qos-deadline", "");
}
END_TEST

// A running job that grows keeps its nodes: job 2 (more urgent: slack at its requested 1 GPU
// 250 - 600) needs 3 GPUs and would take them on node 0 where job 1 runs; job 1 (300 s left at its
// 2 GPUs, 200 to its deadline) needs 3. Job 2 goes to node 1 and job 1 grows in place, rather than
// being moved (a restart) to make room for it.
START_TEST(a_growing_job_keeps_its_nodes)
{
	World w({4, 4});
	elastic(w.running(1, 0, {{0, 2}}), 1, 4).deadline = 200;
	w.jobs.back().gpus_requested = 2;
	elastic(w.pending(2, 0, 1), 1, 4).deadline = 250;
	expect_decisions(w, "qos-deadline", "resize 1 [0:3]; start 2 [1:3]");
}
END_TEST

// Slack = deadline - now - remaining at the requested size; ties by submit time; jobs without a
// deadline after, shortest remaining time first.
START_TEST(least_slack_orders_deadlines_then_the_base)
{
	World w({4});
	w.pending(1, 0, 1, 10);                  // no deadline, 600 s
	w.pending(2, 1, 1, 1);                   // no deadline, 60 s
	w.pending(3, 2, 1, 10).deadline = 1000;  // slack 400
	w.pending(4, 3, 1, 10).deadline = 700;   // slack 100
	w.pending(5, 4, 1, 10).deadline = 1000;  // slack 400: a tie with 3, submitted later
	ClusterView v = w.view();
	std::vector<const Job*> jobs(v.pending.begin(), v.pending.end());
	LeastSlackOrdering(std::make_unique<SrtfOrdering>()).order(v, jobs);
	std::string got;
	for (const Job* j : jobs)
		got += std::to_string(j->id);
	ck_assert_str_eq(got.c_str(), "43521");
	LeastSlackOrdering(std::make_unique<FifoOrdering>()).order(v, jobs);
	got.clear();
	for (const Job* j : jobs)
		got += std::to_string(j->id);
	ck_assert_str_eq(got.c_str(), "43512");
	// lsf: the same order at requested sizes, no autoscaling: 4, 3, 5, 2 start on the 4 GPUs.
	expect_decisions(w, "lsf", "start 4 [0:1]; start 3 [0:1]; start 5 [0:1]; start 2 [0:1]; prio 1=1");
}
END_TEST

// In Slurm a deadline job's runtime comes from the profile DB: a queued job of a model the cluster
// has run is predicted from that history (its spread is the margin the admission keeps); a user's
// own epoch time is kept; a requeued job resumes from the epoch its checkpoint holds.
START_TEST(runtimes_from_the_profile_db)
{
	ModelCatalog models;
	ModelProfile p;
	p.name = "m";
	p.points = {{1, 1, 1}, {2, 1, 2}};
	const int m = models.add(p);
	const std::string path = temp_path("dlsched-deadline", "profiles.db");
	{
		auto db = db::ProfileDb::open_writer(path);
		ck_assert(db.is_ok());
		db::JobRecord r;
		r.cluster = "c", r.job_id = 7, r.model = "m", r.gpus = 1, r.epochs_total = 10;
		ck_assert(db->put_job(r).is_ok());
		// Job 7 on 1 GPU: a warm-up epoch, then 100 +- 4 s; a save at epoch 4.
		const double epoch_s[] = {130, 104, 96, 100};
		double t = 1000;
		for (int e = 1; e <= 4; ++e) {
			db::EpochRecord er;
			er.cluster = "c", er.job_id = 7, er.run = 0, er.epoch = e, er.gpus = 1;
			er.start_s = t;
			er.end_s = t += epoch_s[e - 1];
			ck_assert(db->add_epoch(er).is_ok());
		}
		db::CheckpointRecord c;
		c.cluster = "c", c.job_id = 7, c.run = 0, c.epoch = 4, c.kind = "save", c.bytes = 1000,
		c.seconds = 1, c.at_s = t + 1;
		ck_assert(db->add_checkpoint(c).is_ok());
	}
	predict::ProfileReader reader(path, "c", 60);
	Job fresh;  // a new job of the model on 2 GPUs; the host took 500 s from the model profile
	fresh.id = 9, fresh.model = m, fresh.gpus_requested = 2, fresh.epochs_total = 20,
	fresh.epoch_time_1gpu = 500;
	Job claimed = fresh;  // the same, with the user's own epoch time
	claimed.id = 10;
	Job requeued = fresh;  // job 7, requeued: pending again
	requeued.id = 7, requeued.gpus_requested = 1, requeued.epochs_total = 10, requeued.restarts = 1;
	Job other;  // a model the DB has never seen
	other.id = 11, other.model = -1, other.epoch_time_1gpu = 50;
	reader.refresh({}, models, 2000, {&fresh, &claimed, &requeued, &other});
	ck_assert_str_eq(reader.status().c_str(), "");
	reader.estimate_runtime(fresh, models, true, 0.25);
	reader.estimate_runtime(claimed, models, false, 0.25);
	reader.estimate_runtime(requeued, models, false, 0.25);
	reader.estimate_runtime(other, models, false, 0.25);
	// Job 7's steady epochs: its run's first one left out (the warm-up), and of the three left, the
	// first again (steady_epoch_time): 96 and 100, 98 s on one GPU; its warm-up, 130 - 98 = 32 s,
	// spread over the new job's 20 epochs: 98 + 1.6 per epoch.
	ck_assert_double_eq_tol(fresh.epoch_time_1gpu, 99.6, 1e-6);
	ck_assert_msg(fresh.runtime_cv > 0.01 && fresh.runtime_cv < 0.1, "cv %g", fresh.runtime_cv);
	ck_assert_double_eq_tol(claimed.epoch_time_1gpu, 500, 1e-9);
	ck_assert_double_eq_tol(claimed.runtime_cv, fresh.runtime_cv, 1e-12);
	ck_assert_double_eq_tol(requeued.epochs_done, 4, 1e-9);
	ck_assert_double_eq_tol(other.runtime_cv, 0.25, 1e-12);
	ck_assert_double_eq_tol(other.epoch_time_1gpu, 50, 1e-12);
	std::remove(path.c_str());
}
END_TEST

// Issue 27 item 8: a just-feasible deadline on a runtime nobody measured does not buy first place.
// Both 600 s at 1 GPU. Job 1's runtime is a claim (spread 25%): its deadline 793 s is just feasible
// (600 x (1 + 1.2816 x 0.25) = 792.2 s). Job 2's is measured (spread 2%), deadline 900 s. Raw
// slack 193 s against 300 s put job 1 first; at the low end of each spread, job 1 has
// 793 - 600 x (1 - 0.3204) = 385.2 s and job 2 900 - 600 x (1 - 0.0256) = 315.4 s: job 2 first.
START_TEST(an_unmeasured_just_feasible_claim_does_not_go_first)
{
	World w({1});
	Job& claim = w.pending(1, 0, 1, 10);
	claim.deadline = 793;
	claim.runtime_cv = 0.25;
	Job& measured = w.pending(2, 1, 1, 10);
	measured.deadline = 900;
	measured.runtime_cv = 0.02;
	expect_decisions(w, "lsf", "start 2 [0:1]; prio 1=1");
	// DeadlineConfidence=0.5 trusts every estimate as it is: raw slack, job 1 first.
	expect_decisions(w, "lsf", "start 1 [0:1]; prio 2=1", {{"DeadlineConfidence", "0.5"}});
}
END_TEST

// Issue 27 item 8: a job known by its time limit alone (its 600-s limit stands for its runtime) is
// not cancelled or held on that assumption while its --time-min still fits: 120 s from now, deadline
// at 300 s. It runs best-effort, and the reason says why; without a --time-min, or with one past the
// deadline (400 s), it is cancelled as before.
START_TEST(a_job_known_by_its_limit_is_judged_by_its_time_min)
{
	World w({4});
	Job& j = w.pending(1, 0, 1);
	j.deadline = 300;
	j.runtime_from_limit = true;
	j.time_min = 120;
	const std::vector<std::pair<std::string, std::string>> cancel = {{"DeadlineInfeasible", "cancel"}};
	expect_reason(w,
		      "deadline infeasible: needs 10.0 min at 1 GPU, 300 s left (its time limit; its "
		      "--time-min of 120 s still fits); runs best-effort",
		      cancel);
	expect_decisions(w, "qos-deadline", "admission 1; start 1 [0:1]", cancel);
	expect_reason(w,
		      "deadline infeasible: needs 10.0 min at 1 GPU, 300 s left (its time limit; its "
		      "--time-min of 120 s still fits); runs best-effort",
		      {{"DeadlineInfeasible", "hold"}});
	j.time_min = 400;
	expect_reason(w, "deadline infeasible: needs 10.0 min at 1 GPU, 300 s left; cancelled", cancel);
	j.time_min = 0;
	expect_reason(w, "deadline infeasible: needs 10.0 min at 1 GPU, 300 s left; cancelled", cancel);
	// A measured runtime is not a time limit: cancelled whatever its --time-min.
	j.time_min = 120;
	j.runtime_from_limit = false;
	expect_reason(w, "deadline infeasible: needs 10.0 min at 1 GPU, 300 s left; cancelled", cancel);
}
END_TEST

int main()
{
	Suite* s = suite_create("deadline");
	TCase* tc = tcase_create("deadline");
	tcase_add_test(tc, normal_quantiles);
	tcase_add_test(tc, infeasible_at_its_largest_size);
	tcase_add_test(tc, exactly_on_time_takes_the_size_that_meets_it);
	tcase_add_test(tc, shrinks_an_over_provisioned_job_to_admit_another);
	tcase_add_test(tc, grows_a_running_job_that_drifts_behind);
	tcase_add_test(tc, a_growing_job_keeps_its_nodes);
	tcase_add_test(tc, least_slack_orders_deadlines_then_the_base);
	tcase_add_test(tc, an_unmeasured_just_feasible_claim_does_not_go_first);
	tcase_add_test(tc, a_job_known_by_its_limit_is_judged_by_its_time_min);
	tcase_add_test(tc, runtimes_from_the_profile_db);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
