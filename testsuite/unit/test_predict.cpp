// The predictors on cases computed by hand (each says how).
#include <cmath>
#include <vector>

#include "model/model_catalog.h"
#include "predict/predict.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;
using namespace dlsched::predict;

namespace {
const double kTol = 1e-9;
}

START_TEST(steady_epoch_time_leaves_out_the_warm_up)
{
	// {12, 10, 11, 9}: the first epoch is warm-up; {10, 11, 9}: mean 10, sample sd 1.
	Estimate e = steady_epoch_time({12, 10, 11, 9});
	ck_assert_double_eq_tol(e.value, 10, kTol);
	ck_assert_double_eq_tol(e.stddev, 1, kTol);
	ck_assert_uint_eq(e.samples, 3);
	// Two epochs: both kept (4, 6: mean 5, sd sqrt(2)); one: no spread; none: unknown.
	e = steady_epoch_time({4, 6});
	ck_assert_double_eq_tol(e.value, 5, kTol);
	ck_assert_double_eq_tol(e.stddev, std::sqrt(2.0), kTol);
	e = steady_epoch_time({5});
	ck_assert(e.known() && e.value == 5 && e.stddev == 0);
	ck_assert(!steady_epoch_time({}).known());
}
END_TEST

START_TEST(remaining_time_of_a_running_job)
{
	// Steady 10 s, sd 1 from 3 epochs; 10 - 4 = 6 epochs left: 60 s,
	// variance 6 x 1 + (6 x 1 / sqrt(3))^2 = 6 + 12 = 18.
	Estimate r = remaining_time({12, 10, 11, 9}, 10, 4);
	ck_assert_double_eq_tol(r.value, 60, kTol);
	ck_assert_double_eq_tol(r.stddev, std::sqrt(18.0), kTol);
	// Done: nothing left. No epochs measured: unknown.
	ck_assert_double_eq_tol(remaining_time({12, 10, 11, 9}, 4, 4).value, 0, kTol);
	ck_assert(!remaining_time({}, 10, 0).known());
}
END_TEST

START_TEST(runtime_from_same_model_jobs)
{
	ModelCatalog models;
	ModelProfile lin;
	lin.name = "linear";
	lin.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}, {8, 1, 8}};
	const int m = models.add(lin);
	// Job A: 2 GPUs, steady 40 s -> 80 s on one GPU. Job B: 4 GPUs, steady 22 s -> 88 s.
	// Mean 84 s on one GPU, sd sqrt(32). New job: 10 epochs on 4 GPUs -> 10 x 84 / 4 = 210 s,
	// sd 10 x sqrt(32) x sqrt(1 + 1/2) / 4 = 10 x sqrt(48) / 4.
	std::vector<PastJob> h = {{2, 1, {50, 40, 40, 40}}, {4, 1, {25, 22, 22, 22}}};
	Estimate e = runtime_from_history(models, m, h, 10, 4, 1);
	ck_assert_double_eq_tol(e.value, 210, kTol);
	ck_assert_double_eq_tol(e.stddev, 10 * std::sqrt(48.0) / 4, kTol);
	ck_assert_uint_eq(e.samples, 2);
	// One past job (A, no epoch noise): 10 x 80 / 8 GPUs = 100 s, sd 0.
	e = runtime_from_history(models, m, {h[0]}, 10, 8, 1);
	ck_assert_double_eq_tol(e.value, 100, kTol);
	ck_assert_double_eq_tol(e.stddev, 0, kTol);
	// No history: unknown.
	ck_assert(!runtime_from_history(models, m, {}, 10, 4, 1).known());
}
END_TEST

START_TEST(epochs_from_storage_traffic)
{
	// 1000, 1100, 900 bytes per epoch: mean 1000, sd 100; 5000 bytes read -> 5 epochs,
	// sd 5 x 100 / (1000 x sqrt(3)).
	Estimate e = epochs_from_traffic({1000, 1100, 900}, 5000);
	ck_assert_double_eq_tol(e.value, 5, kTol);
	ck_assert_double_eq_tol(e.stddev, 0.5 / std::sqrt(3.0), kTol);
	ck_assert(!epochs_from_traffic({}, 5000).known());
}
END_TEST

START_TEST(suspend_and_resume_costs)
{
	// Suspend a quarter into a 100 s (sd 10) epoch: 75 s (sd 7.5) to finish it; a 1000-byte
	// checkpoint at 0.002 and 0.003 s/byte measured: 2.5 s, sd 1000 x sqrt(5e-7) x sqrt(1.5).
	// Total 77.5 s, variance 56.25 + 0.75 = 57.
	Estimate epoch{100, 10, 5};
	Estimate s = suspend_cost(epoch, 0.25, 1000, {{1000, 2}, {2000, 6}});
	ck_assert_double_eq_tol(s.value, 77.5, kTol);
	ck_assert_double_eq_tol(s.stddev, std::sqrt(57.0), 1e-9);
	ck_assert_uint_eq(s.samples, 7);
	// Without past saves: the epoch part alone.
	ck_assert_double_eq_tol(suspend_cost(epoch, 0.25, 1000, {}).value, 75, kTol);
	// Resume: loads at 0.001 and 0.003 s/byte -> 2 s for 1000 bytes, sd 1000 x sqrt(2e-6) x sqrt(1.5)
	// = sqrt(3); warm-ups 30 - 20 and 26 - 20 -> 8 s, sd sqrt(8) x sqrt(1.5) = sqrt(12). Total 10 s,
	// variance 3 + 12 = 15.
	Estimate r = resume_cost(1000, {{1000, 1}, {1000, 3}}, {{30, 20}, {26, 20}});
	ck_assert_double_eq_tol(r.value, 10, kTol);
	ck_assert_double_eq_tol(r.stddev, std::sqrt(15.0), 1e-9);
	ck_assert_uint_eq(r.samples, 4);
	ck_assert(!resume_cost(1000, {}, {}).known());
}
END_TEST

int main()
{
	Suite* s = suite_create("predict");
	TCase* tc = tcase_create("predict");
	tcase_add_test(tc, steady_epoch_time_leaves_out_the_warm_up);
	tcase_add_test(tc, remaining_time_of_a_running_job);
	tcase_add_test(tc, runtime_from_same_model_jobs);
	tcase_add_test(tc, epochs_from_storage_traffic);
	tcase_add_test(tc, suspend_and_resume_costs);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
