// The predictors on cases computed by hand (each says how).
#include <cmath>
#include <string>
#include <vector>

#include "model/model_catalog.h"
#include "predict/hints.h"
#include "predict/history.h"
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

START_TEST(measurements_of_a_requeued_job_from_its_records)
{
	ModelCatalog models;
	ModelProfile lin;
	lin.name = "linear";
	lin.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}, {8, 1, 8}};
	const int m = models.add(lin);
	// Run 0 on 2 GPUs: epochs of 50 (warm-up), 40, 40, 40 s; a checkpoint mid-epoch 5 (4.5), then
	// run 1 on 4 GPUs resumes there: 20 s (the rest of epoch 5), 22, 22, 22 s.
	db::JobProfile p;
	p.job.model = "linear";
	p.job.gpus = 2;
	double t = 1000;
	auto add = [&](int run, int epoch, int gpus, double seconds) {
		db::EpochRecord e;
		e.run = run;
		e.epoch = epoch;
		e.gpus = gpus;
		e.start_s = t;
		e.end_s = t += seconds;
		p.epochs.push_back(e);
	};
	add(0, 1, 2, 50), add(0, 2, 2, 40), add(0, 3, 2, 40), add(0, 4, 2, 40);
	add(1, 5, 4, 20), add(1, 6, 4, 22), add(1, 7, 4, 22), add(1, 8, 4, 22);
	db::CheckpointRecord save, load;
	save.run = 0, save.epoch = 4.5, save.kind = "save", save.bytes = 1000, save.seconds = 2;
	load.run = 1, load.epoch = 4.5, load.kind = "load", load.bytes = 1000, load.seconds = 1;
	p.checkpoints = {save, load};

	// Preempted at t=1150 (mid-epoch 4, run 0): the save took 2 s and ended 2.5 s after the request.
	save.at_s = 1152.5;
	db::PreemptionRecord pr;
	pr.requested_s = 1150;
	pr.grace_s = 60;
	p.preemptions = {pr};
	p.checkpoints[0] = save;

	const JobMeasurements j = measurements(p);
	// Each run without its first epoch; warm-ups from both: run 0's first epoch against a steady
	// one, run 1's (the rest of epoch 5, half of one) against half a steady one: 20 - 11 = 9 s.
	ck_assert_uint_eq(j.runs.size(), 2);
	ck_assert_int_eq(j.runs[0].gpus, 2);
	ck_assert_uint_eq(j.runs[0].epoch_s.size(), 3);
	ck_assert_int_eq(j.runs[1].gpus, 4);
	ck_assert_double_eq_tol(j.runs[1].epoch_s[0], 22, kTol);
	ck_assert_uint_eq(j.warmups.size(), 2);
	ck_assert_double_eq_tol(j.warmups[0].first_epoch_s, 50, kTol);
	ck_assert_double_eq_tol(j.warmups[0].steady_epoch_s, 40, kTol);
	ck_assert_double_eq_tol(j.warmups[1].first_epoch_s, 22 + 9, kTol);
	ck_assert_double_eq_tol(j.warmups[1].steady_epoch_s, 22, kTol);
	// The request reached a save 0.5 s later (2.5 s to its end, 2 s of writing).
	ck_assert_uint_eq(j.stop_waits.size(), 1);
	ck_assert_double_eq_tol(j.stop_waits[0], 0.5, kTol);
	ck_assert_double_eq_tol(j.training_s, 256, kTol);
	ck_assert_int_eq(j.epochs, 8);
	ck_assert_uint_eq(j.saves.size(), 1);
	ck_assert_uint_eq(j.loads.size(), 1);

	// Runs as past jobs: 40 s x 2 GPUs = 80 s and 22 s x 4 = 88 s on one GPU, mean 84; 10 epochs on
	// 4 GPUs: 210 s, plus the warm-up, the mean of (50 - 40) / 40 and 9 / 22 of one epoch (21 s).
	const History h = pool({j});
	ck_assert_uint_eq(h.jobs, 1);
	ck_assert_uint_eq(h.stop_waits.size(), 1);
	const Estimate e = predict_runtime(models, m, h, 10, 4, 1);
	ck_assert_double_eq_tol(e.value, 210 + (0.25 + 9.0 / 22) / 2 * 21, kTol);
	// A request no save answered within its grace: no wait measured.
	p.preemptions[0].requested_s = 1000;
	p.preemptions[0].grace_s = 10;
	ck_assert(first_save_after(p, p.preemptions[0]) == nullptr);
	ck_assert_uint_eq(measurements(p).stop_waits.size(), 0);
	ck_assert(!predict_runtime(models, m, History{}, 10, 4, 1).known());

	// MAPE: |110 - 100| / 100 and |90 - 100| / 100; an actual of 0 is left out.
	const ErrorSummary s = mean_abs_pct_error({{110, 100}, {90, 100}, {5, 0}});
	ck_assert_uint_eq(s.n, 2);
	ck_assert_double_eq_tol(s.mape_pct, 10, kTol);
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

START_TEST(user_hints_count_only_within_the_time_limit)
{
	// Unknown model (-1): linear scaling, so a claim is epochs x epoch time / GPUs. Limits: trust
	// factor 10, 3600 s for jobs without a time limit, 8 GPUs per node.
	ModelCatalog models;
	HintLimits limits;
	struct Case {
		const char* what;
		double epochs, epoch_1gpu, time_limit, executed;
		int gpus;
		double want_runtime;
		HintVerdict want;
		int gpus_max = 0;  // elastic up to this; 0: rigid
	};
	const double none = INFINITY;
	const Case cases[] = {
		// 10 x 60 s on 1 GPU = 600 s, limit 1000 s (floor 100 s): kept.
		{"honest", 10, 60, 1000, 0, 1, 600, HintVerdict::kKept},
		// 10 x 240 s over 4 GPUs = 600 s: the same.
		{"honest on 4 GPUs", 10, 240, 1000, 0, 4, 600, HintVerdict::kKept},
		// Claims 6 s against a 1-hour limit: counts as 360 s (limit / 10).
		{"tiny claim", 1, 6, 3600, 0, 1, 360, HintVerdict::kRaisedToFloor},
		// Claims 5,000 s with a 1,000-s limit: capped at the limit.
		{"longer than its limit", 100, 50, 1000, 0, 1, 1000, HintVerdict::kCappedAtLimit},
		// Elastic 1-4 GPUs: 1,600 s at 1 GPU, 400 s at 4, within a 1,000-s limit: kept (it
		// counts on being scaled up).
		{"elastic, fits at its largest size", 10, 160, 1000, 0, 1, 1600, HintVerdict::kKept, 4},
		// 4,000 s at 1 GPU, 1,000 at 2: too long for its limit even at 2, capped there.
		{"elastic, too long even at its largest", 10, 400, 500, 0, 1, 1000,
		 HintVerdict::kCappedAtLimit, 2},
		// No time limit: nothing shorter than 3,600 s.
		{"no limit, short claim", 10, 60, none, 0, 1, 3600, HintVerdict::kRaisedToFloor},
		{"no limit, long claim", 100, 60, none, 0, 1, 6000, HintVerdict::kKept},
		// Ran 900 s on a 600-s claim (more than 1.25 x 600 + 60 = 810): void, the limit counts.
		{"overran, limit", 10, 60, 1000, 900, 1, 1000, HintVerdict::kVoid},
		// Ran 800 s: still within the slack, kept.
		{"within the slack", 10, 60, 1000, 800, 1, 600, HintVerdict::kKept},
		// Overran and past its limit too (limit 850 s): twice what it has run.
		{"overran past the limit", 10, 60, 850, 900, 1, 1800, HintVerdict::kVoid},
		// No epoch time at all: nothing claimed, nothing changed.
		{"no claim", 10, 0, 1000, 0, 1, 0, HintVerdict::kUnknown},
	};
	for (const Case& c : cases) {
		Job j;
		j.epochs_total = c.epochs;
		j.epoch_time_1gpu = c.epoch_1gpu;
		j.time_limit = c.time_limit;
		j.executed_s = c.executed;
		j.gpus_requested = c.gpus;
		j.gpus_min = c.gpus;
		j.gpus_max = c.gpus_max ? c.gpus_max : c.gpus;
		const HintVerdict v = bound_hints(j, models, limits);
		ck_assert_msg(v == c.want, "%s: verdict %s", c.what, hint_verdict_name(v));
		ck_assert_msg(std::fabs(claimed_runtime(j, models, 8) - c.want_runtime) < 1e-6,
			      "%s: runtime %g, want %g", c.what, claimed_runtime(j, models, 8),
			      c.want_runtime);
		ck_assert_double_eq(j.epochs_total, c.epochs);  // progress stays in the job's own epochs
	}
}
END_TEST

START_TEST(a_time_limit_alone_is_taken_as_the_runtime)
{
	// Model "s": 2 GPUs give 1.5x, 16 GPUs over two nodes 10x. A job of 4 epochs on 2 GPUs whose
	// only information is a 3000 s limit: 4 epochs x e / 1.5 = 3000 s, e = 1125 s on one GPU.
	ModelCatalog models;
	ModelProfile p;
	p.name = "s";
	p.points = {{1, 1, 1}, {2, 1, 1.5}, {8, 1, 6}, {16, 2, 10}};
	models.add(p);
	Job j;
	j.model = 0;
	j.epochs_total = 4;
	j.gpus_requested = 2;
	ck_assert_double_eq_tol(epoch_time_for_runtime(j, models, 8, 3000), 1125, 1e-9);
	j.epoch_time_1gpu = epoch_time_for_runtime(j, models, 8, 3000);
	ck_assert_double_eq_tol(claimed_runtime(j, models, 8), 3000, 1e-9);  // the inverse
	j.gpus_requested = 16;  // two nodes of 8: 4 x e / 10 = 3000
	ck_assert_double_eq_tol(epoch_time_for_runtime(j, models, 8, 3000), 7500, 1e-9);
	j.model = -1;  // an unknown model scales linearly: 4 x e / 16 = 3000
	ck_assert_double_eq_tol(epoch_time_for_runtime(j, models, 8, 3000), 12000, 1e-9);
	// Nothing to go by: no limit, or no epochs.
	ck_assert_double_eq(epoch_time_for_runtime(j, models, 8, 0), 0);
	ck_assert_double_eq(epoch_time_for_runtime(j, models, 8, INFINITY), 0);
	j.epochs_total = 0;
	ck_assert_double_eq(epoch_time_for_runtime(j, models, 8, 3000), 0);
}
END_TEST

START_TEST(one_user_cannot_move_a_models_history)
{
	// without_outliers: {10, 11, 9, 10, 100}: median 10, absolute deviations {0, 1, 1, 0, 90} with
	// median 1, scale 1.4826: 100 is 60 scales out, the rest within 3.
	ck_assert(without_outliers({10, 11, 9, 10, 100}) == std::vector<double>({10, 11, 9, 10}));
	// No deviation (MAD 0): the scale is 5% of the median (0.5), so 10.4 stays, 12 goes.
	ck_assert(without_outliers({10, 10, 10, 10.4, 12}) == std::vector<double>({10, 10, 10, 10.4}));
	// Fewer than three: all.
	ck_assert(without_outliers({1, 1000}) == std::vector<double>({1, 1000}));

	ModelCatalog models;
	ModelProfile lin;
	lin.name = "linear";
	lin.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}, {8, 1, 8}};
	const int m = models.add(lin);
	// Four users' jobs on one GPU, steady 38, 40, 42 and 40 s, first epochs 20% slower.
	auto job = [](const std::string& user, double steady, double first) {
		JobMeasurements j;
		j.user = user;
		j.runs = {PastJob{1, 1, {first, steady, steady, steady}}};
		j.warmups = {{first, steady}};
		return j;
	};
	const std::vector<JobMeasurements> honest = {job("a", 38, 45.6), job("b", 40, 48), job("c", 42, 50.4),
						     job("d", 40, 48)};
	// Mean 40 s, sample sd sqrt(8/3); warm-up 20% of an epoch. 10 epochs on 1 GPU:
	// 10 x 40 x (1 + 0.2 / 10) = 408 s; sd 10 x sqrt(8/3) x sqrt(1 + 1/4).
	const Estimate fair = predict_runtime(models, m, pool(honest, kHistoryJobsPerUser), 10, 1, 1);
	ck_assert_double_eq_tol(fair.value, 408, 1e-9);
	ck_assert_double_eq_tol(fair.stddev, 10 * std::sqrt(8.0 / 3) * std::sqrt(1.25), 1e-9);
	// Mallory posts 20 trivial jobs of the model, the most recent ones, with wildly varying epochs
	// (1 s and 10,000 s) and absurd warm-ups. At most 3 of them count, and those lie far out.
	std::vector<JobMeasurements> attacked;
	for (int i = 0; i < 20; ++i)
		attacked.push_back(job("mallory", i % 2 ? 10000 : 1, 1e6));
	attacked.insert(attacked.end(), honest.begin(), honest.end());
	const History h = pool(attacked, kHistoryJobsPerUser);
	ck_assert_uint_eq(h.jobs, 7);
	const Estimate e = predict_runtime(models, m, h, 10, 1, 1);
	ck_assert_double_eq_tol(e.value, fair.value, 1e-9);
	ck_assert_double_eq_tol(e.stddev, fair.stddev, 1e-9);
	ck_assert_uint_eq(e.samples, 4);
	// Uncapped (max_per_user 0), as dlsched-db accuracy pools: all 24.
	ck_assert_uint_eq(pool(attacked).jobs, 24);
}
END_TEST

int main()
{
	Suite* s = suite_create("predict");
	TCase* tc = tcase_create("predict");
	tcase_add_test(tc, steady_epoch_time_leaves_out_the_warm_up);
	tcase_add_test(tc, remaining_time_of_a_running_job);
	tcase_add_test(tc, runtime_from_same_model_jobs);
	tcase_add_test(tc, one_user_cannot_move_a_models_history);
	tcase_add_test(tc, measurements_of_a_requeued_job_from_its_records);
	tcase_add_test(tc, epochs_from_storage_traffic);
	tcase_add_test(tc, suspend_and_resume_costs);
	tcase_add_test(tc, user_hints_count_only_within_the_time_limit);
	tcase_add_test(tc, a_time_limit_alone_is_taken_as_the_runtime);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
