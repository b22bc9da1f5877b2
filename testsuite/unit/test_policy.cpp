// Every baseline policy on small hand-computed cases. Each case says why the expected actions are
// the right ones.
#include <check.h>

#include "check_main.h"

#include "policy/builtin_policies.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::test;

START_TEST(fifo_blocks_at_the_head_of_the_line)
{
	World w({4, 4});
	w.pending(1, 0, 4);
	w.pending(2, 1, 8);  // fits nowhere now: fifo stops here
	w.pending(3, 2, 1);  // would fit on n1, but fifo does not look past job 2
	// Job 1 best-fits on n0 (both nodes equal: lowest index).
	expect_decisions(w, "fifo", "start 1 [0:4]; prio 2=2; prio 3=1");
}
END_TEST

START_TEST(backfill_starts_short_jobs_that_do_not_delay_the_reservation)
{
	World w({4, 4});
	w.pending(1, 0, 4).time_limit = 100;
	w.pending(2, 1, 8);                   // blocked: reserved at t=100 when job 1 ends (8 GPUs, extra 0)
	w.pending(3, 2, 1).time_limit = 50;   // ends at 50 <= 100: backfilled on n1
	w.pending(4, 3, 1).time_limit = 500;  // ends after 100 and no extra GPUs: would delay job 2
	expect_decisions(w, "slurm-backfill", "start 1 [0:4]; start 3 [1:1]; prio 2=2; prio 4=1");
}
END_TEST

START_TEST(backfill_uses_gpus_the_reservation_does_not_need)
{
	World w({4, 4});
	w.running(1, 0, {{0, 4}}).time_limit = 100;  // ends at 100
	w.pending(2, 1, 6);                           // needs 6: at t=100, 8 free -> 2 extra
	w.pending(3, 2, 2).time_limit = 500;          // long, but 2 <= extra: may start on n1
	w.pending(4, 3, 1).time_limit = 500;          // extra used up: waits
	expect_decisions(w, "slurm-backfill", "start 3 [1:2]; prio 2=2; prio 4=1");
}
END_TEST

START_TEST(srtf_preempts_a_long_job_for_a_short_one)
{
	World w({4});
	w.running(1, 0, {{0, 4}}, 100);  // 100 x 60 s / 4 GPUs = 1500 s left
	w.pending(2, 5, 4, 1);           // 60 s / 4 = 15 s
	expect_decisions(w, "srtf", "requeue 1; start 2 [0:4]");
}
END_TEST

START_TEST(tiresias_demotes_past_a_threshold)
{
	World w({4});
	w.running(1, 0, {{0, 4}}).attained_gpu_s = 4000;  // past 3600 GPU-s: queue 1
	w.pending(2, 5, 4);                              // no service yet: queue 0
	expect_decisions(w, "tiresias-las", "requeue 1; start 2 [0:4]", {{"TiresiasQueueThresholds", "3600"}});
	// Below the threshold the running job keeps its place (FIFO inside queue 0).
	w.jobs[0].attained_gpu_s = 100;
	expect_decisions(w, "tiresias-las", "prio 2=1", {{"TiresiasQueueThresholds", "3600"}});
}
END_TEST

START_TEST(tiresias_promotes_a_starving_job)
{
	TiresiasOrdering t({3600}, 2.0);
	World w({4});
	w.now = 1000;
	Job& old = w.pending(1, 0, 4);
	old.attained_gpu_s = 8000;  // queue 1 by service
	old.last_stop_time = 500;
	old.last_run_s = 300;  // waited 500 s since it stopped, < 2 x 300: not starving
	ClusterView v = w.view();
	ck_assert_int_eq(t.queue_of(v, old), 1);
	old.last_run_s = 200;  // 500 > 2 x 200: starving, promoted
	ck_assert_int_eq(t.queue_of(v, old), 0);
	// Once running after a promotion, its service counts afresh from that start.
	old.state = JobState::kRunning;
	old.gpus_allocated = 4;
	old.start_time = 950;  // started 450 s after its stop (> 400): it was promoted; 4 x 50 = 200 GPU-s
	ck_assert_int_eq(t.queue_of(v, old), 0);
	old.start_time = 800;  // started 300 s after its stop (< 400): not promoted, full service counts
	ck_assert_int_eq(t.queue_of(v, old), 1);
}
END_TEST

START_TEST(drf_serves_the_user_with_the_lowest_share)
{
	World w({4});
	w.running(1, 0, {{0, 2}});                 // alice holds 2 of 4 GPUs
	w.pending(2, 1, 2);                        // alice again
	w.pending(3, 2, 2).user = "bob";           // bob holds nothing: his job goes first
	// Progressive filling: alice's running job (2), then bob's (2); alice's second job finds nothing.
	expect_decisions(w, "drf", "start 3 [0:2]; prio 2=1");
}
END_TEST

START_TEST(drf_fills_elastic_jobs_evenly)
{
	World w({4});
	Job& a = w.pending(1, 0, 1);
	a.gpus_max = 4;
	Job& b = w.pending(2, 1, 1);
	b.user = "bob";
	b.gpus_max = 4;
	// Minimums 1 + 1, then one GPU at a time to the lower share: 2 each.
	expect_decisions(w, "drf", "start 1 [0:2]; start 2 [0:2]");
}
END_TEST

START_TEST(optimus_gives_gpus_to_the_job_that_gains_most)
{
	World w({4});
	Job& l = w.pending(1, 0, 1);  // linear scaling: 600 s at 1 GPU, 300 at 2, 200 at 3
	l.gpus_max = 4;
	Job& f = w.pending(2, 1, 1);  // flat scaling: 600 s at 1 GPU, 500 at 2
	f.model = w.flat;
	f.gpus_max = 4;
	// After the minimums (1 + 1), gains: linear 300 vs flat 100 -> linear gets a second GPU; then
	// linear's 2->3 gain is 300-200 = 100 and flat's 1->2 is 600-500 = 100: a tie, which goes to the
	// job ranked first (linear), even though 600/1.2 is not exactly 500 in floating point. So 3 + 1.
	expect_decisions(w, "optimus", "start 1 [0:3]; start 2 [0:1]");
}
END_TEST

START_TEST(edf_runs_the_earliest_deadline_first)
{
	World w({4});
	w.pending(1, 0, 4);                   // no deadline: after every job that has one
	w.pending(2, 1, 4).deadline = 5000;
	expect_decisions(w, "edf", "start 2 [0:4]; prio 1=1");
}
END_TEST

START_TEST(pack_best_fits_and_never_fragments_a_one_node_job)
{
	World w({4, 4, 4});
	w.running(10, 0, {{1, 2}});
	w.running(11, 0, {{2, 1}});
	// Free: n0 4, n1 2, n2 3. A 3-GPU job best-fits on n2; a 2-GPU one on n1.
	w.pending(1, 1, 3);
	expect_decisions(w, "fifo", "start 1 [2:3]");
	w.jobs.back().gpus_requested = w.jobs.back().gpus_min = w.jobs.back().gpus_max = 2;
	expect_decisions(w, "fifo", "start 1 [1:2]");
	// With spread, one GPU at a time to the node with most free (ties: lowest index).
	w.jobs.back().gpus_requested = w.jobs.back().gpus_min = w.jobs.back().gpus_max = 3;
	expect_decisions(w, "fifo", "start 1 [0:2,2:1]", {{"PlacementPolicy", "spread"}});
}
END_TEST

START_TEST(pack_waits_rather_than_spread_a_job_that_fits_one_node)
{
	World w({4, 4});
	w.running(10, 0, {{0, 2}});
	w.running(11, 0, {{1, 2}});
	w.pending(1, 1, 4);  // 4 GPUs free in all, but no node has 4
	expect_decisions(w, "fifo", "prio 1=1");
	// A job bigger than any node takes the freest nodes first.
	World big({8, 8, 8});
	big.running(10, 0, {{0, 6}});
	big.pending(1, 1, 12);
	expect_decisions(big, "fifo", "start 1 [1:8,2:4]");
}
END_TEST

START_TEST(count_places_a_job_wherever_enough_gpus_are_free)
{
	World w({4, 4});
	w.running(10, 0, {{0, 2}});
	w.running(11, 0, {{1, 2}});
	w.pending(1, 1, 4);  // 4 GPUs free in all, no node has 4: pack waits, count splits it 2 + 2
	expect_decisions(w, "fifo", "start 1 [0:2,1:2]", {{"PlacementPolicy", "count"}});
	// One node when one has enough: best fit, as pack (n1 has 3 free, n0 4).
	World b({4, 4, 4});
	b.running(10, 0, {{1, 1}});
	b.running(11, 0, {{2, 2}});
	b.pending(1, 1, 2);
	expect_decisions(b, "fifo", "start 1 [2:2]", {{"PlacementPolicy", "count"}});
	// Otherwise the freest nodes first: 6 GPUs from n0 (4) and n1 (3).
	b.jobs.back().gpus_requested = b.jobs.back().gpus_min = b.jobs.back().gpus_max = 6;
	expect_decisions(b, "fifo", "start 1 [0:4,1:2]", {{"PlacementPolicy", "count"}});
	// More than the eligible free GPUs (9): it waits.
	b.jobs.back().gpus_requested = b.jobs.back().gpus_min = b.jobs.back().gpus_max = 10;
	expect_decisions(b, "fifo", "prio 1=1", {{"PlacementPolicy", "count"}});
}
END_TEST

START_TEST(decisions_are_deterministic)
{
	// The same jobs, added in opposite orders (equal submit times are frequent: id % 7).
	World w({8, 8, 8, 8}), reversed({8, 8, 8, 8});
	auto add = [](World& world, JobId id) {
		Job& j = world.pending(id, static_cast<double>(id % 7), 1 + static_cast<int>(id % 4), 1 + id % 9);
		j.user = id % 3 ? "alice" : "bob";
		j.attained_gpu_s = 1000.0 * (id % 5);
	};
	for (JobId id = 1; id <= 40; ++id) {
		add(w, id);
		add(reversed, 41 - id);
	}
	for (const char* p : {"fifo", "slurm-backfill", "srtf", "tiresias-las", "drf", "optimus", "edf"}) {
		Config c;
		ck_assert(c.set("Policy", p, "test").is_ok());
		PolicyRegistry r;
		register_builtin_policies(r);
		auto s = Scheduler::create(c, r);
		ck_assert(s.is_ok());
		const std::string a = render((*s)->decide(w.view()));
		const std::string b = render((*s)->decide(w.view()));
		ck_assert_msg(a == b, "%s is not deterministic", p);
		// A fresh scheduler on the jobs built in the other order decides the same.
		auto fresh = Scheduler::create(c, r);
		ck_assert(fresh.is_ok());
		const std::string f = render((*fresh)->decide(reversed.view()));
		ck_assert_msg(a == f, "%s depends on the order jobs were added: %s vs %s", p, a.c_str(), f.c_str());
		ck_assert_msg(a.find("start") != std::string::npos, "%s started nothing on an empty cluster", p);
	}
}
END_TEST

int main()
{
	Suite* s = suite_create("policy");
	TCase* tc = tcase_create("baselines");
	tcase_add_test(tc, fifo_blocks_at_the_head_of_the_line);
	tcase_add_test(tc, backfill_starts_short_jobs_that_do_not_delay_the_reservation);
	tcase_add_test(tc, backfill_uses_gpus_the_reservation_does_not_need);
	tcase_add_test(tc, srtf_preempts_a_long_job_for_a_short_one);
	tcase_add_test(tc, tiresias_demotes_past_a_threshold);
	tcase_add_test(tc, tiresias_promotes_a_starving_job);
	tcase_add_test(tc, drf_serves_the_user_with_the_lowest_share);
	tcase_add_test(tc, drf_fills_elastic_jobs_evenly);
	tcase_add_test(tc, optimus_gives_gpus_to_the_job_that_gains_most);
	tcase_add_test(tc, edf_runs_the_earliest_deadline_first);
	tcase_add_test(tc, pack_best_fits_and_never_fragments_a_one_node_job);
	tcase_add_test(tc, pack_waits_rather_than_spread_a_job_that_fits_one_node);
	tcase_add_test(tc, count_places_a_job_wherever_enough_gpus_are_free);
	tcase_add_test(tc, decisions_are_deterministic);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
