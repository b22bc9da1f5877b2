// Every baseline policy on small hand-computed cases. Each case says why the expected actions are
// the right ones.
#include <check.h>

#include "check_main.h"

#include <algorithm>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/partition_list.h"
#include "policy/builtin_policies.h"
#include "policy/registry.h"
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
	w.pending(2, 1, 6);                          // needs 6: at t=100, 8 free -> 2 extra
	w.pending(3, 2, 2).time_limit = 500;         // long, but 2 <= extra: may start on n1
	w.pending(4, 3, 1).time_limit = 500;         // extra used up: waits
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

// A policy that does not exploit elasticity runs an elastic job at the size it asked for: job 2 (2
// GPUs, may run on 1) does not fit on either node's 1 free GPU and waits, rather than starting on 1
// and staying there.
START_TEST(rigid_allocations_run_elastic_jobs_at_their_requested_size)
{
	World w({4, 4});
	w.running(1, 0, {{0, 3}}, 1);  // 20 s left: both keep their GPUs
	w.running(3, 0, {{1, 3}}, 1);
	Job& j = w.pending(2, 1, 2, 100);
	j.gpus_min = 1;
	j.gpus_max = 2;
	expect_decisions(w, "srtf", "prio 2=1");
}
END_TEST

// Tiresias' `shortest`: wall-clock remaining time, not GPU-time; a job that does not fit is skipped
// and the walk goes on; a newcomer as short as a running job does not displace it.
START_TEST(srtf_ranks_by_wall_clock_time_and_skips_what_does_not_fit)
{
	World w({4});
	w.pending(1, 0, 4, 10);  // 10 x 60 / 4 = 150 s (600 GPU-s)
	w.pending(2, 1, 1, 3);   // 180 s (180 GPU-s): first by GPU-time, second by wall clock
	expect_decisions(w, "srtf", "start 1 [0:4]; prio 2=1");

	World b({4});
	b.running(1, 0, {{0, 3}}, 1);  // 60 / 3 = 20 s left: keeps its 3 GPUs
	b.pending(2, 1, 2, 1);         // 30 s, but 2 GPUs do not fit in the 1 left: skipped
	b.pending(3, 2, 1, 9);         // 540 s, fits: starts
	expect_decisions(b, "srtf", "start 3 [0:1]; prio 2=1");

	World t({4});
	Job& r = t.running(1, 0, {{0, 4}}, 10);
	r.epochs_done = 5;  // 5 x 60 / 4 = 75 s left
	t.now = 300;
	t.pending(2, 300, 4, 5);  // arrives now, also 75 s: the running job keeps its GPUs
	expect_decisions(t, "srtf", "prio 2=1");
}
END_TEST

START_TEST(tiresias_demotes_past_a_threshold)
{
	World w({4});
	w.running(1, 0, {{0, 4}}).attained_gpu_s = 4000;  // past 3600 GPU-s: queue 1
	w.pending(2, 5, 4);                               // no service yet: queue 0
	expect_decisions(w, "tiresias-las", "requeue 1; start 2 [0:4]",
			 {{"TiresiasQueueThresholds", "3600"}});
	// Below the threshold both are in queue 0, where the running job goes first.
	w.jobs[0].attained_gpu_s = 100;
	expect_decisions(w, "tiresias-las", "prio 2=1", {{"TiresiasQueueThresholds", "3600"}});
}
END_TEST

// The defaults are Tiresias' own (jobs.py: queue_limit 3250, 7200 GPU-seconds; no promotion).
START_TEST(tiresias_uses_its_own_thresholds_by_default)
{
	PolicyRegistry r;
	register_builtin_policies(r);
	auto made = r.make_ordering("tiresias-las", Config());
	ck_assert(made.is_ok());
	const auto* t = dynamic_cast<const TiresiasOrdering*>(made.value().get());
	ck_assert(t != nullptr);
	World w({8});
	w.now = 1e6;
	Job& j = w.pending(1, 0, 8);
	j.last_stop_time = 1000;  // stopped long ago: promoted if the default promoted at all
	j.last_run_s = 10;
	j.executed_s = 10;
	const struct {
		double service;
		int queue;
	} cases[] = {{0, 0}, {3249, 0}, {3250, 1}, {7199, 1}, {7200, 2}, {1e9, 2}};
	for (const auto& c : cases) {
		j.attained_gpu_s = c.service;
		ck_assert_int_eq(t->queue_of(w.view(), j), c.queue);
	}
}
END_TEST

// Tiresias' list order inside a queue: running jobs first, by when they joined its running set; then
// the waiting line: jobs preempted after running in it, most recent first; then jobs that entered it
// and have not run in it since, by when they entered. Submit times (= ids) would say 1, 2, ... 8.
START_TEST(tiresias_orders_a_queue_as_tiresias_lists_do)
{
	TiresiasOrdering t({3250, 7200}, 0);
	World w({64});
	w.now = 1000;
	auto stopped = [&](JobId id, int gpus, double service, Seconds stop, Seconds run) -> Job& {
		Job& j = w.pending(id, static_cast<Seconds>(id), gpus);
		j.attained_gpu_s = service;
		j.last_stop_time = stop;
		j.last_run_s = run;
		return j;
	};
	// 1: ran 400-500 on 4 GPUs, reaching 3250 just as the cycle at 500 preempted it: entered queue 1
	//    at 500 without running in it.
	stopped(1, 4, 3250, 500, 100);
	// 2: the same at 300 (1 GPU: 3150 before its 100 s run).
	stopped(2, 1, 3250, 300, 100);
	// 3: ran 400-600 on 4 GPUs (2650 -> 3450): crossed 3250 at 550, ran in queue 1, preempted at 600.
	stopped(3, 4, 3450, 600, 200);
	// 4: ran 600-700 wholly in queue 1 (3600 -> 4000), preempted at 700.
	stopped(4, 4, 4000, 700, 100);
	// 5: running in queue 1 since 800 (4200 at its start, + 4 x 200).
	Job& five = w.running(5, 5, {{0, 4}});
	five.start_time = 800;
	five.attained_gpu_s = 5000;
	five.last_stop_time = 750;
	five.last_run_s = 50;
	// 6: running since 700 from 2450, crossed 3250 at 700 + 800 / 4 = 900: in queue 1's running set
	//    since 900.
	Job& six = w.running(6, 6, {{0, 4}});
	six.start_time = 700;
	six.attained_gpu_s = 2450 + 4 * 300;
	// 7: arrived at 950, no service: queue 0, first of all.
	w.pending(7, 950, 4);
	// 8: running in queue 2.
	w.running(8, 8, {{0, 4}}).attained_gpu_s = 8000;
	ClusterView v = w.view();
	std::vector<const Job*> jobs(v.pending.begin(), v.pending.end());
	jobs.insert(jobs.end(), v.running.begin(), v.running.end());
	t.order(v, jobs);
	std::string got;
	for (const Job* j : jobs)
		got += std::to_string(j->id);
	ck_assert_str_eq(got.c_str(), "75643218");
}
END_TEST

// A job demoted by this very cycle goes to the end of its new queue, behind that queue's waiting
// jobs, even while it runs; one cycle later it is in the queue's running set, which waiting jobs of
// the same queue never preempt. The cycle is where next_change() said the crossing would be.
START_TEST(tiresias_puts_a_job_just_demoted_behind_its_new_queue)
{
	World w({4});
	Job& r = w.running(1, 0, {{0, 4}});
	Job& p = w.pending(2, 0, 4);  // queue 1: ran 0-100 wholly there, preempted at 100
	p.attained_gpu_s = 4000;
	p.last_stop_time = 100;
	p.last_run_s = 100;
	r.start_time = 200;
	r.attained_gpu_s = 0;
	w.now = 200;
	TiresiasOrdering t({3250, 7200}, 0);
	ck_assert(t.next_change(w.view()) == 200 + 3250.0 / 4);  // 1012.5
	w.now = 1012.5;
	r.attained_gpu_s = 3250;
	expect_decisions(w, "tiresias-las", "requeue 1; start 2 [0:4]");
	w.now = 1020;
	r.attained_gpu_s = 3280;
	expect_decisions(w, "tiresias-las", "prio 2=1");
	// And its next crossing is at 7200 GPU-s: 1012.5 + 3950 / 4.
	ck_assert(t.next_change(w.view()) == 1012.5 + 3950.0 / 4);
}
END_TEST

// TiresiasStarveFactor = K: a job below the top queue that has waited since its last preemption K x
// its executed time goes to the top queue and counts its service afresh from then.
START_TEST(tiresias_promotes_a_starving_job)
{
	TiresiasOrdering t({3250, 7200}, 2.0);
	World w({8});
	w.now = 2000;
	Job& old = w.pending(1, 0, 8);
	old.attained_gpu_s = 8000;  // queue 2 by service
	old.executed_s = 1000;
	old.last_stop_time = 500;  // promoted at 500 + 2 x 1000 = 2500
	old.last_run_s = 100;
	ck_assert_int_eq(t.queue_of(w.view(), old), 2);
	ck_assert(t.next_change(w.view()) == 2500);
	w.now = 2500;
	ck_assert_int_eq(t.queue_of(w.view(), old), 0);
	// Running since 2600, after its promotion: 8 x 100 = 800 GPU-s afresh, queue 0.
	old.state = JobState::kRunning;
	old.gpus_allocated = 8;
	old.placement = {{0, 8}};
	old.start_time = 2600;
	old.attained_gpu_s = 8800;
	old.executed_s = 1100;
	w.now = 2700;
	ck_assert_int_eq(t.queue_of(w.view(), old), 0);
	ck_assert(t.next_change(w.view()) == 2600 + 3250.0 / 8);
	// Started at 2400, before it was due: not promoted, its whole service counts.
	old.start_time = 2400;
	old.attained_gpu_s = 8000 + 8 * 300;
	old.executed_s = 1300;
	ck_assert_int_eq(t.queue_of(w.view(), old), 2);
	// K = 0 never promotes.
	TiresiasOrdering off({3250, 7200}, 0);
	old.state = JobState::kPending;
	old.attained_gpu_s = 8000;
	old.executed_s = 1000;
	w.now = 1e6;
	ck_assert_int_eq(off.queue_of(w.view(), old), 2);
}
END_TEST

START_TEST(drf_serves_the_user_with_the_lowest_share)
{
	World w({4});
	w.running(1, 0, {{0, 2}});        // alice holds 2 of 4 GPUs
	w.pending(2, 1, 2);               // alice again
	w.pending(3, 2, 2).user = "bob";  // bob holds nothing: his job goes first
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

// ResizePayback= (default 2): job 1 (elastic 1 to 2 GPUs, linear scaling: 2 GPUs halve its 600 s)
// has just started on 1 GPU; 3 are free. A restart loses it a 10 s checkpoint write + 20 s resume
// = 30 s, so its run must last 2 x 30 = 60 s before it is resized. At 10 s: nothing (without the
// rule, optimus and aryl grow it at once: the flip-flop of a job started small and grown the next
// cycle); at 60 s: grown to 2 on its own node. ResizePayback=0 resizes at once, as before.
START_TEST(a_running_job_is_not_resized_before_its_run_pays_back_the_restart)
{
	for (const char* preset : {"optimus", "aryl"}) {
		World w({4});
		Job& j = w.running(1, 0, {{0, 1}});
		j.gpus_max = 2;
		j.preempt_cost.checkpoint_write = 10;
		j.preempt_cost.resume = 20;
		w.now = 10;
		expect_decisions(w, preset, "");
		expect_decisions(w, preset, "resize 1 [0:2]", {{"ResizePayback", "0"}});
		w.now = 59.9;
		expect_decisions(w, preset, "");
		w.now = 60;
		expect_decisions(w, preset, "resize 1 [0:2]");
	}
}
END_TEST

// The rule holds back resizes only: a job the order preempts is requeued however young its run
// (srtf: the short job needs all 4 GPUs, job 1 started 5 s ago and a restart loses it 30 s).
START_TEST(a_young_run_is_still_preempted_by_the_order)
{
	World w({4});
	Job& j = w.running(1, 0, {{0, 4}}, 100);
	j.gpus_min = 1;
	j.preempt_cost.checkpoint_write = 10;
	j.preempt_cost.resume = 20;
	w.pending(2, 5, 4, 1);
	w.now = 5;
	expect_decisions(w, "srtf", "requeue 1; start 2 [0:4]");
}
END_TEST

START_TEST(edf_runs_the_earliest_deadline_first)
{
	World w({4});
	w.pending(1, 0, 4);  // no deadline: after every job that has one
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
		Job& j = world.pending(id, static_cast<double>(id % 7), 1 + static_cast<int>(id % 4),
				       1 + id % 9);
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
		ck_assert_msg(a == f, "%s depends on the order jobs were added: %s vs %s", p, a.c_str(),
			      f.c_str());
		ck_assert_msg(a.find("start") != std::string::npos, "%s started nothing on an empty cluster",
			      p);
	}
}
END_TEST

START_TEST(srtf_counts_each_partition_s_own_gpus)
{
	// n0 (partition a) is idle; n1 (partition b) runs a long job of b. A short job of b arrives:
	// srtf must requeue the long one, although the cluster as a whole has 4 free GPUs (n0's are
	// not b's). Counting them as room once kept both jobs in the plan, and the short one waited.
	World w({4, 4});
	w.nodes[0].partition = "a";
	w.nodes[1].partition = "b";
	Job& lng = w.running(1, 0, {{1, 4}}, 100);
	lng.partition = "b";
	Job& sh = w.pending(2, 5, 4, 1);
	sh.partition = "b";
	expect_decisions(w, "srtf", "requeue 1; start 2 [1:4]");
}
END_TEST

// Partition lists as the glue writes them ("a,b"): whole names, in any position, empty names none.
START_TEST(partition_lists_overlap_by_whole_names)
{
	struct {
		const char *a, *b;
		bool overlap;
	} cases[] = {
		{"a", "a", true},  {"a,b", "b", true},  {"b", "a,b", true}, {"x,b,y", "z,b", true},
		{"a", "b", false}, {"ab", "a", false},  {"a", "ab", false}, {"a,b", "c,d", false},
		{"", "", false},   {"a,,b", "", false}, {",", ",", false},  {"a,", "a", true},
	};
	for (const auto& c : cases)
		ck_assert_msg(partitions_overlap(c.a, c.b) == c.overlap,
			      "partitions_overlap(\"%s\", \"%s\") != %d", c.a, c.b, c.overlap);
	ck_assert(first_partition("a,b") == "a");
	ck_assert(first_partition("a") == "a");
	ck_assert(first_partition("") == "");
}
END_TEST

START_TEST(a_job_of_several_partitions_uses_any_of_them)
{
	// sbatch -p a,b: n0 (partition a) is full, n1 (b) is free; the job starts on n1. A node in
	// both partitions ("a,b") serves a job of b alone. Before, only the job's first partition
	// counted, and a node only in its first.
	World w({4, 4, 4});
	w.nodes[0].partition = "a";
	w.nodes[1].partition = "b";
	w.nodes[2].partition = "c,b";
	Job& full = w.running(1, 0, {{0, 4}}, 100);
	full.partition = "a";
	Job& both = w.pending(2, 5, 4, 1);
	both.partition = "a,b";
	Job& of_b = w.pending(3, 6, 4, 1);
	of_b.partition = "b";
	expect_decisions(w, "fifo", "start 2 [1:4]; start 3 [2:4]");
}
END_TEST

// ModelFallback= accepts exactly the heuristic orderings (config/keys.cpp lists them, so that a
// learned one is refused when dlsched.conf is read): every ordering the core registers, none more.
START_TEST(model_fallback_words_are_the_builtin_orderings)
{
	PolicyRegistry r;
	register_builtin_policies(r);
	std::vector<std::string> registered;
	for (const PolicyRegistry::Entry& e : r.list("ordering"))
		registered.push_back(e.name);
	std::sort(registered.begin(), registered.end());
	const ConfigKey* k = find_config_key("ModelFallback");
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(k->words);
	std::vector<std::string> words;
	std::string w = k->words;
	for (std::size_t start = 0;;) {
		const std::size_t bar = w.find('|', start);
		words.push_back(w.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
		if (bar == std::string::npos)
			break;
		start = bar + 1;
	}
	std::sort(words.begin(), words.end());
	std::string a, b;
	for (const std::string& n : registered)
		a += n + " ";
	for (const std::string& n : words)
		b += n + " ";
	ck_assert_msg(a == b, "registered orderings: %s; ModelFallback's words: %s", a.c_str(), b.c_str());
	ck_assert(k->default_value == std::string("tiresias-las"));
}
END_TEST

int main()
{
	Suite* s = suite_create("policy");
	TCase* tc = tcase_create("baselines");
	tcase_add_test(tc, fifo_blocks_at_the_head_of_the_line);
	tcase_add_test(tc, rigid_allocations_run_elastic_jobs_at_their_requested_size);
	tcase_add_test(tc, backfill_starts_short_jobs_that_do_not_delay_the_reservation);
	tcase_add_test(tc, backfill_uses_gpus_the_reservation_does_not_need);
	tcase_add_test(tc, srtf_preempts_a_long_job_for_a_short_one);
	tcase_add_test(tc, srtf_ranks_by_wall_clock_time_and_skips_what_does_not_fit);
	tcase_add_test(tc, tiresias_demotes_past_a_threshold);
	tcase_add_test(tc, tiresias_uses_its_own_thresholds_by_default);
	tcase_add_test(tc, tiresias_orders_a_queue_as_tiresias_lists_do);
	tcase_add_test(tc, tiresias_puts_a_job_just_demoted_behind_its_new_queue);
	tcase_add_test(tc, tiresias_promotes_a_starving_job);
	tcase_add_test(tc, drf_serves_the_user_with_the_lowest_share);
	tcase_add_test(tc, drf_fills_elastic_jobs_evenly);
	tcase_add_test(tc, optimus_gives_gpus_to_the_job_that_gains_most);
	tcase_add_test(tc, a_running_job_is_not_resized_before_its_run_pays_back_the_restart);
	tcase_add_test(tc, a_young_run_is_still_preempted_by_the_order);
	tcase_add_test(tc, edf_runs_the_earliest_deadline_first);
	tcase_add_test(tc, pack_best_fits_and_never_fragments_a_one_node_job);
	tcase_add_test(tc, pack_waits_rather_than_spread_a_job_that_fits_one_node);
	tcase_add_test(tc, count_places_a_job_wherever_enough_gpus_are_free);
	tcase_add_test(tc, decisions_are_deterministic);
	tcase_add_test(tc, srtf_counts_each_partition_s_own_gpus);
	tcase_add_test(tc, partition_lists_overlap_by_whole_names);
	tcase_add_test(tc, a_job_of_several_partitions_uses_any_of_them);
	tcase_add_test(tc, model_fallback_words_are_the_builtin_orderings);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
