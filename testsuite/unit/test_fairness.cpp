// FairnessPolicy= on hand-built views: quota lending and reclaim (the cheapest victims, exactly the
// owner's quota back, nothing from a job that cannot be requeued, ties), the fair-share factor.
#include <algorithm>
#include <cmath>
#include <utility>

#include "check_main.h"
#include "policy/fairness.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::test;

namespace {

// The decisions without the kAdmission waits FairnessPolicy=quota explains waiting jobs with.
Decisions plan_of(Decisions d)
{
	d.actions.erase(std::remove_if(d.actions.begin(), d.actions.end(),
				       [](const Action& a) { return a.kind == ActionKind::kAdmission; }),
			d.actions.end());
	return d;
}

// The reason of the kAdmission wait of `job` ("" when none).
std::string reason_of(const Decisions& d, JobId job)
{
	for (const Action& a : d.actions)
		if (a.kind == ActionKind::kAdmission && a.job == job && a.admission == AdmissionAction::kWait)
			return a.reason;
	return "";
}

// Two 8-GPU nodes; accounts a and b, each guaranteed 8 GPUs. Account a borrowed the whole cluster:
// jobs 1-4, 4 GPUs each (1, 2 on n0; 3, 4 on n1), 1000 epochs (long: none ends within the reclaim
// timeout). Each one's stopping cost per GPU (checkpoint write + resume) is given.
struct Borrowed {
	World w{{8, 8}};
	std::vector<Account> accounts{{"a", 8, 1, 0}, {"b", 8, 1, 0}};

	explicit Borrowed(std::vector<double> loss_per_gpu)
	{
		for (JobId id = 1; id <= 4; ++id) {
			Job& j = w.running(id, 0, {{static_cast<NodeIndex>((id - 1) / 2), 4}}, 1000);
			j.account = "a";
			j.preempt_cost.checkpoint_write = loss_per_gpu[id - 1] / 2;
			j.preempt_cost.resume = loss_per_gpu[id - 1] / 2;
		}
	}
	Job& owner(JobId id, int gpus, Seconds submit = 0)
	{
		Job& j = w.pending(id, submit, gpus, 1000);
		j.account = "b";
		return j;
	}
	Decisions decisions(const std::string& preset = "fifo", const std::string& timeout = "0")
	{
		ClusterView v = w.view();
		v.accounts = Span<const Account>(accounts.data(), accounts.size());
		return make_scheduler(preset, {{"FairnessPolicy", "quota"}, {"QuotaReclaimTimeout", timeout}})
			->decide(v);
	}
	// The plan: the waiting jobs' reasons (test_wait_reasons) left out.
	std::string decide(const std::string& preset = "fifo", const std::string& timeout = "0")
	{
		return render(plan_of(decisions(preset, timeout)));
	}
};

void expect(const std::string& got, const char* want)
{
	ck_assert_msg(got == want, "got \"%s\", want \"%s\"", got.c_str(), want);
}

}  // namespace

// b returns with two 4-GPU jobs: it gets its 8 GPUs back from a's two cheapest jobs (2, then 4),
// a keeps its own 8; b's third job only borrows, and borrowed GPUs are not taken for it.
START_TEST(test_owner_gets_exactly_its_quota_from_cheapest)
{
	Borrowed c({100, 10, 50, 20});
	c.owner(5, 4);
	c.owner(6, 4);
	c.owner(7, 4);
	const std::string got = c.decide();
	expect(got, "requeue 2; requeue 4; prio 5=3; prio 6=2; prio 7=1");
}
END_TEST

// A job larger than what is left of its account's quota borrows and does not count against it: b's
// 8-GPU job (after its first 4) borrows, and b's later 4-GPU job is within quota: b gets its 8 GPUs
// back from a's two cheapest jobs (2, then 4), and its 4-GPU jobs go ahead of the 8-GPU one.
START_TEST(test_a_large_job_does_not_keep_a_smaller_one_out_of_quota)
{
	Borrowed c({100, 10, 50, 20});
	c.owner(5, 4);
	c.owner(6, 8);
	c.owner(7, 4);
	expect(c.decide(), "requeue 2; requeue 4; prio 5=3; prio 7=2; prio 6=1");
}
END_TEST

// The same under the other baseline (backfill), and no reclaim at all without FairnessPolicy=quota.
START_TEST(test_reclaim_under_backfill_and_none_without_quota)
{
	Borrowed c({100, 10, 50, 20});
	c.owner(5, 4);
	expect(c.decide("slurm-backfill"), "requeue 2; prio 5=1");
	ClusterView v = c.w.view();
	v.accounts = Span<const Account>(c.accounts.data(), c.accounts.size());
	expect(render(make_scheduler("fifo")->decide(v)), "prio 5=1");
}
END_TEST

// The cheapest job cannot be requeued: the next cheapest go instead, and nothing when none can.
START_TEST(test_nothing_from_a_job_that_cannot_be_requeued)
{
	Borrowed c({100, 10, 50, 20});
	c.w.jobs[1].requeueable = false;  // job 2
	c.owner(5, 4);
	c.owner(6, 4);
	expect(c.decide(), "requeue 4; requeue 3; prio 5=2; prio 6=1");

	Borrowed none({100, 10, 50, 20});
	for (Job& j : none.w.jobs)
		j.requeueable = false;
	none.owner(5, 4);
	expect(none.decide(), "prio 5=1");
}
END_TEST

// Equal losses: the victim holding fewer GPUs, then the one started last, then the lower id.
START_TEST(test_ties)
{
	Borrowed c({10, 10, 10, 10});
	c.w.jobs[0].start_time = 0;
	c.w.jobs[1].start_time = 100;
	c.w.jobs[2].start_time = 100;
	c.w.jobs[3].start_time = 50;
	c.owner(5, 4);
	c.owner(6, 4);
	expect(c.decide(), "requeue 2; requeue 3; prio 5=2; prio 6=1");
}
END_TEST

// Within QuotaReclaimTimeout= of its wait, a running job predicted to end by then is awaited: job 2
// ends in 150 s (10 epochs of 60 s on 4 GPUs). With a shorter timeout, the cheapest goes.
START_TEST(test_reclaim_timeout_awaits_jobs_ending_soon)
{
	Borrowed c({100, 50, 50, 20});
	c.w.jobs[1].epochs_total = 10;
	c.owner(5, 4);
	expect(c.decide("fifo", "300"), "prio 5=1");
	expect(c.decide("fifo", "100"), "requeue 4; prio 5=1");
	// Its wait counts: submitted 250 s ago, 50 s of a 300 s timeout are left.
	c.w.now = 250;
	expect(c.decide("fifo", "300"), "requeue 4; prio 5=1");
}
END_TEST

// A preemptive ordering takes borrowed GPUs back through its own plan: b's job, longer than every
// job of a (srtf alone would keep them), goes ahead of a's borrowing jobs; a keeps its quota.
START_TEST(test_preemptive_ordering_plans_the_reclaim)
{
	Borrowed c({100, 10, 50, 20});
	c.owner(5, 8);
	c.w.jobs.back().epochs_total = 100000;
	const std::string got = c.decide("srtf");
	ck_assert_msg(got.find("start 5") != std::string::npos, "%s", got.c_str());
	int requeues = 0;
	for (std::size_t p = got.find("requeue"); p != std::string::npos; p = got.find("requeue", p + 1))
		++requeues;
	ck_assert_int_eq(requeues, 2);
	// Without quota, srtf keeps a's shorter jobs running.
	ClusterView v = c.w.view();
	v.accounts = Span<const Account>(c.accounts.data(), c.accounts.size());
	expect(render(make_scheduler("srtf")->decide(v)), "prio 5=1");
}
END_TEST

// Under a preemptive ordering, b's job within quota goes ahead of a's borrowing jobs only once its
// wait and the time borrowed GPUs take to come back (the slowest checkpoint among them: job 1's
// 50 s) reach QuotaReclaimTimeout=300: before that srtf's own order stands (a's shorter jobs keep
// running); from 250 s on, the plan takes them back.
START_TEST(test_preemptive_ordering_waits_until_the_quota_is_owed)
{
	Borrowed c({100, 10, 50, 20});
	c.owner(5, 8);
	c.w.jobs.back().epochs_total = 100000;
	expect(c.decide("srtf", "300"), "prio 5=1");
	c.w.now = 249;
	expect(c.decide("srtf", "300"), "prio 5=1");
	c.w.now = 250;
	const std::string got = c.decide("srtf", "300");
	ck_assert_msg(got.find("start 5") != std::string::npos, "%s", got.c_str());
	// Waited since its last stop, not since its submission.
	c.w.jobs.back().last_stop_time = 200;
	expect(c.decide("srtf", "300"), "prio 5=1");
}
END_TEST

// The guarantee is the account's: once b's first job is owed (its wait and job 1's 50-s checkpoint
// reach QuotaReclaimTimeout=300), b's job submitted 10 s ago, within b's quota too, does not wait
// its own 300 s: both start, and a gives back the 8 GPUs it borrowed (two requeues).
START_TEST(test_owed_quota_is_the_accounts)
{
	auto starts_and_requeues = [](const std::string& got) {
		int starts = 0, requeues = 0;
		for (std::size_t p = got.find("start"); p != std::string::npos; p = got.find("start", p + 1))
			++starts;
		for (std::size_t p = got.find("requeue"); p != std::string::npos;
		     p = got.find("requeue", p + 1))
			++requeues;
		return std::make_pair(starts, requeues);
	};
	for (const char* preset : {"srtf", "mckp"}) {
		Borrowed c({100, 10, 50, 20});
		c.owner(5, 4, 0).epochs_total = 100000;
		c.owner(6, 4, 240).epochs_total = 100000;
		c.w.now = 249;  // neither owed yet
		expect(c.decide(preset, "300"), "prio 5=2; prio 6=1");
		c.w.now = 250;
		const std::string got = c.decide(preset, "300");
		ck_assert_msg(starts_and_requeues(got) == std::make_pair(2, 2), "%s: %s", preset,
			      got.c_str());
	}
}
END_TEST

// Under an elastic allocation (mckp) too, b's job within quota starts before a's shorter borrowing
// one, which srtf alone starts first, once its quota is owed (QuotaReclaimTimeout=0: at once; 300:
// not before it has waited 300 s, a's job being pending, nothing to wait for).
START_TEST(test_elastic_allocation_serves_quota_first)
{
	World w({4});
	std::vector<Account> acc{{"a", 0, 1, 0}, {"b", 4, 1, 0}};
	w.pending(1, 0, 4, 1).account = "a";
	w.pending(2, 1, 4, 100).account = "b";
	ClusterView v = w.view();
	v.accounts = Span<const Account>(acc.data(), acc.size());
	auto quota = [](const char* timeout) {
		return make_scheduler("mckp",
				      {{"FairnessPolicy", "quota"}, {"QuotaReclaimTimeout", timeout}});
	};
	expect(render(plan_of(quota("0")->decide(v))), "start 2 [0:4]; prio 1=1");
	expect(render(plan_of(quota("300")->decide(v))), "start 1 [0:4]; prio 2=1");
	w.now = 301;
	v = w.view();
	v.accounts = Span<const Account>(acc.data(), acc.size());
	expect(render(plan_of(quota("300")->decide(v))), "start 2 [0:4]; prio 1=1");
	expect(render(make_scheduler("mckp")->decide(v)), "start 1 [0:4]; prio 2=1");
}
END_TEST

// Quota orders work within a priority class (PriorityQos=high): b's job within its quota does not
// stop a's cheapest borrowing job when it is of a higher class; it takes the next cheapest instead.
START_TEST(test_reclaim_keeps_the_priority_classes)
{
	Borrowed c({100, 10, 50, 20});
	c.w.jobs[1].qos = "high";  // job 2, the cheapest
	c.owner(5, 4);
	ClusterView v = c.w.view();
	v.accounts = Span<const Account>(c.accounts.data(), c.accounts.size());
	auto sched = make_scheduler(
		"fifo", {{"FairnessPolicy", "quota"}, {"QuotaReclaimTimeout", "0"}, {"PriorityQos", "high"}});
	expect(render(plan_of(sched->decide(v))), "requeue 4; prio 5=1");
	c.w.jobs[1].qos = "";
	v = c.w.view();
	v.accounts = Span<const Account>(c.accounts.data(), c.accounts.size());
	expect(render(plan_of(sched->decide(v))), "requeue 2; prio 5=1");
}
END_TEST

// The same under an elastic allocation: b's job within its quota does not take the GPUs the plan
// gives c's borrowing job of a higher class, and does once the borrowing job is of its class.
START_TEST(test_elastic_quota_keeps_the_priority_classes)
{
	World w({8});
	std::vector<Account> acc{{"b", 8, 1, 0}, {"c", 0, 1, 0}};
	w.pending(1, 0, 4, 1000).account = "b";
	Job& high = w.pending(2, 1, 8, 1000);
	high.account = "c";
	high.qos = "high";
	auto decide = [&]() {
		ClusterView v = w.view();
		v.accounts = Span<const Account>(acc.data(), acc.size());
		return render(plan_of(make_scheduler("mckp", {{"FairnessPolicy", "quota"},
							      {"QuotaReclaimTimeout", "0"},
							      {"PriorityQos", "high"}})
					      ->decide(v)));
	};
	expect(decide(), "start 2 [0:8]; prio 1=1");
	high.qos = "";
	expect(decide(), "start 1 [0:4]; prio 2=1");
}
END_TEST

// Slurm's classic factor 2^(-U/S): equal shares, a used 3/4 of all usage: 2^-1.5; b 2^-0.5; an
// account without shares 0. fairshare puts b's later job first.
START_TEST(test_fairshare_factor_and_order)
{
	std::vector<Account> acc{{"a", 0, 1, 300}, {"b", 0, 1, 100}, {"c", 0, 0, 0}};
	const auto f = fairshare_factors(Span<const Account>(acc.data(), acc.size()));
	ck_assert_double_eq_tol(f.at("a"), std::pow(2.0, -1.5), 1e-12);
	ck_assert_double_eq_tol(f.at("b"), std::pow(2.0, -0.5), 1e-12);
	ck_assert_double_eq_tol(f.at("c"), 0.0, 1e-12);

	World w({4});
	w.running(1, 0, {{0, 4}}).account = "a";
	w.pending(2, 10, 4).account = "a";
	w.pending(3, 20, 4).account = "b";
	ClusterView v = w.view();
	v.accounts = Span<const Account>(acc.data(), acc.size());
	expect(render(make_scheduler("slurm-fairshare")->decide(v)), "prio 3=2; prio 2=1");
	expect(render(make_scheduler("slurm-backfill")->decide(v)), "prio 2=2; prio 3=1");
	// No usage yet: equal factors, arrival order.
	acc[0].usage_gpu_s = acc[1].usage_gpu_s = 0;
	expect(render(make_scheduler("slurm-fairshare")->decide(v)), "prio 2=2; prio 3=1");
}
END_TEST

// Why each waiting job waits (hosts show it as squeue's reason): b's first job has a reclaim under way
// (job 2 checkpointing for it); b's second is within b's quota and waits for borrowed GPUs; b's
// third and a's new job are over their accounts' quotas. While a borrowing job predicted to end
// within QuotaReclaimTimeout= is awaited, b's jobs wait for borrowed GPUs.
START_TEST(test_wait_reasons)
{
	Borrowed c({100, 10, 50, 20});
	c.owner(5, 4);
	c.owner(6, 4);
	c.owner(7, 4);
	c.w.pending(8, 0, 4, 1000).account = "a";
	c.w.pending(9, 0, 4, 1000);  // no account: no reason
	Decisions d = c.decisions();
	expect(render(plan_of(d)), "requeue 2; requeue 4; prio 5=5; prio 6=4; prio 7=3; prio 8=2; prio 9=1");
	expect(reason_of(d, 5),
	       "quota reclaim for account 'b': borrowed GPUs of job(s) 2 are being checkpointed and requeued "
	       "for it");
	expect(reason_of(d, 6),
	       "quota reclaim for account 'b': borrowed GPUs of job(s) 4 are being checkpointed and requeued "
	       "for it");
	expect(reason_of(d, 7),
	       "over account 'b''s quota: borrows idle GPUs only (the account holds 0 GPUs; quota 8)");
	expect(reason_of(d, 8),
	       "over account 'a''s quota: borrows idle GPUs only (the account holds 16 GPUs; quota 8)");
	expect(reason_of(d, 9), "");
	// Job 2 ends in 150 s (10 epochs), within QuotaReclaimTimeout=300: awaited, nothing reclaimed.
	c.w.jobs[1].epochs_total = 10;
	d = c.decisions("fifo", "300");
	expect(render(plan_of(d)), "prio 5=5; prio 6=4; prio 7=3; prio 8=2; prio 9=1");
	expect(reason_of(d, 5),
	       "within account 'b''s quota: waiting for borrowed GPUs (0 of its 8 GPUs held; jobs ending "
	       "within QuotaReclaimTimeout=300 s of its wait are awaited, then the cheapest borrowing jobs "
	       "are requeued)");
}
END_TEST

START_TEST(test_unknown_fairness_is_an_error)
{
	// Named where it was set, with the known names.
	Config c;
	ck_assert(c.set("FairnessPolicy", "drf", "x.conf:3").is_ok());
	PolicyRegistry r;
	register_builtin_policies(r);
	auto s = Scheduler::create(c, r);
	ck_assert(!s.is_ok());
	expect(s.status().message(),
	       "x.conf:3: FairnessPolicy: unknown fairness policy 'drf' (known: none, quota, fairshare)");
}
END_TEST

int main()
{
	Suite* s = suite_create("fairness");
	TCase* tc = tcase_create("core");
	tcase_add_test(tc, test_owner_gets_exactly_its_quota_from_cheapest);
	tcase_add_test(tc, test_a_large_job_does_not_keep_a_smaller_one_out_of_quota);
	tcase_add_test(tc, test_reclaim_under_backfill_and_none_without_quota);
	tcase_add_test(tc, test_nothing_from_a_job_that_cannot_be_requeued);
	tcase_add_test(tc, test_ties);
	tcase_add_test(tc, test_reclaim_timeout_awaits_jobs_ending_soon);
	tcase_add_test(tc, test_preemptive_ordering_plans_the_reclaim);
	tcase_add_test(tc, test_elastic_allocation_serves_quota_first);
	tcase_add_test(tc, test_reclaim_keeps_the_priority_classes);
	tcase_add_test(tc, test_elastic_quota_keeps_the_priority_classes);
	tcase_add_test(tc, test_preemptive_ordering_waits_until_the_quota_is_owed);
	tcase_add_test(tc, test_owed_quota_is_the_accounts);
	tcase_add_test(tc, test_fairshare_factor_and_order);
	tcase_add_test(tc, test_wait_reasons);
	tcase_add_test(tc, test_unknown_fairness_is_an_error);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
