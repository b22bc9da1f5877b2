// models/time_scales + features (schema 3): the encoding is scale-free (a workload and the same
// workload with every time x10 encode alike once each one's running quantiles have seen it), the
// quantile window and the scales by hand, ModelTimeScale= on the model's starting scales, the scales
// saved with a model, and a model of the previous schema refused with a message naming its schema
// and the fix.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "models/features.h"
#include "models/policy_model.h"
#include "models/time_scales.h"
// Check's headers last: check.h defines a fail() macro that breaks <fstream>.
#include <check.h>

#include "check_main.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::models;
using dlsched::test::World;

namespace {

std::string tmp_path(const char* name)
{
	return std::string("/tmp/dlsched-test-features-") + std::to_string(getpid()) + "-" + name;
}

// A deterministic workload of `n` jobs (times multiplied by `k`): lengths from minutes to days,
// some running (started after a wait, with service, restarts and a restart cost), some pending
// (some preempted before). Submits every 150 s of the trace.
void make_workload(World& w, int n, double k)
{
	std::uint64_t x = 12345;
	auto next = [&x] {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		return static_cast<double>((x >> 11) % 1000000) / 1e6;
	};
	w.now = 150.0 * n * k;
	for (int i = 0; i < n; ++i) {
		const double submit = 150.0 * i * k;
		const int gpus = 1 << static_cast<int>(next() * 3);
		Job& j = w.pending(static_cast<JobId>(i + 1), submit, gpus, 1 + std::floor(next() * 40));
		j.epoch_time_1gpu = k * 30 * std::exp(next() * 6);  // 30 s .. 3.4 h per epoch
		if (i % 3 == 0) {
			j.gpus_min = 1;
			j.gpus_max = 2 * gpus;
		}
		const double wait = k * (i % 4 == 0 ? 0 : 600 * next() * (i % 7));
		if (i % 2 == 0 && submit + wait < w.now) {
			j.state = JobState::kRunning;
			j.gpus_allocated = gpus;
			j.first_start_time = j.start_time = submit + wait;
			j.attained_gpu_s = (w.now - j.start_time) * gpus;
			j.epochs_done = std::min(j.epochs_total - 0.5, next() * j.epochs_total);
			j.preempt_cost.checkpoint_write = k * 60 * next();
			j.preempt_cost.resume = k * 120 * next();
		} else if (i % 5 == 1) {
			j.restarts = 1;
			j.first_start_time = submit + wait;
			j.last_stop_time = std::min(w.now, submit + wait + k * 900);
			j.attained_gpu_s = k * 900 * gpus;
		}
	}
}

// The view of `w` at time `now`: the jobs submitted by then, each as it stood (pending before its
// start; the final state of a job is its state from its start on, which is all the encoding needs).
ClusterView view_at(const World& w, double now, std::vector<Job>& store)
{
	store.clear();
	store.reserve(w.jobs.size());
	for (const Job& j : w.jobs) {
		if (j.submit_time > now)
			continue;
		Job s = j;
		if (s.first_start_time > now) {
			s.first_start_time = s.start_time = s.last_stop_time = -1;
			s.state = JobState::kPending;
			s.gpus_allocated = 0;
			s.attained_gpu_s = 0;
			s.restarts = 0;
		}
		store.push_back(s);
	}
	ClusterView v;
	v.now = now;
	v.nodes = Span<const Node>(w.nodes.data(), w.nodes.size());
	v.models = &w.models;
	for (const Job& j : store)
		(j.running() ? v.running : v.pending).push_back(&j);
	return v;
}

// Feeds the scales a cycle every 600 s (x k) of `w`, and encodes the last cycle's window.
EncodedWindow encode_after_cycles(const World& w, double k, TimeScales& scales, std::vector<Job>& store)
{
	for (double t = 0; t < w.now; t += 600 * k) {
		std::vector<Job> s;
		scales.observe(view_at(w, t, s));
	}
	ClusterView v = view_at(w, w.now, store);
	scales.observe(v);
	std::vector<const Job*> cands(v.running.begin(), v.running.end());
	cands.insert(cands.end(), v.pending.begin(), v.pending.end());
	std::vector<const Job*> rest;
	return encode_window(v, cands, 16, 512, rest, /*units=*/true, scales);
}

double max_difference(const EncodedWindow& a, const EncodedWindow& b)
{
	ck_assert_uint_eq(a.x.size(), b.x.size());
	double d = 0;
	for (std::size_t i = 0; i < a.x.size(); ++i)
		d = std::max(d, std::fabs(static_cast<double>(a.x[i]) - b.x[i]));
	for (std::size_t i = 0; i < a.context.size(); ++i)
		d = std::max(d, std::fabs(static_cast<double>(a.context[i]) - b.context[i]));
	return d;
}

}  // namespace

// The same workload with every time x10 encodes alike, from no prior and from a model's prior (pushed
// out of the window by the site's own 300 jobs); under fixed scales (schema 2's hours) it does not.
START_TEST(test_scale_free_x10)
{
	World one({8, 8}), ten({8, 8});
	make_workload(one, 300, 1);
	make_workload(ten, 300, 10);
	std::vector<Job> s1, s10;
	const ScalePrior priors[] = {ScalePrior(), ScalePrior{{60, 600, 3600, 7200}, {0, 300}}};
	for (const ScalePrior& prior : priors) {
		TimeScales a(prior), b(prior);
		EncodedWindow e1 = encode_after_cycles(one, 1, a, s1);
		EncodedWindow e10 = encode_after_cycles(ten, 10, b, s10);
		ck_assert_uint_ge(a.lengths_seen(), 256);
		ck_assert_double_eq_tol(b.length(), 10 * a.length(), 1e-9 * b.length());
		ck_assert_double_eq_tol(b.wait(), 10 * a.wait(), 1e-9 * b.wait());
		ck_assert_uint_gt(e1.rows(), 100);
		const double d = max_difference(e1, e10);
		ck_assert_msg(d < 1e-5, "x10 encodes differently: max difference %g", d);
	}
	// The test can fail: at a fixed scale (an hour), x10 changes the time features.
	std::vector<const Job*> rest;
	ClusterView v1 = view_at(one, one.now, s1), v10 = view_at(ten, ten.now, s10);
	std::vector<const Job*> c1(v1.running.begin(), v1.running.end()),
		c10(v10.running.begin(), v10.running.end());
	c1.insert(c1.end(), v1.pending.begin(), v1.pending.end());
	c10.insert(c10.end(), v10.pending.begin(), v10.pending.end());
	const double fixed = max_difference(encode_window(v1, c1, 16, 512, rest, true),
					    encode_window(v10, c10, 16, 512, rest, true));
	ck_assert_msg(fixed > 0.5, "at a fixed scale x10 should differ, max difference %g", fixed);
}
END_TEST

START_TEST(test_quantile_window_by_hand)
{
	QuantileWindow q(4);
	ck_assert_double_eq(q.quantile(0.5), 0);
	ck_assert(q.points(3).empty());
	for (double v : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0})
		q.add(v);
	q.add(-1);  // not a time: ignored
	q.add(NAN);
	ck_assert_uint_eq(q.size(), 4);  // 3, 4, 5, 6: the oldest went
	ck_assert_double_eq(q.quantile(0), 3);
	ck_assert_double_eq(q.quantile(0.5), 4);  // rank floor(0.5 x 3) = 1
	ck_assert_double_eq(q.quantile(1), 6);
	const std::vector<double> p = q.points(2);  // ranks round(0.25 x 3) = 1, round(0.75 x 3) = 2
	ck_assert_uint_eq(p.size(), 2);
	ck_assert_double_eq(p[0], 4);
	ck_assert_double_eq(p[1], 5);
}
END_TEST

// What one cycle adds, by hand: a job's length once (its first cycle), a wait once (its first start);
// the wait scale's floor; a view at the same time adds nothing.
START_TEST(test_scales_by_hand)
{
	World w({8});
	w.now = 1000;
	w.pending(1, 0, 2, 10);                    // 10 x 60 s at 2 GPUs (linear): 300 s
	w.pending(2, 100, 1, 20);                  // 1,200 s
	Job& r = w.running(3, 200, {{0, 4}}, 40);  // 600 s
	r.first_start_time = r.start_time = 800;   // waited 600 s
	TimeScales s;
	ck_assert_double_eq(s.length(), 3600);  // nothing seen: an hour
	ck_assert_double_eq(s.wait(), 3600);
	s.observe(w.view());
	ck_assert_uint_eq(s.lengths_seen(), 3);
	ck_assert_double_eq_tol(s.length(), 600, 1e-9);  // median of 300, 600, 1,200
	ck_assert_double_eq_tol(s.wait(), 600, 1e-9);    // one wait, 600 s
	s.observe(w.view());                             // the same time: nothing new
	ck_assert_uint_eq(s.lengths_seen(), 3);
	w.now = 2000;
	w.pending(4, 1500, 1, 100);  // 6,000 s; submitted after the last view
	s.observe(w.view());
	ck_assert_uint_eq(s.lengths_seen(), 4);
	ck_assert_double_eq_tol(s.length(), 600, 1e-9);  // rank floor(0.5 x 3) = 1 of 300, 600, 1,200, 6,000

	// Every job started at once: waits of 0; the wait scale is a tenth of the length scale.
	World idle({8});
	idle.now = 10;
	Job& a = idle.running(1, 0, {{0, 1}}, 10);  // 600 s
	a.first_start_time = 0;
	TimeScales t;
	t.observe(idle.view());
	ck_assert_double_eq_tol(t.length(), 600, 1e-9);
	ck_assert_double_eq_tol(t.wait(), 60, 1e-9);
}
END_TEST

// ModelTimeScale= divides the model's starting scales (in the model's time) into the view's clock;
// the site's own observations then take over whatever it says.
START_TEST(test_time_scale_divides_the_prior)
{
	const ScalePrior prior{{600, 3600, 7200}, {1800}};
	TimeScales plain(prior), fast(prior, 120);
	ck_assert_double_eq_tol(plain.length(), 3600, 1e-9);
	ck_assert_double_eq_tol(fast.length(), 30, 1e-9);
	ck_assert_double_eq_tol(fast.wait(), 15, 1e-9);
	TimeScales none(ScalePrior(), 120);  // no prior: an hour of the model's time
	ck_assert_double_eq_tol(none.length(), 30, 1e-9);
	const ScalePrior back = plain.prior();
	ck_assert_uint_eq(back.length_s.size(), TimeScales::kPriorPoints);
	ck_assert_double_eq(back.length_s.front(), 600);
	ck_assert_double_eq(back.length_s.back(), 7200);
}
END_TEST

// The scales a model was trained at survive its file.
START_TEST(test_model_keeps_its_scales)
{
	auto m = PolicyModel::create(8, 1);
	m->set_scales(ScalePrior{{60, 120, 240}, {0, 30}});
	const std::string path = tmp_path("scales.pt");
	ck_assert(m->save(path).is_ok());
	auto r = PolicyModel::load(path);
	ck_assert_msg(r.is_ok(), "%s", r.status().message().c_str());
	ck_assert_uint_eq((*r)->info().scales.length_s.size(), 3);
	ck_assert_double_eq((*r)->info().scales.length_s[2], 240);
	ck_assert_uint_eq((*r)->info().scales.wait_s.size(), 2);
	ck_assert_double_eq((*r)->info().scales.wait_s[1], 30);
	std::remove(path.c_str());
}
END_TEST

// A schema-2 model (times in hours) is refused, naming its schema and the fix.
START_TEST(test_schema2_model_refused)
{
	ck_assert_int_eq(kFeatureSchema, 3);
	auto m = PolicyModel::create(8, 1);
	m->set_versions_for_testing(kModelFormat, 2);
	const std::string path = tmp_path("schema2.pt");
	ck_assert(m->save(path).is_ok());
	auto r = PolicyModel::load(path);
	ck_assert(!r.is_ok());
	const std::string msg = r.status().message();
	for (const char* want :
	     {"feature schema 2", "schema 3", "dlsched-train", "scripts/train-model", path.c_str()})
		ck_assert_msg(msg.find(want) != std::string::npos, "'%s' not in: %s", want, msg.c_str());
	std::remove(path.c_str());
}
END_TEST

int main()
{
	Suite* s = suite_create("features");
	TCase* tc = tcase_create("features");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_scale_free_x10);
	tcase_add_test(tc, test_quantile_window_by_hand);
	tcase_add_test(tc, test_scales_by_hand);
	tcase_add_test(tc, test_time_scale_divides_the_prior);
	tcase_add_test(tc, test_model_keeps_its_scales);
	tcase_add_test(tc, test_schema2_model_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
