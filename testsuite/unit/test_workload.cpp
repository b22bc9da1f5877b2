// Model catalog from the bundled profiles, workload readers (good and bad input) and the builder.
#include <fstream>  // before check.h, whose fail() macro breaks <ios>

#include <check.h>

#include "check_main.h"

#include <cmath>
#include <string>

#include "temp_path.h"
#include "workload/workload.h"

using namespace dlsched;

namespace {

const ModelCatalog& catalog()
{
	static ModelCatalog c = [] {
		auto r = load_model_catalog(DLSCHED_PROFILES);
		ck_assert_msg(r.is_ok(), "%s", r.status().message().c_str());
		return r.value();
	}();
	return c;
}

std::string data(const char* name)
{
	return std::string(DLSCHED_TEST_DATA) + "/" + name;
}

Result<Workload> load(const char* name, BuildOptions b = {}, ReadOptions r = {})
{
	return load_workload(data(name), r, b, catalog());
}

void expect_error(const char* name, const std::string& want, ReadOptions r = {})
{
	auto w = load(name, {}, r);
	ck_assert_msg(!w.is_ok(), "%s accepted", name);
	const std::string got = w.status().message();
	ck_assert_msg(got == data(name) + ":" + want, "got \"%s\", want \"%s\"", got.c_str(), want.c_str());
}

}  // namespace

START_TEST(catalog_matches_the_measurements)
{
	const ModelCatalog& c = catalog();
	ck_assert_int_eq(c.size(), 6);
	const int cifar = c.find("cifar10");
	ck_assert_int_ge(cifar, 0);
	// Computed by hand from contribs/profiles/pollux/cifar10/placements.csv at local_bsz 129:
	// speedup = K x step_time('1') / step_time(placement); (4 GPUs, 2 nodes) averages '13' and '22'.
	ck_assert_double_eq_tol(c.speedup(cifar, 1, 1), 1.0, 1e-12);
	ck_assert_double_eq_tol(c.speedup(cifar, 2, 1), 1.802260166352381, 1e-9);
	ck_assert_double_eq_tol(c.speedup(cifar, 4, 1), 3.758879897100826, 1e-9);
	ck_assert_double_eq_tol(c.speedup(cifar, 4, 2), 2.3689259199652497, 1e-9);
	// Gavel: ResNet-18 (batch 128) on a K80 runs at 1.80653 / 17.9949 of a V100.
	ck_assert_double_eq_tol(c.gpu_speed(cifar, "k80"), 1.80653 / 17.9949, 1e-6);
	ck_assert_double_eq(c.gpu_speed(cifar, "v100"), 1.0);
	ck_assert_double_eq(c.gpu_speed(cifar, "unknown-type"), 1.0);
	// Unknown model: linear.
	ck_assert_double_eq(c.speedup(-1, 5, 3), 5.0);
	// Guarantees for every model: more GPUs never slower, more nodes never faster.
	for (int m = 0; m < c.size(); ++m)
		for (int g = 2; g <= 64; ++g) {
			ck_assert(c.speedup(m, g, 1) >= c.speedup(m, g - 1, 1));
			ck_assert(c.speedup(m, g, 2) <= c.speedup(m, g, 1) + 1e-12);
		}
}
END_TEST

START_TEST(missing_profiles_are_an_error_naming_the_directory)
{
	auto r = load_model_catalog("/nonexistent/profiles");
	ck_assert(!r.is_ok());
	ck_assert(r.status().message().rfind("/nonexistent/profiles: profile directory not found", 0) == 0);
}
END_TEST

START_TEST(philly_is_read_sorted_and_rebased)
{
	auto w = load("philly_small.csv");
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert_int_eq(static_cast<int>(w->format), static_cast<int>(WorkloadFormat::kPhilly));
	ck_assert_uint_eq(w->jobs.size(), 4);
	// Sorted by submit: 103 (5 s) first, rebased to 0; ids renumbered 1..4 in that order.
	ck_assert_double_eq(w->jobs[0].submit_time, 0);
	ck_assert_int_eq(w->jobs[0].gpus_requested, 8);
	ck_assert_double_eq(w->jobs[1].submit_time, 5);
	ck_assert_uint_eq(w->jobs[3].id, 4);
	ck_assert_str_eq(w->jobs[0].user.c_str(), "vc-bb");
	// The runtime alone at the requested GPUs is the trace's duration.
	ck_assert_double_eq_tol(w->trace_runtime_s[0], 90000, 1e-6);
	for (std::size_t i = 0; i < w->jobs.size(); ++i) {
		const Job& j = w->jobs[i];
		const int nodes = (j.gpus_requested + 7) / 8;
		const double runtime = j.epochs_total * j.epoch_time_1gpu /
				       catalog().speedup(j.model, j.gpus_requested, nodes);
		ck_assert_double_eq_tol(runtime, w->trace_runtime_s[i], 1e-6);
		ck_assert(!j.elastic());
		ck_assert(!j.has_deadline());
		// Time limit: 2 x runtime, rounded up to the minute.
		ck_assert_double_eq(j.time_limit, std::ceil(2 * w->trace_runtime_s[i] / 60) * 60);
	}
	// GPU-time buckets: 8 GPUs x 25 h is large (imagenet or bert); 1 GPU x 10 min is small.
	const std::string big = catalog().at(w->jobs[0].model).name;
	ck_assert(big == "imagenet" || big == "bert");
	const std::string small = catalog().at(w->jobs[3].model).name;
	ck_assert(small == "cifar10" || small == "ncf");
}
END_TEST

START_TEST(bad_lines_are_errors_or_counted_when_skipped)
{
	// Line 3, character column 33: where the bad field starts.
	expect_error("philly_bad.csv", "3:33: num_gpus 'two' is not an integer");
	ReadOptions skip;
	skip.skip_bad_lines = true;
	auto w = load("philly_bad.csv", {}, skip);
	ck_assert(w.is_ok());
	ck_assert_uint_eq(w->jobs.size(), 2);
	ck_assert_uint_eq(w->skipped_lines, 1);
	// A missing length has no field to point at: the line's first column.
	expect_error("native_nolength.csv",
		     "2:1: neither epoch_s nor duration_s is given (one says how long the job runs)");
	expect_error("native_bad.csv",
		     "1:36: unknown column 'colour' (known: id, submit_s, gpus, min_gpus, max_gpus, "
		     "model, epochs, epoch_s, duration_s, deadline_s, time_limit_s, qos, partition, "
		     "user, name)");
	// The unknown model's column is where its key starts in the JSON line.
	expect_error("native_bad.jsonl",
		     "2:28: unknown model 'nosuchmodel' (known: bert, cifar10, deepspeech2, imagenet, "
		     "ncf, yolov3)");
	// ... and with skip_bad_lines it is skipped and counted like any bad line.
	auto unknown = load("native_bad.jsonl", {}, skip);
	ck_assert(unknown.is_ok());
	ck_assert_uint_eq(unknown->jobs.size(), 1);
	ck_assert_uint_eq(unknown->skipped_lines, 1);
	// Pollux: a GPU count that is not a number (column 17), then an empty application (column 11).
	expect_error("pollux_bad.csv", "3:17: num_replicas 'four' is not an integer");
	auto pollux = load("pollux_bad.csv", {}, skip);
	ck_assert(pollux.is_ok());
	ck_assert_uint_eq(pollux->jobs.size(), 1);
	ck_assert_uint_eq(pollux->skipped_lines, 2);
	// CSV structure: an unterminated quote, a record shorter than the header.
	expect_error("native_quote.csv", "3:5: unterminated quoted field");
	expect_error("native_fields.csv", "3:9: expected 5 fields as in the header, found 4");
	expect_error("native_syntax.jsonl", "2:25: unexpected token near ','");
	auto missing = load_workload("/nonexistent.csv", {}, {}, catalog());
	ck_assert(!missing.is_ok());
	ck_assert_str_eq(missing.status().message().c_str(), "/nonexistent.csv: cannot open workload file");
}
END_TEST

// Numbers no trace may hold (counts beyond int, negative counts, 1e300, inf and nan durations, epochs
// without bound) and lengths that contradict each other are errors naming file:line:column and the
// range, in every format (doc/workload-format.md, "Limits").
START_TEST(out_of_range_and_conflicting_fields_are_errors)
{
	const char* philly = "job_id,submit_time,submit_s,duration_s,num_gpus,vc\n";
	const char* native = "submit_s,gpus,model,epochs,epoch_s,duration_s\n";
	const std::string gpus = "is out of range: a job asks for 1 to 65536 GPUs";
	const std::string philly_s = "is out of range: durations are 1 to 1e8 seconds (about 3 years)";
	const struct {
		const char* name;
		std::string text;
		std::string want;  // after "<file>:"
	} cases[] = {
		{"int.csv", std::string(philly) + "1,x,0,600,3000000000,aa\n",
		 "2:11: num_gpus '3000000000' " + gpus},
		{"neg.csv", std::string(philly) + "1,x,0,600,-4,aa\n", "2:11: num_gpus '-4' " + gpus},
		{"ll.csv", std::string(philly) + "1,x,0,600,99999999999999999999,aa\n",
		 "2:11: num_gpus '99999999999999999999' " + gpus},
		{"big.csv", std::string(philly) + "1,x,0,1e300,1,aa\n",
		 "2:7: duration_s '1e300' " + philly_s},
		{"inf.csv", std::string(philly) + "1,x,0,inf,1,aa\n", "2:7: duration_s 'inf' " + philly_s},
		{"nan.csv", std::string(philly) + "1,x,0,nan,1,aa\n", "2:7: duration_s 'nan' " + philly_s},
		{"over.csv", std::string(philly) + "1,x,0,1e400,1,aa\n",
		 "2:7: duration_s '1e400' " + philly_s},
		{"submit.csv", std::string(philly) + "1,x,-5,600,1,aa\n",
		 "2:5: submit_s '-5' is out of range: submit times are 0 to 1e10 seconds"},
		{"pollux.csv", "name,time,application,num_replicas,batch_size\nj,0,cifar10,70000,128\n",
		 "2:13: num_replicas '70000' " + gpus},
		{"epochs.csv", std::string(native) + "0,1,cifar10,1e9,30,\n",
		 "2:13: epochs '1e9' is out of range: give more than 0 and at most 1e6 epochs"},
		{"deadline.csv", "submit_s,gpus,model,epochs,epoch_s,deadline_s\n0,1,cifar10,1,30,-inf\n",
		 "2:18: deadline_s '-inf' is out of range: give seconds, more than 0 and at most 1e8 (about "
		 "3 years)"},
		// Each factor in range, their product not.
		{"product.csv", std::string(native) + "0,1,cifar10,1e6,1e7,\n",
		 "2:17: epochs x epoch_s = 1e+06 x 1e+07 = 1e+13 s is out of range: give seconds, more than "
		 "0 and at "
		 "most 1e8 (about 3 years)"},
		{"conflict.csv", std::string(native) + "0,1,cifar10,10,30,700\n",
		 "2:19: duration_s 700 disagrees with epochs x epoch_s = 10 x 30 = 300 s by more than 1%: "
		 "give "
		 "epoch_s or duration_s, not both, or make them agree"},
		{"gpus.jsonl",
		 R"({"submit_s": 0, "gpus": 1e12, "model": "ncf", "epochs": 1, "epoch_s": 5})"
		 "\n",
		 "1:17: gpus 1e+12 " + gpus},
		{"conflict.jsonl",
		 R"({"submit_s": 0, "gpus": 1, "model": "ncf", "epochs": 2, "epoch_s": 5, "duration_s": 100})"
		 "\n",
		 "1:71: duration_s 100 disagrees with epochs x epoch_s = 2 x 5 = 10 s by more than 1%: give "
		 "epoch_s "
		 "or duration_s, not both, or make them agree"},
	};
	for (const auto& c : cases) {
		const std::string path = test::temp_path("test_workload", c.name);
		std::ofstream(path) << c.text;
		auto w = load_workload(path, {}, {}, catalog());
		ck_assert_msg(!w.is_ok(), "%s accepted", c.name);
		const std::string got = w.status().message();
		ck_assert_msg(got == path + ":" + c.want, "%s: got \"%s\", want \"%s\"", c.name, got.c_str(),
			      c.want.c_str());
	}
	// Within 1% the two lengths agree (rounding): epochs x epoch_s is the length.
	const std::string agree = test::temp_path("test_workload", "agree.csv");
	std::ofstream(agree) << native << "0,1,cifar10,10,30,302\n";
	auto w = load_workload(agree, {}, {}, catalog());
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert_double_eq_tol(w->trace_runtime_s[0], 300, 1e-9);
}
END_TEST

START_TEST(native_csv_and_json_lines)
{
	auto w = load("native_small.csv");
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert_uint_eq(w->jobs.size(), 2);
	const Job& a = w->jobs[0];
	ck_assert_int_eq(a.gpus_min, 2);
	ck_assert_int_eq(a.gpus_max, 8);
	ck_assert(a.elastic());
	ck_assert_double_eq(a.deadline, 1000);
	ck_assert_str_eq(a.qos.c_str(), "normal");
	// epoch_s is at the requested 4 GPUs: one reference GPU is speedup(cifar10, 4) times slower.
	ck_assert_double_eq_tol(a.epoch_time_1gpu, 30 * 3.758879897100826, 1e-6);
	ck_assert_double_eq_tol(w->trace_runtime_s[0], 300, 1e-6);
	const Job& b = w->jobs[1];
	ck_assert_str_eq(b.partition.c_str(), "train");
	ck_assert_double_eq(b.epochs_total, 2);
	ck_assert_double_eq_tol(b.epoch_time_1gpu, 100, 1e-9);  // 1 GPU: epoch_s as given

	auto j = load("native_small.jsonl");
	ck_assert_msg(j.is_ok(), "%s", j.status().message().c_str());
	ck_assert_uint_eq(j->jobs.size(), 2);
	ck_assert_str_eq(j->jobs[0].user.c_str(), "carol");
	ck_assert_double_eq_tol(j->trace_runtime_s[0], 60, 1e-6);
	ck_assert_double_eq_tol(j->trace_runtime_s[1], 100, 1e-6);

	auto p = load("pollux_small.csv");
	ck_assert_msg(p.is_ok(), "%s", p.status().message().c_str());
	ck_assert_int_eq(p->jobs[1].gpus_requested, 4);
	ck_assert_double_eq(p->jobs[1].submit_time, 100);  // rebased: first job at 0
}
END_TEST

START_TEST(builder_is_seeded_and_its_options_work)
{
	const std::string philly =
		std::string(DLSCHED_PROFILES) + "/../traces/philly/philly_2017-10-02_1000.csv";
	BuildOptions b;
	auto a1 = load_workload(philly, {}, b, catalog());
	auto a2 = load_workload(philly, {}, b, catalog());
	ck_assert(a1.is_ok() && a2.is_ok());
	int differ = 0;
	for (std::size_t i = 0; i < a1->jobs.size(); ++i) {
		ck_assert_int_eq(a1->jobs[i].model, a2->jobs[i].model);
		ck_assert_double_eq(a1->jobs[i].epoch_time_1gpu, a2->jobs[i].epoch_time_1gpu);
	}
	b.seed = 2;
	auto c = load_workload(philly, {}, b, catalog());
	for (std::size_t i = 0; i < a1->jobs.size(); ++i)
		differ += a1->jobs[i].model != c->jobs[i].model;
	ck_assert_int_gt(differ, 100);

	BuildOptions e;
	e.elastic_fraction = 0.5;
	e.deadline_fraction = 0.3;
	e.load_scale = 2;
	auto w = load_workload(philly, {}, e, catalog());
	std::size_t elastic = 0, deadlines = 0;
	for (std::size_t i = 0; i < w->jobs.size(); ++i) {
		const Job& j = w->jobs[i];
		elastic += j.elastic();
		if (j.has_deadline()) {
			++deadlines;
			ck_assert_double_eq_tol(j.deadline, j.submit_time + 1.5 * w->trace_runtime_s[i],
						1e-6);
		}
		if (j.elastic()) {
			ck_assert_int_eq(j.gpus_min, 1);
			ck_assert_int_eq(j.gpus_max, 2 * j.gpus_requested);
		}
		// Load x2: every submit time halves; models do not change with the other options.
		ck_assert_double_eq_tol(j.submit_time, a1->jobs[i].submit_time / 2, 1e-9);
		ck_assert_int_eq(j.model, a1->jobs[i].model);
	}
	ck_assert_int_gt(static_cast<int>(elastic), 450);
	ck_assert_int_lt(static_cast<int>(elastic), 550);
	ck_assert_int_gt(static_cast<int>(deadlines), 250);
	ck_assert_int_lt(static_cast<int>(deadlines), 350);

	// Drawn slacks (0.8:2.0), deadline jobs elastic, QoS "deadline" for them.
	BuildOptions d;
	d.deadline_fraction = 0.5;
	d.deadline_slack = 0.8;
	d.deadline_slack_max = 2.0;
	d.deadline_elastic = true;
	d.elastic_max_factor = 4;
	auto dw = load_workload(philly, {}, d, catalog());
	ck_assert(dw.is_ok());
	double lo = 1e9, hi = 0;
	std::size_t with = 0;
	for (std::size_t i = 0; i < dw->jobs.size(); ++i) {
		const Job& j = dw->jobs[i];
		if (!j.has_deadline()) {
			ck_assert(!j.elastic());
			ck_assert(j.qos.empty());
			continue;
		}
		++with;
		const double slack = (j.deadline - j.submit_time) / dw->trace_runtime_s[i];
		lo = std::min(lo, slack);
		hi = std::max(hi, slack);
		ck_assert_str_eq(j.qos.c_str(), "deadline");
		ck_assert_int_eq(j.gpus_min, 1);
		ck_assert_int_eq(j.gpus_max, std::min(ModelCatalog::kMaxGpus, 4 * j.gpus_requested));
	}
	ck_assert_int_gt(static_cast<int>(with), 400);
	ck_assert_double_ge(lo, 0.8 - 1e-9);
	ck_assert_double_le(hi, 2.0 + 1e-9);
	ck_assert_double_lt(lo, 0.85);  // uniform over 500 draws reaches both ends
	ck_assert_double_gt(hi, 1.95);
}
END_TEST

// --deadline-slack's one parser (dlsched-sim and dlsched-replay): S or LO:HI within [0.05, 1000].
START_TEST(deadline_slack_is_s_or_lo_hi)
{
	BuildOptions b;
	ck_assert(parse_deadline_slack("2", b).is_ok());
	ck_assert_double_eq(b.deadline_slack, 2);
	ck_assert_double_eq(b.deadline_slack_max, 2);
	ck_assert(parse_deadline_slack("0.5:3", b).is_ok());
	ck_assert_double_eq(b.deadline_slack, 0.5);
	ck_assert_double_eq(b.deadline_slack_max, 3);
	for (const char* bad : {"0.01", "3:2", "x", "1:", ":2", "1:2000", "", "nan"}) {
		const Status st = parse_deadline_slack(bad, b);
		const std::string want =
			std::string("'") + bad + "' is not S or LO:HI with 0.05 <= LO <= HI <= 1000";
		ck_assert_msg(!st.is_ok(), "%s accepted", bad);
		ck_assert_str_eq(st.message().c_str(), want.c_str());
	}
	ck_assert_double_eq(b.deadline_slack, 0.5);  // a refused value leaves it as it was
}
END_TEST

int main()
{
	Suite* s = suite_create("workload");
	TCase* tc = tcase_create("workload");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, catalog_matches_the_measurements);
	tcase_add_test(tc, deadline_slack_is_s_or_lo_hi);
	tcase_add_test(tc, missing_profiles_are_an_error_naming_the_directory);
	tcase_add_test(tc, philly_is_read_sorted_and_rebased);
	tcase_add_test(tc, bad_lines_are_errors_or_counted_when_skipped);
	tcase_add_test(tc, out_of_range_and_conflicting_fields_are_errors);
	tcase_add_test(tc, native_csv_and_json_lines);
	tcase_add_test(tc, builder_is_seeded_and_its_options_work);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
