// models/: feature encoding, DL2's decoded rounds and masks, the model file (round trip, versions,
// corrupt and missing files), the fallback, and the two log-probability implementations agreeing.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "models/decode.h"
#include "models/features.h"
#include "models/learned.h"
#include "models/policy_model.h"
#include "models/train.h"
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
	return std::string("/tmp/dlsched-test-models-") + std::to_string(getpid()) + "-" + name;
}

}  // namespace

START_TEST(test_encode_job_by_hand)
{
	World w({8});
	w.now = 3600;
	Job& j = w.pending(1, 0, 2, 10);  // linear model: 10 epochs x 60 s on 1 GPU -> 300 s at 2 GPUs
	j.attained_gpu_s = 3600;
	ClusterView v = w.view();
	float f[kJobFeatures];
	encode_job(v, j, 4, 8, 8, f);
	ck_assert_float_eq_tol(f[0], std::log1p(300.0 / 3600), 1e-6);
	ck_assert_float_eq_tol(f[1], std::log1p(600.0 / 3600), 1e-6);
	ck_assert_float_eq_tol(f[2], 1.0 / 6, 1e-6);
	ck_assert_float_eq_tol(f[3], std::log1p(1.0), 1e-6);
	ck_assert_float_eq_tol(f[4], std::log1p(1.0), 1e-6);
	ck_assert_float_eq(f[5], 0);
	ck_assert_float_eq_tol(f[9], 0.5, 1e-6);   // 4 of 8 GPUs held by the user
	ck_assert_float_eq_tol(f[13], 0.25, 1e-6); // 2 of 8 to hand out
	ck_assert_float_eq(f[14], 0);
	ck_assert_float_eq_tol(f[15], std::log1p(1.0 / (300.0 / 3600)), 1e-5);
	j.epoch_time_1gpu = 0;  // unknown: flagged, and nothing infinite
	encode_job(v, j, 0, 8, 8, f);
	ck_assert_float_eq(f[14], 1);
	for (int i = 0; i < kJobFeatures; ++i)
		ck_assert(std::isfinite(f[i]));
}
END_TEST

START_TEST(test_window_running_first_and_bounded)
{
	World w({8, 8});
	w.pending(5, 10, 1);
	w.running(7, 0, {{0, 4}});
	w.running(3, 0, {{1, 2}});
	w.pending(2, 20, 1);
	w.pending(9, 30, 1);
	ClusterView v = w.view();
	std::vector<const Job*> cands = v.pending;
	cands.insert(cands.end(), v.running.begin(), v.running.end());
	std::vector<const Job*> rest;
	EncodedWindow e = encode_window(v, cands, 16, 4, rest);
	ck_assert_uint_eq(e.rows(), 4);
	ck_assert_uint_eq(e.jobs[0]->id, 3);  // running, by id
	ck_assert_uint_eq(e.jobs[1]->id, 7);
	ck_assert_uint_eq(e.jobs[2]->id, 5);  // then pending in the given order
	ck_assert_uint_eq(e.jobs[3]->id, 2);
	ck_assert_uint_eq(rest.size(), 1);
	ck_assert_uint_eq(rest[0]->id, 9);
	ck_assert_int_eq(e.need[0], 2);
	ck_assert_int_eq(e.need[1], 4);
	ck_assert_uint_eq(e.x.size(), 4u * kJobFeatures);
	ck_assert_float_eq(e.x[5], 1);                 // row 0 running
	ck_assert_float_eq(e.x[2 * kJobFeatures + 5], 0);  // row 2 pending
}
END_TEST

START_TEST(test_decode_round_masks)
{
	// need 4,2,2,1 and 4 GPUs; order 1,0,2,3: pick 1 (4 left; all four valid, 9 > 4: a decision),
	// row 0 no longer fits, pick 2 (2 left; rows 2 and 3 valid, 3 > 2: a decision), then nothing fits.
	DecodedRound d = decode_round({4, 2, 2, 1}, 4, {1, 0, 2, 3}, 64);
	ck_assert_uint_eq(d.chosen.size(), 2);
	ck_assert_int_eq(d.chosen[0], 1);
	ck_assert_int_eq(d.chosen[1], 2);
	ck_assert_int_eq(d.left[0], 4);
	ck_assert_int_eq(d.left[1], 2);
	ck_assert_uint_eq(d.started.size(), 2);
	// Everything fits together: no decision at all, everything starts.
	DecodedRound all = decode_round({1, 1, 2}, 4, {2, 0, 1}, 64);
	ck_assert_uint_eq(all.chosen.size(), 0);
	ck_assert_uint_eq(all.started.size(), 3);
	// Once what is left fits together, the rest is not a decision: 3,1,1 in 4: pick 0 (5 > 4), then
	// rows 1 and 2 cannot both... 1 left: only one of them fits, so picking it is a decision.
	DecodedRound d2 = decode_round({3, 1, 1}, 4, {0, 1, 2}, 64);
	ck_assert_uint_eq(d2.chosen.size(), 2);
	ck_assert_int_eq(d2.chosen[1], 1);
	// The cap: at most max_decisions picks are recorded, the round still completes.
	DecodedRound capped = decode_round({1, 1, 1, 1}, 2, {3, 2, 1, 0}, 1);
	ck_assert_uint_eq(capped.chosen.size(), 1);
	ck_assert_uint_eq(capped.started.size(), 2);
}
END_TEST

START_TEST(test_save_load_round_trip)
{
	auto m = PolicyModel::create(16, 7);
	m->set_info_json("{\"note\":\"test\"}");
	const std::string p = tmp_path("rt.pt");
	ck_assert(m->save(p).is_ok());
	auto back = PolicyModel::load(p);
	ck_assert_msg(back.is_ok(), "%s", back.status().message().c_str());
	ck_assert_int_eq((*back)->info().hidden, 16);
	ck_assert_str_eq((*back)->info().info.c_str(), "{\"note\":\"test\"}");
	World w({8});
	w.pending(1, 0, 2);
	w.pending(2, 5, 4, 3);
	w.running(3, 0, {{0, 1}});
	ClusterView v = w.view();
	std::vector<const Job*> c = v.pending;
	c.insert(c.end(), v.running.begin(), v.running.end());
	std::vector<const Job*> rest;
	EncodedWindow e = encode_window(v, c, 8, 512, rest);
	std::vector<float> a, b;
	m->scores(e, a);
	(*back)->scores(e, b);
	ck_assert_uint_eq(a.size(), 3);
	for (std::size_t i = 0; i < a.size(); ++i)
		ck_assert_float_eq(a[i], b[i]);
	ck_assert_double_eq_tol(m->value(e), (*back)->value(e), 1e-7);
	std::remove(p.c_str());
}
END_TEST

START_TEST(test_versions_and_bad_files)
{
	auto m = PolicyModel::create(8, 1);
	const std::string p = tmp_path("v.pt");
	m->set_versions_for_testing(kModelFormat, kFeatureSchema + 1);
	ck_assert(m->save(p).is_ok());
	auto r = PolicyModel::load(p);
	ck_assert(!r.is_ok());
	ck_assert_msg(r.status().message().find("feature schema") != std::string::npos, "%s", r.status().message().c_str());
	ck_assert(r.status().message().find(p) != std::string::npos);
	m->set_versions_for_testing(kModelFormat + 1, kFeatureSchema);
	ck_assert(m->save(p).is_ok());
	r = PolicyModel::load(p);
	ck_assert(!r.is_ok());
	ck_assert_msg(r.status().message().find("model format") != std::string::npos, "%s", r.status().message().c_str());
	{
		std::ofstream(p, std::ios::trunc) << "this is not a model";
	}
	r = PolicyModel::load(p);
	ck_assert(!r.is_ok());
	ck_assert_msg(r.status().message().find("cannot read the model") != std::string::npos, "%s",
	              r.status().message().c_str());
	std::remove(p.c_str());
	r = PolicyModel::load(p);
	ck_assert(!r.is_ok());
	ck_assert(r.status().code() == StatusCode::kNotFound);
}
END_TEST

// A missing or mismatched model: dl2 still decides, as ModelFallback, and says why.
START_TEST(test_fallback_decides_as_heuristic)
{
	install();
	World w({8});
	w.now = 100;
	w.pending(1, 0, 8, 50);
	w.pending(2, 10, 2, 1);
	w.running(3, 0, {{0, 4}}, 20);
	for (const char* missing : {"/nonexistent/dl2.pt", ""}) {
		if (*missing == '\0') {
			// A model of another schema.
			auto m = PolicyModel::create(8, 1);
			m->set_versions_for_testing(kModelFormat, 99);
			ck_assert(m->save(tmp_path("schema.pt")).is_ok());
		}
		const std::string file = *missing ? missing : tmp_path("schema.pt");
		Config c;
		ck_assert(c.set("Policy", "dl2", "test").is_ok());
		ck_assert(c.set("ModelFile", file, "test").is_ok());
		ck_assert(c.set("ModelFallback", "srtf", "test").is_ok());
		PolicyRegistry r;
		register_builtin_policies(r);
		auto s = Scheduler::create(c, r);
		ck_assert_msg(s.is_ok(), "%s", s.status().message().c_str());
		const std::string note = (*s)->notes();
		ck_assert_msg(note.find(file) != std::string::npos && note.find("srtf instead") != std::string::npos, "%s",
		              note.c_str());
		ck_assert_str_eq((*s)->fallback().c_str(), "srtf");  // hosts label the run with it
		Config h;
		ck_assert(h.set("Policy", "dl2", "test").is_ok());
		ck_assert(h.set("OrderingPolicy", "srtf", "test").is_ok());
		auto heuristic = Scheduler::create(h, r);
		ck_assert(heuristic.is_ok());
		ck_assert_str_eq(test::render((*s)->decide(w.view())).c_str(),
		                 test::render((*heuristic)->decide(w.view())).c_str());
	}
	std::remove(tmp_path("schema.pt").c_str());
	// A learned fallback is refused with a clear message, as soon as the configuration is read
	// (config/keys.cpp; make_learned's own check stays behind it).
	Config bad;
	ck_assert(bad.set("Policy", "dl2", "test").is_ok());
	ck_assert(bad.set("ModelFile", "/nonexistent", "test").is_ok());
	const Status refused = bad.set("ModelFallback", "dl2", "test");
	ck_assert(!refused.is_ok());
	ck_assert(refused.message().find("ModelFallback: 'dl2' is a learned ordering") != std::string::npos);
}
END_TEST

// The policy's own log-probability of a sampled round (plain C++, learned.cpp) and the trainer's
// (batched libtorch, train.cpp) are two implementations of the same masks: they must agree.
START_TEST(test_log_prob_implementations_agree)
{
	World w({8, 8});
	w.now = 500;
	for (JobId id = 1; id <= 9; ++id)
		w.pending(id, static_cast<Seconds>(id), 1 + static_cast<int>(id % 4) * 2, 5 + static_cast<double>(id));
	w.running(20, 0, {{0, 6}});
	auto model = PolicyModel::create(16, 3);
	LearnedOptions o;
	o.sample = true;
	o.seed = 11;
	LearnedOrdering ord("dl2", model, o);
	StepLog rec;
	ClusterView v = w.view();
	v.recorder = &rec;
	int checked = 0;
	for (int round = 0; round < 5; ++round) {
		std::vector<const Job*> jobs = v.pending;
		jobs.insert(jobs.end(), v.running.begin(), v.running.end());
		ord.order(v, jobs);
	}
	ck_assert_uint_eq(rec.steps.size(), 5);
	Trainer t(model, TrainOptions(), 1);
	std::vector<Sample> samples;
	std::vector<double> want;
	for (PolicyStep& s : rec.steps) {
		const double lp = s.log_prob;
		Sample x;
		if (make_sample(s, 64, x)) {
			samples.push_back(std::move(x));
			want.push_back(lp);
		}
	}
	ck_assert_uint_gt(samples.size(), 0);
	t.record_log_probs(samples);
	for (std::size_t i = 0; i < samples.size(); ++i) {
		double got = 0;
		for (float x : samples[i].old_lp)
			got += x;
		ck_assert_msg(std::fabs(got - want[i]) < 1e-4, "round %zu: trainer %f, policy %f", i, got, want[i]);
		ck_assert(want[i] < 0);
		++checked;
	}
	ck_assert_int_gt(checked, 0);
}
END_TEST

// The supervised loss goes down on a teacher that prefers short jobs, and the policy learns to.
START_TEST(test_supervised_learns_teacher)
{
	World w({8});
	w.now = 0;
	for (JobId id = 1; id <= 12; ++id)
		w.pending(id, 0, 4, static_cast<double>((id * 7) % 13 + 1));
	ClusterView v = w.view();
	std::vector<const Job*> rest;
	EncodedWindow e = encode_window(v, v.pending, 8, 512, rest);
	// Teacher: shortest first.
	std::vector<int> order(e.rows());
	for (std::size_t i = 0; i < order.size(); ++i)
		order[i] = static_cast<int>(i);
	std::sort(order.begin(), order.end(), [&](int a, int b) {
		return e.jobs[static_cast<std::size_t>(a)]->epochs_total < e.jobs[static_cast<std::size_t>(b)]->epochs_total;
	});
	PolicyStep s;
	s.schema = kFeatureSchema;
	s.rows = static_cast<int>(e.rows());
	s.features = kJobFeatures;
	s.x = e.x;
	s.context = e.context;
	s.need = e.need;
	s.free_gpus = 8;
	s.order = order;
	std::vector<Sample> data(1);
	ck_assert(make_sample(s, 64, data[0]));
	ck_assert_uint_eq(data[0].chosen.size(), 2);  // 2 of 12 four-GPU jobs fit in 8
	auto model = PolicyModel::create(16, 5);
	TrainOptions to;
	to.lr = 1e-2;
	Trainer t(model, to, 5);
	const double first = t.supervised_epoch(data, false).policy_loss;
	double last = first;
	for (int i = 0; i < 150; ++i)
		last = t.supervised_epoch(data, false).policy_loss;
	ck_assert_msg(last < first * 0.5, "loss %f -> %f", first, last);
	std::vector<float> sc;
	model->scores(e, sc);
	const auto best = std::max_element(sc.begin(), sc.end()) - sc.begin();
	ck_assert_int_eq(best, order[0]);
}
END_TEST

static Suite* suite()
{
	Suite* s = suite_create("models");
	TCase* tc = tcase_create("models");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_encode_job_by_hand);
	tcase_add_test(tc, test_window_running_first_and_bounded);
	tcase_add_test(tc, test_decode_round_masks);
	tcase_add_test(tc, test_save_load_round_trip);
	tcase_add_test(tc, test_versions_and_bad_files);
	tcase_add_test(tc, test_fallback_decides_as_heuristic);
	tcase_add_test(tc, test_log_prob_implementations_agree);
	tcase_add_test(tc, test_supervised_learns_teacher);
	suite_add_tcase(s, tc);
	return s;
}

int main() { return run_suite(suite()); }
