// models/: feature encoding (jobs and units), DL2's rounds (rules, decisions, the two greedy
// implementations), the learned allocation, the model file (round trip, versions,
// corrupt and missing files), the fallback, and the two log-probability implementations agreeing.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <unordered_map>

#include "dlsched/api.h"
#include "models/decode.h"
#include "models/features.h"
#include "models/learned.h"
#include "models/policy_model.h"
#include "models/train.h"
#include "util/trusted_file.h"
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
	ck_assert_float_eq_tol(f[9], 0.5, 1e-6);    // 4 of 8 GPUs held by the user
	ck_assert_float_eq_tol(f[13], 0.25, 1e-6);  // 2 of 8 to hand out
	ck_assert_float_eq(f[14], 0);
	ck_assert_float_eq_tol(f[15], std::log1p(1.0 / (300.0 / 3600)), 1e-5);
	j.epoch_time_1gpu = 0;  // unknown: flagged, and nothing infinite
	encode_job(v, j, 0, 8, 8, f);
	ck_assert_float_eq(f[14], 1);
	for (int i = 0; i < kJobFeatures; ++i)
		ck_assert(std::isfinite(f[i]));
}
END_TEST

// A replay 120x faster than its trace, read at ModelTimeScale=120, encodes as the trace at 1; read at 1,
// its jobs look nearly done.
START_TEST(test_encode_at_a_time_scale)
{
	const double k = 120;
	auto world = [](double scale, World& w) -> std::pair<Job*, Job*> {
		w.now = 72000 / scale;
		Job& p = w.pending(1, 12000 / scale, 2, 10);
		p.epoch_time_1gpu = 7200 / scale;
		p.attained_gpu_s = 6000 / scale;
		p.restarts = 1;
		p.last_stop_time = 36000 / scale;
		p.epochs_done = 4;
		Job& r = w.running(2, 0, {{0, 2}}, 10);
		r.epoch_time_1gpu = 7200 / scale;
		r.gpus_max = 4;
		r.preempt_cost.checkpoint_write = 600 / scale;
		r.preempt_cost.resume = 900 / scale;
		return {&p, &r};
	};
	World trace({8}), replay({8});
	auto [tp, tr] = world(1, trace);
	auto [rp, rr] = world(k, replay);
	ClusterView tv = trace.view(), rv = replay.view();
	float want[kJobFeatures], got[kJobFeatures], at1[kJobFeatures];
	encode_job(tv, *tp, 2, 6, 8, want);
	encode_job(rv, *rp, 2, 6, 8, got, k);
	encode_job(rv, *rp, 2, 6, 8, at1);
	for (int i = 0; i < kJobFeatures; ++i)
		ck_assert_msg(std::fabs(want[i] - got[i]) < 1e-5,
			      "feature %s: %g at scale %g, %g in the trace", job_feature_name(i), got[i], k,
			      want[i]);
	ck_assert_float_gt(want[0], 10 * at1[0]);  // remaining hours, read at 1: 120x too few
	float uwant[kUnitFeatures], ugot[kUnitFeatures];
	encode_unit(tv, *tr, 2, 3, uwant);
	encode_unit(rv, *rr, 2, 3, ugot, k);
	for (int i = 0; i < kUnitFeatures; ++i)
		ck_assert_msg(std::fabs(uwant[i] - ugot[i]) < 1e-5,
			      "unit feature %d: %g at scale %g, %g in the trace", i, ugot[i], k, uwant[i]);
	ck_assert_float_gt(uwant[7], 0);  // the restart cost counts
}
END_TEST

START_TEST(test_encode_unit_by_hand)
{
	World w({8});
	Job& j = w.running(1, 0, {{0, 2}}, 10);  // linear: 600 s on 1 GPU, 300 s at 2, 200 s at 3
	j.gpus_min = 2;
	j.gpus_max = 4;
	j.preempt_cost.checkpoint_write = 30;
	ClusterView v = w.view();
	float f[kUnitFeatures];
	encode_unit(v, j, 2, 3, f);  // a further unit that grows it from 2 to 3 GPUs
	ck_assert_float_eq(f[0], 0);
	ck_assert_float_eq(f[1], 1);
	ck_assert_float_eq_tol(f[2], std::log2(1.5), 1e-6);
	ck_assert_float_eq_tol(f[3], std::log1p(200.0 / 3600), 1e-6);
	ck_assert_float_eq_tol(f[4], 1.0 - 200.0 / 300.0, 1e-6);  // saves a third of what is left
	ck_assert_float_eq(f[5], 1);                              // beyond what it holds: a resize
	ck_assert_float_eq(f[6], 0);
	ck_assert_float_eq_tol(f[7], std::log1p(j.preempt_cost.restart_loss() / 3600), 1e-6);
	encode_unit(v, j, 0, 2, f);  // its first unit: keeps what it holds
	ck_assert_float_eq(f[1], 0);
	ck_assert_float_eq(f[4], 0);
	ck_assert_float_eq(f[5], 0);
	ck_assert_float_eq(f[6], 1);
	for (int i = kJobFeatures; i < kRowFeatures; ++i)
		ck_assert_str_ne(job_feature_name(i), "?");
	ck_assert_str_eq(job_feature_name(kRowFeatures), "?");
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
	EncodedWindow e = encode_window(v, cands, 16, 4, rest, /*units=*/false);
	ck_assert_uint_eq(e.rows(), 4);
	ck_assert_uint_eq(e.jobs[0]->id, 3);  // running, by id
	ck_assert_uint_eq(e.jobs[1]->id, 7);
	ck_assert_uint_eq(e.jobs[2]->id, 5);  // then pending in the given order
	ck_assert_uint_eq(e.jobs[3]->id, 2);
	ck_assert_uint_eq(rest.size(), 1);
	ck_assert_uint_eq(rest[0]->id, 9);
	ck_assert_int_eq(e.need[0], 2);
	ck_assert_int_eq(e.need[1], 4);
	ck_assert_int_eq(e.end_row, -1);  // an ordering's window: first units only
	ck_assert_uint_eq(e.x.size(), 4u * kRowFeatures);
	ck_assert_float_eq(e.x[5], 1);                     // row 0 running
	ck_assert_float_eq(e.x[2 * kRowFeatures + 5], 0);  // row 2 pending
}
END_TEST

// An allocation's window: an elastic job's further units chained after its first, the end row last;
// units of one node's worth for a job whose minimum spans a node.
START_TEST(test_window_units)
{
	World w({8, 8, 8});
	Job& e = w.pending(1, 0, 2);
	e.gpus_min = 2;
	e.gpus_max = 5;  // units of 1 GPU: 3, 4, 5
	Job& big = w.pending(2, 1, 8);
	big.gpus_min = 8;
	big.gpus_max = 24;   // units of a node: 16, 24
	w.pending(3, 2, 1);  // rigid: its first unit only
	Job& held = w.running(4, 0, {{2, 2}});
	held.gpus_max = 4;
	held.requeueable = false;  // cannot be resized: no further units
	ClusterView v = w.view();
	std::vector<const Job*> cands = v.pending;
	cands.insert(cands.end(), v.running.begin(), v.running.end());
	std::vector<const Job*> rest;
	EncodedWindow x = encode_window(v, cands, 24, 512, rest, /*units=*/true);
	// Rows: 4 (running first), 1, 1+, 1+, 1+, 2, 2+, 2+, 3, end.
	ck_assert_uint_eq(x.rows(), 10);
	ck_assert_uint_eq(x.jobs[0]->id, 4);
	ck_assert_int_eq(x.unit[0], 0);
	ck_assert_uint_eq(x.jobs[1]->id, 1);
	const int want_unit[] = {0, 0, 1, 2, 3, 0, 1, 2, 0, -1};
	const int want_need[] = {2, 2, 1, 1, 1, 8, 8, 8, 1, 0};
	const int want_after[] = {-1, -1, 1, 2, 3, -1, 5, 6, -1, -1};
	const int want_size[] = {2, 2, 3, 4, 5, 8, 16, 24, 1, 0};
	for (std::size_t r = 0; r < x.rows(); ++r) {
		ck_assert_int_eq(x.unit[r], want_unit[r]);
		ck_assert_int_eq(x.need[r], want_need[r]);
		ck_assert_int_eq(x.after[r], want_after[r]);
		ck_assert_int_eq(x.size[r], want_size[r]);
	}
	ck_assert_int_eq(x.end_row, 9);
	ck_assert(x.jobs[9] == nullptr);
	ck_assert_float_eq(x.x[9 * kRowFeatures + kJobFeatures], 1);  // the end row says so
	ck_assert_uint_eq(x.x.size(), 10u * kRowFeatures);
	// A teacher's sizes as picks: first units by rank, then further units by the time they save,
	// the end row last.
	std::unordered_map<JobId, int> sizes{{4, 2}, {1, 4}, {3, 1}, {2, 8}};
	std::unordered_map<JobId, std::size_t> rank{{4, 0}, {3, 1}, {1, 2}, {2, 3}};
	const std::vector<int> picks = picks_for_sizes(v, x, sizes, rank);
	const std::vector<int> want{0, 8, 1, 5, 2, 3, 9};
	ck_assert_msg(picks == want, "picks differ");
}
END_TEST

// The rules of a round (decode.h): previous unit first, fits, the end row only once no first unit
// fits; decisions are the picks with a choice.
START_TEST(test_round_rules_and_decisions)
{
	// Rows: 0 job A first (2), 1 A's further unit (1, after 0), 2 job B first (3), 3 end.
	const std::vector<int> need{2, 1, 3, 0}, unit{0, 1, 0, -1}, after{-1, 0, -1, -1};
	const RoundRows rows{need, unit, after, 4};
	Round r(rows);
	ck_assert(r.valid(0));
	ck_assert(!r.valid(1));  // its first unit is not picked yet
	ck_assert(r.valid(2));
	ck_assert(!r.valid(3));  // B (3 GPUs) still fits: no ending the round
	ck_assert(r.pick(0));
	ck_assert(r.valid(1));
	ck_assert(!r.valid(2));  // 2 left
	ck_assert(r.valid(3));   // nothing's first unit fits: ending is a choice
	ck_assert_uint_eq(r.valid_count(), 2);
	ck_assert(!r.pick(2));
	ck_assert(r.pick(3));
	ck_assert(r.ended());
	ck_assert(!r.valid(1));
	// Decoded: pick 0 among {0, 2} (a decision), then the end among {1, end} (a decision).
	DecodedRound d = decode_round(rows, {0, 3}, 64);
	ck_assert_uint_eq(d.chosen.size(), 2);
	ck_assert_int_eq(d.chosen[0], 0);
	ck_assert_int_eq(d.chosen[1], 3);
	ck_assert_int_eq(d.left[1], 2);
	ck_assert_int_eq(d.seq[1], 1);
	ck_assert_int_eq(d.pos[0], 0);
	ck_assert_int_eq(d.pos[1], 2);  // never picked
	// Forced picks are not decisions: one job that fits (no ending while it fits), then the end
	// (nothing else is valid).
	const std::vector<int> n1{3, 0}, u1{0, -1}, a1{-1, -1};
	DecodedRound f = decode_round(RoundRows{n1, u1, a1, 3}, {0, 1}, 64);
	ck_assert_uint_eq(f.chosen.size(), 0);
	ck_assert_int_eq(f.pos[1], 1);
	// An invalid pick ends the replay: A's further unit before A.
	DecodedRound bad = decode_round(rows, {1, 0}, 64);
	ck_assert_uint_eq(bad.chosen.size(), 0);
	ck_assert_int_eq(bad.pos[0], 0);  // the number of picks replayed (none): never picked
}
END_TEST

// Greedy play has two implementations (a heap, and the sampling loop's argmax): same picks.
START_TEST(test_greedy_implementations_agree)
{
	Rng rng(5);
	for (int trial = 0; trial < 200; ++trial) {
		std::vector<int> need, unit, after;
		const int jobs = 1 + static_cast<int>(rng.below(8));
		for (int j = 0; j < jobs; ++j) {
			need.push_back(1 + static_cast<int>(rng.below(4)));
			unit.push_back(0);
			after.push_back(-1);
			const int extra = static_cast<int>(rng.below(3));
			for (int k = 1; k <= extra; ++k) {
				after.push_back(static_cast<int>(need.size()) - 1);
				need.push_back(1);
				unit.push_back(k);
			}
		}
		need.push_back(0);
		unit.push_back(-1);
		after.push_back(-1);
		std::vector<float> scores;
		for (std::size_t i = 0; i < need.size(); ++i)
			scores.push_back(static_cast<float>(rng.below(5)));  // ties on purpose
		const RoundRows rows{need, unit, after, static_cast<int>(rng.below(12))};
		double lp = 0;
		const std::vector<int> heap = play_round(rows, scores, nullptr, nullptr);
		const std::vector<int> loop = play_round(rows, scores, nullptr, &lp);
		ck_assert_msg(heap == loop, "trial %d: the heap and the loop disagree", trial);
		ck_assert(lp <= 1e-9);
		// Every pick was valid when made.
		Round replay(rows);
		for (int p : heap)
			ck_assert(replay.pick(static_cast<std::size_t>(p)));
	}
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
	EncodedWindow e = encode_window(v, c, 8, 512, rest, /*units=*/false);
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
	ck_assert_msg(r.status().message().find("feature schema") != std::string::npos, "%s",
		      r.status().message().c_str());
	ck_assert(r.status().message().find(p) != std::string::npos);
	m->set_versions_for_testing(kModelFormat + 1, kFeatureSchema);
	ck_assert(m->save(p).is_ok());
	r = PolicyModel::load(p);
	ck_assert(!r.is_ok());
	ck_assert_msg(r.status().message().find("model format") != std::string::npos, "%s",
		      r.status().message().c_str());
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
		ck_assert_msg(note.find(file) != std::string::npos &&
				      note.find("srtf instead") != std::string::npos,
			      "%s", note.c_str());
		ck_assert(((*s)->fallback() == "srtf"));  // hosts label the run with it
		Config h;
		ck_assert(h.set("Policy", "dl2", "test").is_ok());
		ck_assert(h.set("OrderingPolicy", "srtf", "test").is_ok());
		ck_assert(h.set("AllocationPolicy", "mckp", "test")
				  .is_ok());  // the learned allocation's fallback
		auto heuristic = Scheduler::create(h, r);
		ck_assert(heuristic.is_ok());
		// Held in locals: ck_assert_str_eq keeps the pointers past the full expression.
		const std::string learned = test::render((*s)->decide(w.view()));
		const std::string plain = test::render((*heuristic)->decide(w.view()));
		ck_assert_str_eq(learned.c_str(), plain.c_str());
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

namespace {

// The pending jobs' order a scheduler made from dlsched.conf `text` gives through the C ABI, after
// `choice` (DLSCHED_GUARD_*, or 0: left as created): ids joined by spaces.
std::string capi_order(const std::string& text, int choice, int* guard_choice = nullptr)
{
	const std::string conf = tmp_path("guard.conf");
	{
		std::ofstream f(conf);
		f << text << "\nModelProfiles=" << DLSCHED_PROFILES << "\n";
	}
	dlsched_scheduler_t* s = nullptr;
	dlsched_error_t err;
	ck_assert_msg(dlsched_scheduler_create(conf.c_str(), &s, &err) == DLSCHED_OK, "%s", err.message);
	std::remove(conf.c_str());
	if (choice)
		ck_assert_msg(dlsched_scheduler_set_guard_choice(s, choice, &err) == DLSCHED_OK, "%s",
			      err.message);
	if (guard_choice)
		*guard_choice = dlsched_scheduler_guard_choice(s);
	// One full 8-GPU node: the pending jobs all wait, in the policy's order.
	dlsched_node_view_t n{};
	n.struct_size = sizeof(n);
	n.name = "n1";
	n.gpus_total = 8;
	n.gpus_free = 0;
	n.partition = "train";
	n.up = 1;
	const int gpus[] = {1, 8, 2, 4, 1, 8};
	std::vector<dlsched_job_view_t> jobs(6);
	for (std::size_t i = 0; i < jobs.size(); ++i) {
		dlsched_job_view_t& j = jobs[i];
		j = dlsched_job_view_t{};
		j.struct_size = sizeof(j);
		j.job_id = static_cast<std::uint32_t>(i + 1);
		j.user = "alice";
		j.model = "cifar10";
		j.submit_time = static_cast<double>(i);
		j.gpus_requested = gpus[i];
		j.epochs_total = 10 + 7 * static_cast<double>(i % 3);
		j.epoch_time_1gpu = 60;
		j.time_limit = 100000;
		j.last_stop_time = -1;
		j.requeueable = 1;
	}
	dlsched_cluster_view_t v{};
	v.struct_size = sizeof(v);
	v.now = 100;
	v.nodes = &n;
	v.node_count = 1;
	v.jobs = jobs.data();
	v.job_count = jobs.size();
	dlsched_decisions_t* d = nullptr;
	ck_assert_msg(dlsched_scheduler_decide(s, &v, &d, &err) == DLSCHED_OK, "%s", err.message);
	std::size_t count = 0;
	const std::uint32_t* order = dlsched_decisions_order(d, &count);
	std::string out;
	for (std::size_t i = 0; i < count; ++i)
		out += (i ? " " : "") + std::to_string(order[i]);
	dlsched_decisions_free(d);
	dlsched_scheduler_destroy(s);
	return out;
}

}  // namespace

// The guard in the C ABI (version 10): a guarded dl2 scheduler decides with GuardPolicy= until it is
// told the learned policy may, then exactly as the unguarded learned one; LearnedGuard=no has none.
START_TEST(test_guard_choice_through_the_c_abi)
{
	install();
	const std::string model = tmp_path("guard.pt");
	ck_assert(PolicyModel::create(16, 7)->save(model).is_ok());
	const std::string dl2 = "Policy=dl2\nModelFile=" + model + "\nGuardPolicy=fifo";
	int choice = -1;
	const std::string unguarded = capi_order(dl2 + "\nLearnedGuard=no", 0, &choice);
	ck_assert_int_eq(choice, DLSCHED_GUARD_NONE);
	const std::string fifo = capi_order("Policy=fifo", 0);
	ck_assert_str_eq(fifo.c_str(), "1 2 3 4 5 6");
	// The test can fail: the learned order is not fifo's.
	ck_assert_msg(unguarded != fifo, "the model orders as fifo: %s", unguarded.c_str());
	ck_assert_str_eq(capi_order(dl2, 0, &choice).c_str(), fifo.c_str());
	ck_assert_int_eq(choice, DLSCHED_GUARD_HEURISTIC);
	ck_assert_str_eq(capi_order(dl2, DLSCHED_GUARD_LEARNED, &choice).c_str(), unguarded.c_str());
	ck_assert_int_eq(choice, DLSCHED_GUARD_LEARNED);
	ck_assert_str_eq(capi_order(dl2, DLSCHED_GUARD_HEURISTIC, &choice).c_str(), fifo.c_str());
	ck_assert_int_eq(choice, DLSCHED_GUARD_HEURISTIC);
	std::remove(model.c_str());
}
END_TEST

// In slurmctld (file trust on): a model file others could write, or owned by neither root nor
// SlurmUser, is refused as a missing one would be: the error names the file and the fix, and dl2
// decides as its ModelFallback=. Off (the tools), the same file loads.
START_TEST(test_untrusted_model_file_is_refused)
{
	install();
	const std::string p = tmp_path("trust.pt");
	ck_assert(PolicyModel::create(8, 1)->save(p).is_ok());
	ck_assert_int_eq(chmod(p.c_str(), 0666), 0);
	ck_assert(PolicyModel::load(p).is_ok());
	const std::uint32_t me = static_cast<std::uint32_t>(getuid());
	trust_files_owned_by(me);
	auto r = PolicyModel::load(p);
	ck_assert(!r.is_ok());
	ck_assert_msg(r.status().message() ==
			      p +
				      ": model file refused: writable by others than its owner; a "
				      "model that orders every user's jobs must be a regular file owned by "
				      "root or SlurmUser and writable by nobody else (chown root " +
				      p + "; chmod go-w " + p + ")",
		      "%s", r.status().message().c_str());
	Config c;
	ck_assert(c.set("Policy", "dl2", "test").is_ok());
	ck_assert(c.set("ModelFile", p, "test").is_ok());
	ck_assert(c.set("ModelFallback", "srtf", "test").is_ok());
	PolicyRegistry reg;
	register_builtin_policies(reg);
	auto s = Scheduler::create(c, reg);
	ck_assert_msg(s.is_ok(), "%s", s.status().message().c_str());
	ck_assert(((*s)->fallback() == "srtf"));
	const std::string note = (*s)->notes();
	ck_assert_msg(note.find(p + ": model file refused") != std::string::npos &&
			      note.find("srtf instead") != std::string::npos,
		      "%s", note.c_str());
	ck_assert_int_eq(chmod(p.c_str(), 0644), 0);
	ck_assert(PolicyModel::load(p).is_ok());
	// Owned by someone who is neither root nor the trusted user.
	if (me == 0)
		ck_assert_int_eq(chown(p.c_str(), 65534, 65534), 0);
	else
		trust_files_owned_by(me + 4242);
	r = PolicyModel::load(p);
	ck_assert(!r.is_ok());
	const std::string owner = std::to_string(me == 0 ? 65534 : me);
	ck_assert_msg(r.status().message().find("model file refused: owned by uid " + owner +
						", neither root nor SlurmUser") != std::string::npos,
		      "%s", r.status().message().c_str());
	trust_any_file();
	ck_assert(PolicyModel::load(p).is_ok());
	std::remove(p.c_str());
}
END_TEST

// The policy's own log-probability of a sampled round (plain C++, learned.cpp) and the trainer's
// (batched libtorch, train.cpp) are two implementations of the same masks: they must agree.
START_TEST(test_log_prob_implementations_agree)
{
	World w({8, 8});
	w.now = 500;
	for (JobId id = 1; id <= 9; ++id) {
		Job& j = w.pending(id, static_cast<Seconds>(id), 1 + static_cast<int>(id % 4) * 2,
				   5 + static_cast<double>(id));
		if (id % 2)
			j.gpus_max = j.gpus_min + 3;  // elastic: further units
	}
	w.running(20, 0, {{0, 6}});
	auto model = PolicyModel::create(16, 3);
	LearnedOptions o;
	o.sample = true;
	o.seed = 11;
	LearnedAllocation alloc(model, o);
	PolicyRegistry reg;
	register_builtin_policies(reg);
	auto pack = reg.make_placement("pack", Config());
	ck_assert(pack.is_ok());
	StepLog rec;
	ClusterView v = w.view();
	v.recorder = &rec;
	FreeMap free(v);
	for (const Job* r : v.running)
		free.release(r->placement);
	std::vector<const Job*> cands = v.pending;
	cands.insert(cands.end(), v.running.begin(), v.running.end());
	for (int round = 0; round < 5; ++round) {
		const AllocationInput in{v, cands, **pack, free, true};
		Plan plan;
		alloc.allocate(in, plan);
		ck_assert_uint_gt(plan.size(), 0);
	}
	ck_assert_uint_eq(rec.steps.size(), 5);
	Trainer t(model, TrainOptions(), 1);
	std::vector<Sample> samples;
	std::vector<double> want;
	for (PolicyStep& s : rec.steps) {
		const double lp = s.log_prob;
		Sample x;
		if (make_sample(s, 1000, x)) {
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
		ck_assert_msg(std::fabs(got - want[i]) < 1e-3, "round %zu: trainer %f, policy %f", i, got,
			      want[i]);
		ck_assert(want[i] < 0);
	}
}
END_TEST

// The supervised loss goes down on a teacher that prefers short jobs and grows the elastic one, and
// the policy learns both: its greedy round starts the shortest job first and grows the elastic job
// (the learned allocation resizes).
START_TEST(test_supervised_learns_teacher)
{
	World w({8});
	w.now = 0;
	for (JobId id = 1; id <= 12; ++id)
		w.pending(id, 0, 2, static_cast<double>((id * 7) % 13 + 1));
	Job& grow = w.running(20, 0, {{0, 2}}, 40);
	grow.gpus_min = 2;
	grow.gpus_max = 4;
	ClusterView v = w.view();
	std::vector<const Job*> cands = v.pending;
	cands.push_back(&grow);
	std::vector<const Job*> rest;
	EncodedWindow e = encode_window(v, cands, 8, 512, rest, /*units=*/true);
	// Teacher: the elastic job grows to 4, then the shortest jobs first (2 of 12 fit in what is left).
	std::vector<const Job*> by_length = v.pending;
	std::sort(by_length.begin(), by_length.end(),
		  [](const Job* a, const Job* b) { return a->epochs_total < b->epochs_total; });
	std::unordered_map<JobId, int> sizes{{20, 4}};
	std::unordered_map<JobId, std::size_t> rank{{20, 0}};
	for (std::size_t i = 0; i < by_length.size(); ++i) {
		rank[by_length[i]->id] = i + 1;
		if (i < 2)
			sizes[by_length[i]->id] = 2;
	}
	std::vector<int> picks = picks_for_sizes(v, e, sizes, rank);
	EncodedWindow copy = e;
	PolicyStep s = make_step(v, std::move(copy), picks);
	std::vector<Sample> data(1);
	ck_assert(make_sample(s, 64, data[0]));
	ck_assert_uint_ge(data[0].chosen.size(), 3);
	auto model = PolicyModel::create(16, 5);
	TrainOptions to;
	to.lr = 1e-2;
	Trainer t(model, to, 5);
	const double first = t.supervised_epoch(data, false).policy_loss;
	double last = first;
	for (int i = 0; i < 200; ++i)
		last = t.supervised_epoch(data, false).policy_loss;
	ck_assert_msg(last < first * 0.5, "loss %f -> %f", first, last);
	std::vector<float> sc;
	model->scores(e, sc);
	const std::vector<int> played =
		play_round(RoundRows{e.need, e.unit, e.after, 8}, sc, nullptr, nullptr);
	ck_assert_msg(played == picks, "the trained model's round differs from the teacher's");
	// Through the allocation: the elastic job is resized to 4, the shortest job starts.
	LearnedAllocation alloc(model, LearnedOptions());
	PolicyRegistry reg;
	register_builtin_policies(reg);
	auto pack = reg.make_placement("pack", Config());
	FreeMap free(v);
	free.release(grow.placement);
	Plan plan;
	alloc.allocate(AllocationInput{v, cands, **pack, free, true}, plan);
	bool grown = false, shortest = false;
	for (const Assignment& a : plan) {
		grown = grown || (a.job->id == 20 && a.gpus == 4);
		shortest = shortest || a.job->id == by_length[0]->id;
	}
	ck_assert(grown);
	ck_assert(shortest);
}
END_TEST

static Suite* suite()
{
	Suite* s = suite_create("models");
	TCase* tc = tcase_create("models");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_encode_job_by_hand);
	tcase_add_test(tc, test_encode_unit_by_hand);
	tcase_add_test(tc, test_encode_at_a_time_scale);
	tcase_add_test(tc, test_window_running_first_and_bounded);
	tcase_add_test(tc, test_window_units);
	tcase_add_test(tc, test_round_rules_and_decisions);
	tcase_add_test(tc, test_greedy_implementations_agree);
	tcase_add_test(tc, test_save_load_round_trip);
	tcase_add_test(tc, test_versions_and_bad_files);
	tcase_add_test(tc, test_fallback_decides_as_heuristic);
	tcase_add_test(tc, test_untrusted_model_file_is_refused);
	tcase_add_test(tc, test_log_prob_implementations_agree);
	tcase_add_test(tc, test_supervised_learns_teacher);
	tcase_add_test(tc, test_guard_choice_through_the_c_abi);
	suite_add_tcase(s, tc);
	return s;
}

int main()
{
	return run_suite(suite());
}
