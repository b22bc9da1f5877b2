// Scheduler::decide(): how a plan becomes actions, independent of any real policy. Test-only policies
// registered in a private registry return fixed plans, so each case states exactly what must happen.
#include <check.h>

#include "check_main.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "policy/scheduler.h"

using namespace dlsched;

namespace {

// ---- A small world: 2 nodes x 4 GPUs, jobs owned by the fixture ----
struct World {
	std::vector<Node> nodes;
	std::vector<Job> jobs;
	ModelCatalog models;

	World()
	{
		for (NodeIndex i = 0; i < 2; ++i) {
			Node n;
			n.index = i;
			n.name = "n" + std::to_string(i + 1);
			n.gpus_total = n.gpus_free = 4;
			n.partition = "train";
			nodes.push_back(n);
		}
	}
	Job& pending(JobId id, Seconds submit, int gpus)
	{
		Job j;
		j.id = id;
		j.submit_time = submit;
		j.gpus_requested = j.gpus_min = j.gpus_max = gpus;
		jobs.push_back(j);
		return jobs.back();
	}
	Job& running(JobId id, Seconds submit, std::vector<NodeShare> where)
	{
		Job& j = pending(id, submit, 0);
		j.state = JobState::kRunning;
		j.placement = where;
		for (const NodeShare& s : where) {
			j.gpus_allocated += s.gpus;
			nodes[s.node].gpus_free -= s.gpus;
		}
		j.gpus_requested = j.gpus_min = j.gpus_max = j.gpus_allocated;
		return j;
	}
	ClusterView view()
	{
		ClusterView v;
		v.nodes = Span<const Node>(nodes.data(), nodes.size());
		v.models = &models;
		for (const Job& j : jobs)
			(j.running() ? v.running : v.pending).push_back(&j);
		return v;
	}
};

// ---- Test-only policies ----
// Orders by job id descending (so that tests can tell ordering from submit order).
struct ReverseIdOrdering : Ordering {
	bool preemptive_;
	explicit ReverseIdOrdering(bool p) : preemptive_(p) {}
	const char* name() const override { return "reverse-id"; }
	bool preemptive() const override { return preemptive_; }
	void order(const ClusterView&, std::vector<const Job*>& jobs) const override
	{
		sort_by_key(jobs, [](const Job& j) { return -static_cast<double>(j.id); });
	}
};

// Returns the plan stored in a global table: job id -> placement. Jobs not in the table are left out.
std::map<JobId, std::vector<NodeShare>> g_plan;
struct FixedAllocation : Allocation {
	const char* name() const override { return "fixed"; }
	void allocate(const AllocationInput& in, Plan& plan) const override
	{
		for (const Job* j : in.ordered) {
			auto it = g_plan.find(j->id);
			if (it == g_plan.end())
				continue;
			Assignment a;
			a.job = j;
			a.placement = it->second;
			for (const NodeShare& s : a.placement)
				a.gpus += s.gpus;
			plan.push_back(a);
		}
		if (!in.reconsider_running)
			for (const Job* r : in.view.running)
				if (!g_plan.count(r->id))
					plan.push_back({r, r->gpus_allocated, r->placement});
	}
};

// Places nothing, except where a test asks: then the first nodes with enough free GPUs, in order.
bool g_place = false;
struct FirstFitPlacement : Placement {
	const char* name() const override { return "first-fit"; }
	bool place(const ClusterView& view, const Job& job, int gpus, const FreeMap& free,
		   std::vector<NodeShare>& out) const override
	{
		if (!g_place)
			return false;
		out.clear();
		int left = gpus;
		for (NodeIndex n = 0; n < view.nodes.size() && left > 0; ++n) {
			const int take = std::min(left, free.free(n));
			if (take > 0 && free.eligible(job, n)) {
				out.push_back({n, take});
				left -= take;
			}
		}
		if (left > 0)
			out.clear();
		return left == 0;
	}
};
struct AdmitEven : Admission {
	const char* name() const override { return "admit-even"; }
	AdmissionVerdict admit(const ClusterView&, const Job& j) const override
	{
		return {j.id % 2 == 0, "odd"};
	}
};
struct AdmitAll : Admission {
	const char* name() const override { return "all"; }
	AdmissionVerdict admit(const ClusterView&, const Job&) const override { return {}; }
};
// Preempts every candidate offered, and records what it was offered.
std::vector<JobId> g_offered;
struct TakeAll : Preemption {
	const char* name() const override { return "take-all"; }
	VictimChoice select_victims(const PreemptionInput& in) const override
	{
		for (const Job* j : in.candidates)
			g_offered.push_back(j->id);
		VictimChoice c;
		for (const Job* j : in.candidates)
			c.victims.push_back({j, -1});
		return c;
	}
};
struct NoPreemption : Preemption {
	const char* name() const override { return "none"; }
	VictimChoice select_victims(const PreemptionInput&) const override { return {}; }
};
struct NoLoaning : Loaning {
	const char* name() const override { return "none"; }
	void plan(const ClusterView&, std::vector<Action>&) const override {}
};

PolicyRegistry test_registry()
{
	PolicyRegistry r;
	r.add_ordering("reverse-id", "", [](const Config&) -> Result<std::unique_ptr<Ordering>> {
		return std::unique_ptr<Ordering>(new ReverseIdOrdering(false));
	});
	r.add_ordering("reverse-id-preemptive", "", [](const Config&) -> Result<std::unique_ptr<Ordering>> {
		return std::unique_ptr<Ordering>(new ReverseIdOrdering(true));
	});
	r.add_allocation("fixed", "", [](const Config&) -> Result<std::unique_ptr<Allocation>> {
		return std::unique_ptr<Allocation>(new FixedAllocation());
	});
	r.add_placement("first-fit", "", [](const Config&) -> Result<std::unique_ptr<Placement>> {
		return std::unique_ptr<Placement>(new FirstFitPlacement());
	});
	r.add_admission("all", "", [](const Config&) -> Result<std::unique_ptr<Admission>> {
		return std::unique_ptr<Admission>(new AdmitAll());
	});
	r.add_admission("admit-even", "", [](const Config&) -> Result<std::unique_ptr<Admission>> {
		return std::unique_ptr<Admission>(new AdmitEven());
	});
	r.add_preemption("none", "", [](const Config&) -> Result<std::unique_ptr<Preemption>> {
		return std::unique_ptr<Preemption>(new NoPreemption());
	});
	r.add_preemption("take-all", "", [](const Config&) -> Result<std::unique_ptr<Preemption>> {
		return std::unique_ptr<Preemption>(new TakeAll());
	});
	r.add_loaning("none", "", [](const Config&) -> Result<std::unique_ptr<Loaning>> {
		return std::unique_ptr<Loaning>(new NoLoaning());
	});
	SchedulerSpec spec;
	spec.ordering = "reverse-id";
	spec.allocation = "fixed";
	spec.placement = "first-fit";
	spec.admission = "all";
	spec.preemption = "none";
	spec.loaning = "none";
	r.add_preset("test", "", spec);
	return r;
}

std::unique_ptr<Scheduler> make_scheduler(const std::vector<std::pair<std::string, std::string>>& keys)
{
	Config c;
	ck_assert(c.set("Policy", "test", "test").is_ok());
	for (const auto& kv : keys)
		ck_assert_msg(c.set(kv.first, kv.second, "test").is_ok(), "set %s", kv.first.c_str());
	PolicyRegistry r = test_registry();
	auto s = Scheduler::create(c, r);
	ck_assert_msg(s.is_ok(), "%s", s.status().message().c_str());
	return std::move(s).value();
}

// Compact rendering of actions, e.g. "requeue 3; start 5 [0:2]; prio 4=2; prio 1=1".
std::string render(const Decisions& d)
{
	std::string s;
	for (const Action& a : d.actions) {
		if (!s.empty())
			s += "; ";
		switch (a.kind) {
			case ActionKind::kSetPriority:
				s += "prio " + std::to_string(a.job) + "=" +
				     std::to_string(static_cast<int>(a.priority));
				continue;
			default:
				s += std::string(action_kind_name(a.kind)) + " " + std::to_string(a.job);
		}
		if (a.kind == ActionKind::kStart || a.kind == ActionKind::kResize) {
			s += " [";
			for (std::size_t i = 0; i < a.placement.size(); ++i)
				s += (i ? "," : "") + std::to_string(a.placement[i].node) + ":" +
				     std::to_string(a.placement[i].gpus);
			s += "]";
		}
	}
	return s;
}

// Check's string macros keep the pointer they are given: render into a named string first.
void expect_actions(const Decisions& d, const char* want)
{
	const std::string got = render(d);
	ck_assert_str_eq(got.c_str(), want);
}

}  // namespace

START_TEST(starts_then_priorities_in_policy_order)
{
	World w;
	w.pending(1, 0, 2);
	w.pending(2, 1, 2);
	w.pending(3, 2, 4);
	g_plan = {{2, {{0, 2}}}};
	auto s = make_scheduler({});
	Decisions d = s->decide(w.view());
	// Job 2 starts; 3 and 1 stay pending in reverse-id order with priorities 2 and 1.
	expect_actions(d, "start 2 [0:2]; prio 3=2; prio 1=1");
	ck_assert_uint_eq(d.order.size(), 2);
	ck_assert_uint_eq(d.order[0], 3);
	ck_assert_uint_eq(d.order[1], 1);
}
END_TEST

START_TEST(preemptive_ordering_requeues_and_resizes_before_starts)
{
	World w;
	w.running(1, 0, {{0, 2}});
	w.running(2, 0, {{1, 4}});
	w.pending(3, 5, 4);
	// Job 1 grows onto node 1, job 2 leaves the plan (requeued), job 3 takes node 0's rest + node 1.
	g_plan = {{1, {{0, 2}, {1, 2}}}, {3, {{0, 2}, {1, 2}}}};
	auto s = make_scheduler({{"OrderingPolicy", "reverse-id-preemptive"}});
	Decisions d = s->decide(w.view());
	expect_actions(d, "requeue 2; resize 1 [0:2,1:2]; start 3 [0:2,1:2]");
	ck_assert(d.order.empty());
}
END_TEST

START_TEST(unchanged_running_jobs_produce_no_action)
{
	World w;
	w.running(1, 0, {{0, 2}, {1, 1}});
	w.pending(2, 1, 1);
	// Same GPUs listed in another node order: not a resize.
	g_plan = {{1, {{1, 1}, {0, 2}}}};
	auto s = make_scheduler({{"OrderingPolicy", "reverse-id-preemptive"}});
	expect_actions(s->decide(w.view()), "prio 2=1");
}
END_TEST

START_TEST(resizes_are_ordered_so_each_fits_when_applied)
{
	World w;
	w.running(1, 0, {{0, 2}});
	w.running(2, 0, {{0, 2}});
	// Job 1 grows onto the GPU job 2 gives up: job 2's shrink must come first although 1 < 2.
	g_plan = {{1, {{0, 3}}}, {2, {{0, 1}}}};
	auto s = make_scheduler({{"OrderingPolicy", "reverse-id-preemptive"}});
	expect_actions(s->decide(w.view()), "resize 2 [0:1]; resize 1 [0:3]");
}
END_TEST

START_TEST(resizes_in_a_cycle_requeue_one_job)
{
	World w;
	w.running(1, 0, {{0, 4}});
	w.running(2, 0, {{1, 4}});
	// A swap: neither move fits before the other. Requeuing job 1 frees node 0 for job 2.
	g_plan = {{1, {{1, 4}}}, {2, {{0, 4}}}};
	auto s = make_scheduler({{"OrderingPolicy", "reverse-id-preemptive"}});
	Decisions d = s->decide(w.view());
	expect_actions(d, "requeue 1; resize 2 [0:4]");
}
END_TEST

START_TEST(held_jobs_go_last)
{
	World w;
	w.pending(1, 0, 1);
	w.pending(2, 1, 1);
	w.pending(3, 2, 1);
	w.pending(4, 3, 1);
	g_plan = {};
	auto s = make_scheduler({{"AdmissionPolicy", "admit-even"}});
	// Admitted 4, 2 in reverse-id order; held 1, 3 after them in submit order.
	expect_actions(s->decide(w.view()), "prio 4=4; prio 2=3; prio 1=2; prio 3=1");
}
END_TEST

START_TEST(preemption_policy_sees_only_lower_classes)
{
	World w;
	w.running(1, 0, {{0, 4}}).qos = "normal";
	w.running(5, 0, {{1, 4}}).qos = "high";
	w.pending(3, 1, 4).qos = "high";
	w.pending(4, 2, 4).qos = "normal";
	g_plan = {};
	g_offered.clear();
	g_place = true;
	auto s = make_scheduler({{"PreemptionPolicy", "take-all"}});
	Decisions d = s->decide(w.view());
	g_place = false;
	// Only job 3 (high) may preempt, and only job 1 (normal): job 5 is of its own class. Job 4
	// (normal) preempts nobody. Job 3 goes first (its class), then 4.
	ck_assert_uint_eq(g_offered.size(), 1);
	ck_assert_uint_eq(g_offered[0], 1);
	expect_actions(d, "requeue 1; prio 3=2; prio 4=1");
	ck_assert_str_eq(d.actions[0].reason.c_str(), "preempted for job 3 (take-all)");
}
END_TEST

START_TEST(stopping_jobs_free_gpus_for_the_waiting_job)
{
	World w;
	Job& s1 = w.running(1, 0, {{0, 4}});
	s1.qos = "normal";
	s1.checkpoint_requested_at = 0;  // preempted earlier: its GPUs are freeing
	w.running(2, 0, {{1, 4}}).qos = "normal";
	w.pending(3, 1, 4).qos = "high";
	w.pending(4, 2, 4).qos = "high";
	g_plan = {};
	g_offered.clear();
	g_place = true;
	auto s = make_scheduler({{"PreemptionPolicy", "take-all"}});
	Decisions d = s->decide(w.view());
	g_place = false;
	// reverse-id puts job 4 first: it waits for job 1's GPUs (no new victim); job 3 gets job 2, the
	// only candidate left (job 1 is stopping already: never offered again).
	ck_assert_uint_eq(g_offered.size(), 1);
	ck_assert_uint_eq(g_offered[0], 2);
	expect_actions(d, "requeue 2; prio 4=2; prio 3=1");
}
END_TEST

START_TEST(jobs_that_cannot_be_requeued_are_never_reconsidered_or_preempted)
{
	World w;
	Job& fixed = w.running(1, 0, {{0, 4}});
	fixed.requeueable = false;
	w.running(2, 0, {{1, 4}});
	w.pending(3, 1, 8);
	// A preemptive ordering whose plan leaves both running jobs out: only job 2 may be requeued;
	// job 1 stays where it is, in the plan, and is offered to no Preemption policy.
	g_plan = {{3, {{1, 4}}}};
	auto s = make_scheduler({{"OrderingPolicy", "reverse-id-preemptive"}});
	expect_actions(s->decide(w.view()), "requeue 2; start 3 [1:4]");
	// Non-preemptive ordering with a Preemption policy that takes all it is offered: a high-class
	// job is offered only job 2.
	World w2;
	w2.running(1, 0, {{0, 4}}).requeueable = false;
	w2.running(2, 0, {{1, 4}});
	w2.pending(3, 1, 4).qos = "high";
	g_plan = {};
	g_offered.clear();
	g_place = true;
	auto s2 = make_scheduler({{"PreemptionPolicy", "take-all"}});
	Decisions d2 = s2->decide(w2.view());
	g_place = false;
	expect_actions(d2, "requeue 2; prio 3=1");
	ck_assert_uint_eq(g_offered.size(), 1);
	ck_assert_uint_eq(g_offered[0], 2);
}
END_TEST

START_TEST(admin_pins_and_nice_override_the_policy_order)
{
	World w;
	for (JobId id = 1; id <= 6; ++id)
		w.pending(id, id, 1);
	// reverse-id would give 6 5 4 3 2 1. Pinned ahead: 2 (priority 10) before 1 (priority 5);
	// pinned behind: 6; nice 100 moves 5 behind the other unpinned jobs (4, 3).
	w.jobs[1].admin_pin = 1;
	w.jobs[1].admin_priority = 10;
	w.jobs[0].admin_pin = 1;
	w.jobs[0].admin_priority = 5;
	w.jobs[5].admin_pin = -1;
	w.jobs[5].admin_priority = 7;
	w.jobs[4].nice = 100;
	g_plan = {};
	auto s = make_scheduler({});
	Decisions d = s->decide(w.view());
	expect_actions(d, "prio 2=6; prio 1=5; prio 4=4; prio 3=3; prio 5=2; prio 6=1");
	// A job the plan starts leaves the order; the others keep their places.
	g_plan = {{2, {{0, 1}}}};
	expect_actions(s->decide(w.view()),
		       "start 2 [0:1]; prio 1=5; prio 4=4; prio 3=3; prio 5=2; prio 6=1");
}
END_TEST

START_TEST(unknown_policy_names_are_errors_listing_known_ones)
{
	Config c;
	ck_assert(c.set("Policy", "test", "test").is_ok());
	ck_assert(c.set("OrderingPolicy", "nope", "test").is_ok());
	PolicyRegistry r = test_registry();
	auto s = Scheduler::create(c, r);
	ck_assert(!s.is_ok());
	ck_assert_int_eq(static_cast<int>(s.status().code()), static_cast<int>(StatusCode::kNotFound));
	ck_assert_str_eq(s.status().message().c_str(),
			 "test: OrderingPolicy: unknown ordering policy 'nope' (known: reverse-id, "
			 "reverse-id-preemptive)");
	// From a file, the error names the file and line where the name was set.
	auto c2 = Config::parse("# a comment\nPolicy=missing\n", "dlsched.conf");
	ck_assert(c2.is_ok());
	auto s2 = Scheduler::create(c2.value(), r);
	ck_assert(!s2.is_ok());
	ck_assert_str_eq(s2.status().message().c_str(),
			 "dlsched.conf:2: Policy: unknown scheduling policy 'missing' (known: test)");
	// A part of a preset that does not exist is located at Policy=, named as the preset's.
	SchedulerSpec broken;
	broken.ordering = "gone";
	r.add_preset("broken", "a preset naming an ordering nobody registered", broken);
	auto c3 = Config::parse("Policy=broken\n", "dlsched.conf");
	ck_assert(c3.is_ok());
	auto s3 = Scheduler::create(c3.value(), r);
	ck_assert(!s3.is_ok());
	ck_assert_str_eq(
		s3.status().message().c_str(),
		"dlsched.conf:1: Policy: preset 'broken': unknown ordering policy 'gone' (known: reverse-id, "
		"reverse-id-preemptive)");
}
END_TEST

START_TEST(decide_is_deterministic)
{
	World w;
	for (JobId id = 1; id <= 20; ++id)
		w.pending(id, id % 3, 1);
	g_plan = {{7, {{0, 1}}}, {12, {{1, 1}}}};
	auto s = make_scheduler({});
	const std::string first = render(s->decide(w.view()));
	const std::string second = render(s->decide(w.view()));
	ck_assert_str_eq(first.c_str(), second.c_str());
}
END_TEST

int main()
{
	Suite* s = suite_create("scheduler");
	TCase* tc = tcase_create("decide");
	tcase_add_test(tc, starts_then_priorities_in_policy_order);
	tcase_add_test(tc, preemptive_ordering_requeues_and_resizes_before_starts);
	tcase_add_test(tc, unchanged_running_jobs_produce_no_action);
	tcase_add_test(tc, resizes_are_ordered_so_each_fits_when_applied);
	tcase_add_test(tc, resizes_in_a_cycle_requeue_one_job);
	tcase_add_test(tc, held_jobs_go_last);
	tcase_add_test(tc, preemption_policy_sees_only_lower_classes);
	tcase_add_test(tc, stopping_jobs_free_gpus_for_the_waiting_job);
	tcase_add_test(tc, jobs_that_cannot_be_requeued_are_never_reconsidered_or_preempted);
	tcase_add_test(tc, admin_pins_and_nice_override_the_policy_order);
	tcase_add_test(tc, unknown_policy_names_are_errors_listing_known_ones);
	tcase_add_test(tc, decide_is_deterministic);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
