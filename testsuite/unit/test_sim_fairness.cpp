// dlsched-sim's fairness figures on hand-computed timelines: the accounts' ledger (owed, held,
// borrowed, below quota beyond the timeout), Jain's index, the finish-time fairness baseline (jobs
// alone on their quota), the quotas --quotas gives.
#include <cmath>
#include <fstream>
#include <unistd.h>

#include "check_main.h"
#include "contribs/sim/fairness.h"
#include "temp_path.h"

using namespace dlsched;
using namespace dlsched::sim;

namespace {

Workload two_accounts()
{
	Workload w;
	auto add = [&](JobId id, const char* account, int gpus, double runtime) {
		Job j;
		j.id = id;
		j.account = account;
		j.gpus_requested = j.gpus_min = j.gpus_max = gpus;
		w.jobs.push_back(j);
		w.trace_runtime_s.push_back(runtime);
	};
	add(1, "a", 4, 100);  // a: 400 + 300 = 700 GPU-s
	add(2, "b", 1, 200);  // b: 200 + 100 = 300 GPU-s
	add(3, "a", 1, 300);
	add(4, "b", 1, 100);
	return w;
}

}  // namespace

// Quotas a = 4, b = 2; a shortfall counts once it has lasted 100 s.
//   [0, 50)    demand 4, 0  held 0, 0  a short by 4 since 0: not counted yet (until 100)
//   [50, 150)  demand 4, 2  held 2, 2  a short by 2, still since 0: counted from 100, 2 x 50 = 100
//   [150, 200) demand 4, 2  held 4, 2  nobody short (a's shortfall ends)
//   [200, 260) demand 2, 6  held 0, 8  a short by 2 since 200 (until 300: not counted); b borrows 6
// a: owed 4x50 + 4x100 + 4x50 + 2x60 = 920, held 2x100 + 4x50 = 400, below 100.
// b: owed 2x100 + 2x50 + 2x60 = 420, held 2x100 + 2x50 + 8x60 = 780, borrowed 6x60 = 360.
START_TEST(test_ledger_on_a_hand_computed_timeline)
{
	AccountLedger l({4, 2}, 100);
	l.advance(0, 50, {4, 0}, {0, 0});
	l.advance(50, 150, {4, 2}, {2, 2});
	l.advance(150, 200, {4, 2}, {4, 2});
	l.advance(200, 260, {2, 6}, {0, 8});
	const auto& t = l.totals();
	ck_assert_double_eq_tol(t[0].demanded_quota_gpu_s, 920, 1e-9);
	ck_assert_double_eq_tol(t[0].held_gpu_s, 400, 1e-9);
	ck_assert_double_eq_tol(t[0].below_quota_gpu_s, 100, 1e-9);
	ck_assert_double_eq_tol(t[0].borrowed_gpu_s, 0, 1e-9);
	ck_assert_double_eq_tol(t[1].demanded_quota_gpu_s, 420, 1e-9);
	ck_assert_double_eq_tol(t[1].held_gpu_s, 780, 1e-9);
	ck_assert_double_eq_tol(t[1].below_quota_gpu_s, 0, 1e-9);
	ck_assert_double_eq_tol(t[1].borrowed_gpu_s, 360, 1e-9);
	// Jain's index of held / owed: x = 400/920, 780/420; (sum x)^2 / (2 sum x^2) = 0.721949 (by hand).
	ck_assert_double_eq_tol(jain_index({400.0 / 920, 780.0 / 420}), 0.7219488659, 1e-9);
	ck_assert_double_eq_tol(jain_index({3, 3, 3}), 1, 1e-12);
	ck_assert_double_eq_tol(jain_index({1, 0, 0, 0}), 0.25, 1e-12);
}
END_TEST

// Alone on a quota of 4 GPUs, first come first served:
//   job 1 (t=0, 4 GPUs, 100 s): 0-100, JCT 100
//   job 2 (t=10, 2 GPUs, 50 s): waits for job 1, 100-150, JCT 140
//   job 3 (t=20, 2 GPUs, 30 s): 100-130 beside job 2, JCT 110
//   job 4 (t=30, 8 GPUs, 40 s): on all 4 GPUs, 80 s, once jobs 2 and 3 end: 150-230, JCT 200
// mean 137.5. A quota below one GPU: infinite (no baseline).
START_TEST(test_alone_on_the_quota)
{
	std::vector<AloneJob> jobs{{30, 8, 40}, {0, 4, 100}, {10, 2, 50}, {20, 2, 30}};
	ck_assert_double_eq_tol(alone_avg_jct(jobs, 4), 137.5, 1e-9);
	ck_assert(std::isinf(alone_avg_jct(jobs, 0.5)));
	ck_assert_double_eq_tol(alone_avg_jct({}, 4), 0, 1e-12);
}
END_TEST

// Proportional: a has 700 of 1000 GPU-s: 10 GPUs -> 7 and 3; 4 GPUs -> 2.8 and 1.2: 2 + 1 whole,
// the GPU left to the largest remainder (a's 0.8): 3 and 1.
START_TEST(test_proportional_quotas)
{
	const Workload w = two_accounts();
	auto q = proportional_quotas(w, {}, 10);
	ck_assert_uint_eq(q.size(), 2);
	ck_assert_str_eq(q[0].name.c_str(), "a");
	ck_assert_double_eq_tol(q[0].quota_gpus, 7, 1e-12);
	ck_assert_double_eq_tol(q[1].quota_gpus, 3, 1e-12);
	q = proportional_quotas(w, {}, 4);
	ck_assert_double_eq_tol(q[0].quota_gpus, 3, 1e-12);
	ck_assert_double_eq_tol(q[1].quota_gpus, 1, 1e-12);
	ck_assert_double_eq_tol(q[0].shares, 3, 1e-12);
}
END_TEST

START_TEST(test_quota_file)
{
	const Workload w = two_accounts();
	const std::string p = dlsched::test::temp_path("test_sim_fairness", "quotas.csv");
	{
		std::ofstream f(p);
		f << "account,gpus\n# the teams\na, 6\n\nc,1  # no jobs here\n";
	}
	auto q = load_quotas(p, w, 8);
	ck_assert_msg(q.is_ok(), "%s", q.status().message().c_str());
	ck_assert_uint_eq(q->size(), 3);  // a, b (no quota), c
	ck_assert_double_eq_tol((*q)[0].quota_gpus, 6, 1e-12);
	ck_assert_double_eq_tol((*q)[1].quota_gpus, 0, 1e-12);
	ck_assert_double_eq_tol((*q)[2].quota_gpus, 1, 1e-12);
	struct Bad {
		const char* text;
		const char* says;
	} bad[] = {
		{"a,6\nb\n", ":2: 'b' is not `account,gpus`"},
		{"a,six\n", ":1: 'six' is not a number of GPUs >= 0"},
		{"a,-1\n", ":1: '-1' is not a number of GPUs >= 0"},
		{"a,1\na,2\n", ":2: account 'a' is listed twice (first at line 1)"},
		{",2\n", ":1: no account name"},
		{"a,6\nb,3\n", "sum to 9.000000 GPUs, more than the cluster's 8"},
	};
	for (const Bad& b : bad) {
		{
			std::ofstream f(p);
			f << b.text;
		}
		auto r = load_quotas(p, w, 8);
		ck_assert_msg(!r.is_ok(), "%s accepted", b.text);
		ck_assert_msg(r.status().message().find(b.says) != std::string::npos, "%s: %s", b.text,
			      r.status().message().c_str());
	}
	ck_assert(!load_quotas(p + ".missing", w, 8).is_ok());
	// The test's own file and directory go (every run left a /tmp/test_sim_fairness.* behind).
	std::remove(p.c_str());
	rmdir(p.substr(0, p.rfind('/')).c_str());
}
END_TEST

int main()
{
	Suite* s = suite_create("sim_fairness");
	TCase* tc = tcase_create("core");
	tcase_add_test(tc, test_ledger_on_a_hand_computed_timeline);
	tcase_add_test(tc, test_alone_on_the_quota);
	tcase_add_test(tc, test_proportional_quotas);
	tcase_add_test(tc, test_quota_file);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
