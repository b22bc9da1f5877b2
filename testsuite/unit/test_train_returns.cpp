// dlsched-train's RL maths on hand-computed episodes: what a round does to running jobs
// (preemptions, resizes), the reward with its penalties, discounted returns, the return from any
// moment, the sibling-rollout advantages and normalisation.
#include <cmath>
#include <vector>

#include "contribs/train/returns.h"
// Check's headers last (check.h defines a fail() macro).
#include <check.h>

#include "check_main.h"

using namespace dlsched;
using namespace dlsched::train;

namespace {

// A round over: job 1 running on 2 GPUs, elastic to 4 (rows 0, 1, 2), job 2 running rigid on 1 (row
// 3), job 3 pending on 2 (row 4), the end row (5).
PolicyStep round_with(std::vector<int> picks, Seconds now = 0, int in_system = 3)
{
	PolicyStep s;
	s.now = now;
	s.rows = 6;
	s.ids = {1, 1, 1, 2, 3, 0};
	s.need = {2, 1, 1, 1, 2, 0};
	s.unit = {0, 1, 2, 0, 0, -1};
	s.after = {-1, 0, 1, -1, -1, -1};
	s.size = {2, 3, 4, 1, 2, 0};
	s.held = {2, 2, 2, 1, 0, 0};
	s.free_gpus = 5;
	s.order = std::move(picks);
	s.in_system = in_system;
	return s;
}

PolicyStep plain(Seconds now, int in_system)
{
	PolicyStep s;
	s.now = now;
	s.in_system = in_system;
	return s;
}

}  // namespace

START_TEST(test_round_changes)
{
	RoundChanges c = round_changes(round_with({0, 3, 4, 5}));  // everything kept, job 3 starts
	ck_assert_uint_eq(c.preempted, 0);
	ck_assert_uint_eq(c.resized, 0);
	c = round_changes(round_with({0, 1, 3, 5}));
	ck_assert_uint_eq(c.resized, 1);  // job 1 grown from 2 to 3
	ck_assert_uint_eq(c.preempted, 0);
	c = round_changes(round_with({4, 0, 1, 2}));  // job 2 left out, job 1 grown to 4
	ck_assert_uint_eq(c.preempted, 1);
	ck_assert_uint_eq(c.resized, 1);
	c = round_changes(round_with({4}));  // both running jobs left out
	ck_assert_uint_eq(c.preempted, 2);
	ck_assert_uint_eq(c.resized, 0);
}
END_TEST

START_TEST(test_reward_with_penalties)
{
	Reward r;
	r.preemption_penalty_s = 100;
	r.resize_penalty_s = 50;
	// 3 jobs for 600 s, job 1 resized, job 2 preempted: -(1800 + 50 + 100) / 3600 job-hours.
	const double got = round_reward(round_with({4, 0, 1}), 600, r);
	ck_assert_double_eq_tol(got, -(1800.0 + 50 + 100) / 3600, 1e-12);
	// Without penalties only Little's law counts.
	r.preemption_penalty_s = r.resize_penalty_s = 0;
	ck_assert_double_eq_tol(round_reward(round_with({4}), 600, r), -0.5, 1e-12);
}
END_TEST

START_TEST(test_discounted_returns_by_hand)
{
	// Steps at 0 s (2 jobs), 3600 s (1 job); the episode ends at 7200 s; horizon 3600 s.
	std::vector<PolicyStep> steps{plain(0, 2), plain(3600, 1)};
	Reward r;
	r.horizon_s = 3600;
	const std::vector<double> ret = episode_returns(steps, 7200, r);
	const double g1 = -1.0;                        // 1 job x 1 h
	const double g0 = -2.0 + std::exp(-1.0) * g1;  // 2 jobs x 1 h, then discounted
	ck_assert_double_eq_tol(ret[1], g1, 1e-12);
	ck_assert_double_eq_tol(ret[0], g0, 1e-12);
	// From 1800 s: 2 jobs for half an hour, then step 1's return discounted over it.
	ck_assert_double_eq_tol(return_at(steps, ret, 7200, 1800, 3600), -1.0 + std::exp(-0.5) * g1, 1e-12);
	// Before the first step: the first step's return; after the last: its jobs to the end.
	ck_assert_double_eq_tol(return_at(steps, ret, 7200, -5, 3600), g0, 1e-12);
	ck_assert_double_eq_tol(return_at(steps, ret, 7200, 5400, 3600), -0.5, 1e-12);
}
END_TEST

START_TEST(test_sibling_advantages_by_hand)
{
	// Two rollouts of the same workload. A: 1 job from 0 to 3600 s. B: 2 jobs from 0 to 3600 s.
	Reward r;
	r.horizon_s = 1e9;  // no discount to speak of
	std::vector<PolicyStep> a{plain(0, 1)}, b{plain(0, 2)};
	const std::vector<double> ra = episode_returns(a, 3600, r), rb = episode_returns(b, 3600, r);
	std::vector<Rollout> group{{&a, &ra, 3600}, {&b, &rb, 3600}};
	const std::vector<double> adv_a = sibling_advantages(group, 0, r.horizon_s);
	const std::vector<double> adv_b = sibling_advantages(group, 1, r.horizon_s);
	ck_assert_double_eq_tol(adv_a[0], -1.0 - -2.0, 1e-6);  // A did better than its sibling
	ck_assert_double_eq_tol(adv_b[0], -2.0 - -1.0, 1e-6);
	// One rollout alone: the advantages are its returns.
	std::vector<Rollout> alone{{&a, &ra, 3600}};
	ck_assert_double_eq_tol(sibling_advantages(alone, 0, r.horizon_s)[0], ra[0], 1e-12);
}
END_TEST

START_TEST(test_stddev_and_normalise)
{
	ck_assert_double_eq_tol(stddev({1, 2, 3, 4}), std::sqrt(5.0 / 3.0), 1e-12);
	ck_assert_double_eq(stddev({7}), 1);
	ck_assert_double_eq(stddev({2, 2, 2}), 1e-6);  // never 0: no division by zero
	std::vector<double> v{1, 2, 3};
	normalise(v);
	ck_assert_double_eq_tol(v[0], -1, 1e-12);
	ck_assert_double_eq_tol(v[1], 0, 1e-12);
	ck_assert_double_eq_tol(v[2], 1, 1e-12);
}
END_TEST

static Suite* suite()
{
	Suite* s = suite_create("train-returns");
	TCase* tc = tcase_create("returns");
	tcase_add_test(tc, test_round_changes);
	tcase_add_test(tc, test_reward_with_penalties);
	tcase_add_test(tc, test_discounted_returns_by_hand);
	tcase_add_test(tc, test_sibling_advantages_by_hand);
	tcase_add_test(tc, test_stddev_and_normalise);
	suite_add_tcase(s, tc);
	return s;
}

int main()
{
	return run_suite(suite());
}
