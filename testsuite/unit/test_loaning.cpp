// Capacity loaning and elastic allocation (Aryl/Lyra): the multiple-choice knapsack on hand-solved
// instances and against brute force, `mckp`'s allocation, and `aryl`'s loans, reclaim order and
// cost updates.
#include <check.h>

#include "check_main.h"

#include <functional>

#include "policy/builtin_policies.h"
#include "policy/mckp.h"
#include "util/random.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::test;

START_TEST(mckp_solves_hand_instances)
{
	// Three classes, 3 units: class 0 +1 (5) and class 1 +2 (8) = 13 beats 0:+2 1:+1 (6 + 4 = 10)
	// and anything with class 2 (worth 1 for its unit).
	MckpSolution s = solve_mckp({{0, 5, 6}, {0, 4, 8}, {0, 1}}, 3);
	ck_assert_double_eq_tol(s.value, 13, 1e-9);
	ck_assert_int_eq(s.choice[0], 1);
	ck_assert_int_eq(s.choice[1], 2);
	ck_assert_int_eq(s.choice[2], 0);
	// Option 0 may be worth less than nothing (a running job shrunk: a restart): keeping class 0 at
	// its unit (0) and class 1 without (0) beats giving the unit to class 1 (-3 + 2).
	s = solve_mckp({{-3, 0}, {0, 2}}, 1);
	ck_assert_double_eq_tol(s.value, 0, 1e-9);
	ck_assert_int_eq(s.choice[0], 1);
	ck_assert_int_eq(s.choice[1], 0);
	// Equal totals: the earlier class (more urgent in the ordering) gets the unit.
	s = solve_mckp({{0, 1}, {0, 1}}, 1);
	ck_assert_int_eq(s.choice[0], 1);
	ck_assert_int_eq(s.choice[1], 0);
	// No capacity: option 0 everywhere; no classes: nothing.
	s = solve_mckp({{0, 9}, {0, 9}}, 0);
	ck_assert_int_eq(s.choice[0] + s.choice[1], 0);
	ck_assert_int_eq(static_cast<int>(solve_mckp({}, 5).choice.size()), 0);
}
END_TEST

START_TEST(mckp_matches_brute_force)
{
	Rng rng(7);
	for (int round = 0; round < 300; ++round) {
		const int k = 1 + static_cast<int>(rng.uniform() * 5);
		std::vector<std::vector<double>> v(static_cast<std::size_t>(k));
		for (auto& cls : v) {
			const int opts = 1 + static_cast<int>(rng.uniform() * 4);
			for (int e = 0; e < opts; ++e)
				cls.push_back(std::round(rng.uniform() * 15 - 5));
		}
		const int cap = static_cast<int>(rng.uniform() * 9);
		double best = -1e18;
		std::vector<int> pick(static_cast<std::size_t>(k), 0);
		std::function<void(int, int, double)> walk = [&](int i, int used, double sum) {
			if (i == k) {
				best = std::max(best, sum);
				return;
			}
			for (std::size_t e = 0; e < v[static_cast<std::size_t>(i)].size(); ++e)
				if (used + static_cast<int>(e) <= cap)
					walk(i + 1, used + static_cast<int>(e),
					     sum + v[static_cast<std::size_t>(i)][e]);
		};
		walk(0, 0, 0);
		const MckpSolution s = solve_mckp(v, cap);
		ck_assert_msg(std::abs(s.value - best) < 1e-9, "round %d: dp %g, brute force %g", round,
			      s.value, best);
		// The choices are feasible and worth what the solver says.
		int used = 0;
		double sum = 0;
		for (int i = 0; i < k; ++i) {
			ck_assert_int_lt(s.choice[static_cast<std::size_t>(i)],
					 static_cast<int>(v[static_cast<std::size_t>(i)].size()));
			used += s.choice[static_cast<std::size_t>(i)];
			sum += v[static_cast<std::size_t>(i)]
				[static_cast<std::size_t>(s.choice[static_cast<std::size_t>(i)])];
		}
		ck_assert_int_le(used, cap);
		ck_assert_msg(std::abs(sum - best) < 1e-9, "round %d: choices worth %g, best %g", round, sum,
			      best);
	}
}
END_TEST

// A job of World's models with an elastic range.
Job& elastic(World& w, JobId id, Seconds submit, int requested, int max, int model, double epochs = 10)
{
	Job& j = w.pending(id, submit, requested, epochs);
	j.gpus_min = 1;
	j.gpus_max = max;
	j.model = model;
	return j;
}

const Action* find(const Decisions& d, ActionKind kind, JobId job)
{
	for (const Action& a : d.actions)
		if (a.kind == kind && a.job == job)
			return &a;
	return nullptr;
}

Decisions decide(const World& w, const std::string& preset)
{
	return make_scheduler(preset)->decide(w.view());
}

START_TEST(mckp_gives_spare_gpus_where_they_shorten_jobs_most)
{
	// 8 GPUs on one node. Phase 1: each job at its requested 2 GPUs (6 in all). Phase 2: 2 spare GPUs.
	// Job 2 scales linearly (600 s at 2 GPUs -> 300 s at 4: 300 s saved), job 3 hardly (flat model:
	// 1.2 -> 1.3, 600/1.2 - 600/1.3 = 38 s for both spare GPUs): job 2 gets both. Job 1 is rigid.
	World w({8});
	w.pending(1, 0, 2);
	elastic(w, 2, 1, 2, 6, w.linear);
	elastic(w, 3, 2, 2, 4, w.flat);
	const Decisions d = decide(w, "mckp");
	const Action* a1 = find(d, ActionKind::kStart, 1);
	const Action* a2 = find(d, ActionKind::kStart, 2);
	const Action* a3 = find(d, ActionKind::kStart, 3);
	ck_assert(a1 && a2 && a3);
	ck_assert_int_eq(a1->gpus, 2);
	ck_assert_int_eq(a2->gpus, 4);
	ck_assert_int_eq(a3->gpus, 2);
}
END_TEST

START_TEST(mckp_counts_the_resize_cost_of_running_jobs)
{
	// Job 1 runs elastic at 2 GPUs of 4 with 2 free. Growing it to 4 saves 300 s of its 600 s at
	// 2 GPUs (linear) but restarts it. With a 100 s restart it grows; with 400 s it stays. (Its run
	// has just started: ResizePayback=0, else it first pays back a restart, test_policy.)
	for (double cost : {100.0, 400.0}) {
		World w({4});
		Job& j = w.running(1, 0, {{0, 2}});
		j.gpus_min = 1;
		j.gpus_max = 4;
		j.epochs_total = 20;  // 20 x 60 s / 2 GPUs = 600 s left
		j.preempt_cost.resume = cost;
		const Decisions d = make_scheduler("mckp", {{"ResizePayback", "0"}})->decide(w.view());
		const Action* r = find(d, ActionKind::kResize, 1);
		if (cost < 300) {
			ck_assert_msg(r && r->gpus == 4, "cost %g: expected a resize to 4", cost);
		} else {
			ck_assert_msg(!r, "cost %g: expected no resize", cost);
		}
	}
}
END_TEST

// Nodes 0-1: training (8 GPUs); nodes 2-4: loanable inference (8 GPUs).
World loan_world()
{
	World w({8, 8, 8, 8, 8});
	for (NodeIndex i = 2; i < 5; ++i) {
		w.nodes[i].kind = PartitionKind::kInference;
		w.nodes[i].loanable = true;
		w.nodes[i].partition = "infer";
	}
	return w;
}

int count(const Decisions& d, ActionKind kind)
{
	int n = 0;
	for (const Action& a : d.actions)
		n += a.kind == kind;
	return n;
}

START_TEST(aryl_lends_what_inference_does_not_need)
{
	World w = loan_world();
	ClusterView v = w.view();
	// Demand 0.4 of 3 nodes: inference needs ceil(1.2) = 2, so 1 node is lent (the first idle one).
	auto s = make_scheduler("aryl");
	v.inference_demand = 0.4;
	Decisions d = s->decide(v);
	ck_assert_int_eq(count(d, ActionKind::kLoan), 1);
	ck_assert_int_eq(static_cast<int>(d.actions.front().node), 2);
	// LoanHeadroom=1: one more kept back, nothing lent.
	ck_assert_int_eq(count(make_scheduler("aryl", {{"LoanHeadroom", "1"}})->decide(v), ActionKind::kLoan),
			 0);
	// Demand 0: all three; a pending job may start on a loaned node in the same cycle.
	v.inference_demand = 0;
	w.pending(1, 0, 8);
	w.running(2, 0, {{0, 8}});
	w.running(3, 0, {{1, 8}});
	ClusterView v2 = w.view();
	d = s->decide(v2);
	ck_assert_int_eq(count(d, ActionKind::kLoan), 3);
	const Action* start = find(d, ActionKind::kStart, 1);
	ck_assert(start && start->placement.size() == 1 && start->placement[0].node >= 2);
}
END_TEST

START_TEST(aryl_reclaims_the_cheapest_nodes_first)
{
	World w = loan_world();
	for (NodeIndex i = 2; i < 5; ++i)
		w.nodes[i].loaned = true;
	// Node 2: an elastic job's surplus (it asked for 8 and keeps 8 on node 0): free to shrink.
	Job& a = w.running(1, 0, {{0, 8}, {2, 8}});
	a.gpus_requested = 8;
	a.gpus_min = 1;
	a.gpus_max = 16;
	// Node 3: a rigid job, cheap to stop (2 s to write, 10 s to resume); node 4: a rigid job that
	// costs more (100 s + 100 s).
	Job& b = w.running(2, 0, {{3, 4}});
	b.preempt_cost.checkpoint_write = 2;
	b.preempt_cost.resume = 10;
	Job& c = w.running(3, 0, {{4, 4}});
	c.preempt_cost.checkpoint_write = 100;
	c.preempt_cost.resume = 100;
	ClusterView v = w.view();
	v.inference_demand = 0.5;  // ceil(1.5) = 2 nodes back: node 2 (free to shrink), then node 3
	Decisions d = make_scheduler("aryl", {{"ReclaimTimeout", "120"}})->decide(v);
	ck_assert_int_eq(count(d, ActionKind::kReclaim), 2);
	std::vector<NodeIndex> back;
	for (const Action& x : d.actions)
		if (x.kind == ActionKind::kReclaim)
			back.push_back(x.node);
	ck_assert_int_eq(static_cast<int>(back[0]), 2);
	ck_assert_int_eq(static_cast<int>(back[1]), 3);
	const Action* shrink = find(d, ActionKind::kResize, 1);
	ck_assert(shrink && shrink->gpus == 8 && shrink->placement.size() == 1 &&
		  shrink->placement[0].node == 0);
	const Action* stop = find(d, ActionKind::kRequeue, 2);
	ck_assert(stop && stop->grace == 120);
	ck_assert(!find(d, ActionKind::kRequeue, 3));
	// Nothing starts on a node taken back, and the job shrunk is not planned again.
	for (const Action& x : d.actions)
		for (const NodeShare& sh : x.placement)
			ck_assert(x.kind != ActionKind::kStart || (sh.node != 2 && sh.node != 3));
	ck_assert_int_eq(count(d, ActionKind::kResize), 1);
}
END_TEST

START_TEST(aryl_updates_costs_as_nodes_are_chosen)
{
	// One rigid job spans loaned nodes 2 and 3 (expensive to stop); node 4 holds a cheaper one. Two
	// nodes back: the first choice is node 4 (cheapest); then nodes 2 and 3 cost the same; node 2
	// is chosen, and the third reclaim (all three) costs nothing more: the job is stopped already.
	World w = loan_world();
	for (NodeIndex i = 2; i < 5; ++i)
		w.nodes[i].loaned = true;
	Job& big = w.running(1, 0, {{2, 8}, {3, 8}});
	big.preempt_cost.resume = 1000;
	Job& small = w.running(2, 0, {{4, 8}});
	small.preempt_cost.resume = 10;
	ClusterView v = w.view();
	v.inference_demand = 0.6;  // ceil(1.8) = 2
	auto s = make_scheduler("aryl");
	Decisions d = s->decide(v);
	std::vector<NodeIndex> back;
	for (const Action& x : d.actions)
		if (x.kind == ActionKind::kReclaim)
			back.push_back(x.node);
	ck_assert_int_eq(static_cast<int>(back.size()), 2);
	ck_assert_int_eq(static_cast<int>(back[0]), 4);
	ck_assert_int_eq(static_cast<int>(back[1]), 2);
	ck_assert(find(d, ActionKind::kRequeue, 1) && find(d, ActionKind::kRequeue, 2));
	// All three: after nodes 4 and 2, node 3's cost is 0 (job 1 is stopped already).
	v.inference_demand = 1;
	d = s->decide(v);
	ck_assert_int_eq(count(d, ActionKind::kReclaim), 3);
	ck_assert_int_eq(count(d, ActionKind::kRequeue), 2);
}
END_TEST

START_TEST(loaned_nodes_take_only_requeueable_jobs)
{
	World w = loan_world();
	w.nodes[2].loaned = true;
	w.running(1, 0, {{0, 8}});
	w.running(2, 0, {{1, 8}});
	Job& j = w.pending(3, 0, 4);
	j.requeueable = false;  // a reclaim could not stop it: it waits for a training node
	ClusterView v = w.view();
	FreeMap free(v);
	ck_assert(!free.eligible(j, 2));
	ck_assert_int_eq(free.eligible_free(j), 0);
	j.requeueable = true;
	ck_assert(free.eligible(j, 2));
}
END_TEST

int main()
{
	Suite* s = suite_create("loaning");
	TCase* tc = tcase_create("aryl");
	tcase_add_test(tc, mckp_solves_hand_instances);
	tcase_add_test(tc, mckp_matches_brute_force);
	tcase_add_test(tc, mckp_gives_spare_gpus_where_they_shorten_jobs_most);
	tcase_add_test(tc, mckp_counts_the_resize_cost_of_running_jobs);
	tcase_add_test(tc, aryl_lends_what_inference_does_not_need);
	tcase_add_test(tc, aryl_reclaims_the_cheapest_nodes_first);
	tcase_add_test(tc, aryl_updates_costs_as_nodes_are_chosen);
	tcase_add_test(tc, loaned_nodes_take_only_requeueable_jobs);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
