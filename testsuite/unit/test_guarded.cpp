// The C ABI's exception firewall (common/capi/api.cpp, guarded()): a policy that throws makes
// dlsched_scheduler_decide() return DLSCHED_EINTERNAL with the exception's text, and the error path
// allocates nothing, so that out of memory is an error code, not std::terminate. This program
// replaces the global operator new: once a test "takes the memory away", every allocation throws
// std::bad_alloc and is counted, and the tests check how many were tried.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>

#include "dlsched/api.h"
#include "policy/registry.h"
#include "temp_path.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;

namespace {

// Allocation control: `g_fail_all`: every operator new throws; `g_trip_bytes` > 0: the first
// allocation of at least that many bytes sets g_fail_all (and throws).
bool g_fail_all = false;
std::size_t g_trip_bytes = 0;
unsigned g_refused = 0;  // allocations refused since memory was taken away

void take_memory_away()
{
	g_refused = 0;
	g_fail_all = true;
}

void give_memory_back()
{
	g_fail_all = false;
	g_trip_bytes = 0;
}

}  // namespace

void* operator new(std::size_t n)
{
	if (!g_fail_all && g_trip_bytes > 0 && n >= g_trip_bytes) {
		g_refused = 0;
		g_fail_all = true;
	}
	if (g_fail_all) {
		++g_refused;
		throw std::bad_alloc();
	}
	if (void* p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}

void operator delete(void* p) noexcept
{
	std::free(p);
}

void operator delete(void* p, std::size_t) noexcept
{
	std::free(p);
}

namespace {

std::string temp_path(const char* name)
{
	return test::temp_path("dlsched-guarded-test", name);
}

// Orderings that fail as a policy can: a runtime_error; std::bad_alloc with the memory gone (as a
// real allocation failure leaves it); and one that records a learned step too large to write once
// memory is short (RecordExperience=yes: the write runs out of memory inside the C ABI).
class ThrowingOrdering : public Ordering {
public:
	explicit ThrowingOrdering(bool out_of_memory) : oom_(out_of_memory) {}
	const char* name() const override
	{
		return oom_ ? "test-throws-bad-alloc" : "test-throws-runtime-error";
	}
	void order(const ClusterView&, std::vector<const Job*>&) const override
	{
		if (oom_) {
			take_memory_away();
			throw std::bad_alloc();
		}
		throw std::runtime_error("the test ordering failed on purpose");
	}

private:
	bool oom_;
};

class HugeStepOrdering : public Ordering {
public:
	const char* name() const override { return "test-huge-step"; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override
	{
		if (!view.recorder)
			return;
		PolicyStep s;
		s.cycle = view.cycle;
		s.now = view.now;
		s.schema = 99;
		s.rows = static_cast<int>(jobs.size());
		s.features = 50000;
		s.x.assign(jobs.size() * 50000, 0.123456789f);
		for (std::size_t i = 0; i < jobs.size(); ++i) {
			s.ids.push_back(jobs[i]->id);
			s.need.push_back(jobs[i]->gpus_requested);
			s.order.push_back(static_cast<int>(i));
		}
		view.recorder->record(std::move(s));
		// Its JSON text (about 1 MB) is the first allocation that large: memory runs out there.
		g_trip_bytes = 512 * 1024;
	}
};

void register_test_policies(PolicyRegistry& r)
{
	r.add_ordering("test-throws-runtime-error", "throws std::runtime_error (tests)",
		       [](const Config&) -> Result<std::unique_ptr<Ordering>> {
			       return std::unique_ptr<Ordering>(new ThrowingOrdering(false));
		       });
	r.add_ordering("test-throws-bad-alloc", "throws std::bad_alloc, memory gone (tests)",
		       [](const Config&) -> Result<std::unique_ptr<Ordering>> {
			       return std::unique_ptr<Ordering>(new ThrowingOrdering(true));
		       });
	r.add_ordering("test-huge-step", "records a step too large for the memory left (tests)",
		       [](const Config&) -> Result<std::unique_ptr<Ordering>> {
			       return std::unique_ptr<Ordering>(new HugeStepOrdering());
		       });
}

dlsched_scheduler_t* scheduler(const std::string& conf_text)
{
	set_policy_extension(&register_test_policies);
	const std::string p = temp_path("dlsched.conf");
	{
		std::ofstream f(p);
		f << conf_text << "\nModelProfiles=" << DLSCHED_PROFILES << "\n";
	}
	dlsched_scheduler_t* s = nullptr;
	dlsched_error_t err;
	ck_assert_msg(dlsched_scheduler_create(p.c_str(), &s, &err) == DLSCHED_OK, "%s", err.message);
	return s;
}

// A C view of one 8-GPU node and two pending jobs (4 and 8 GPUs).
struct CView {
	dlsched_node_view_t node{};
	dlsched_job_view_t jobs[2]{};
	dlsched_cluster_view_t view{};

	CView()
	{
		node.struct_size = sizeof node;
		node.name = "n1";
		node.gpus_total = 8;
		node.gpus_free = 8;
		node.partition = "train";
		node.up = 1;
		for (int i = 0; i < 2; ++i) {
			dlsched_job_view_t& j = jobs[i];
			j.struct_size = sizeof j;
			j.job_id = static_cast<std::uint32_t>(31 + i);
			j.user = "alice";
			j.submit_time = i;
			j.gpus_requested = 4 + 4 * i;
			j.epochs_total = 1;
			j.epoch_time_1gpu = 60;
			j.last_stop_time = -1;
		}
		view.struct_size = sizeof view;
		view.now = 100;
		view.cycle = 1;
		view.nodes = &node;
		view.node_count = 1;
		view.jobs = jobs;
		view.job_count = 2;
	}
};

}  // namespace

START_TEST(a_policy_that_throws_runtime_error_is_an_error_code)
{
	dlsched_scheduler_t* s = scheduler("Policy=fifo\nOrderingPolicy=test-throws-runtime-error");
	CView v;
	dlsched_error_t err;
	dlsched_decisions_t* d = reinterpret_cast<dlsched_decisions_t*>(&v);  // must be reset to NULL
	ck_assert_int_eq(dlsched_scheduler_decide(s, &v.view, &d, &err), DLSCHED_EINTERNAL);
	ck_assert_int_eq(err.code, DLSCHED_EINTERNAL);
	ck_assert_str_eq(err.message, "dlsched_scheduler_decide: the test ordering failed on purpose");
	ck_assert_ptr_null(d);
	// The scheduler is still whole: the next cycle fails the same way, nothing worse.
	ck_assert_int_eq(dlsched_scheduler_decide(s, &v.view, &d, &err), DLSCHED_EINTERNAL);
	ck_assert_str_eq(err.message, "dlsched_scheduler_decide: the test ordering failed on purpose");
	dlsched_scheduler_destroy(s);
}
END_TEST

START_TEST(a_policy_out_of_memory_is_an_error_code_found_without_allocating)
{
	dlsched_scheduler_t* s = scheduler("Policy=fifo\nOrderingPolicy=test-throws-bad-alloc");
	CView v;
	dlsched_error_t err;
	std::memset(&err, 0, sizeof err);
	dlsched_decisions_t* d = nullptr;
	const int rc = dlsched_scheduler_decide(s, &v.view, &d, &err);
	const unsigned refused = g_refused;
	give_memory_back();
	ck_assert_int_eq(rc, DLSCHED_EINTERNAL);
	ck_assert_str_eq(err.message, "dlsched_scheduler_decide: out of memory");
	ck_assert_ptr_null(d);
	// From the throw to the error code, not one allocation was even tried.
	ck_assert_uint_eq(refused, 0);
	// With memory back, the same scheduler reports the same way (the ordering takes it again).
	ck_assert_int_eq(dlsched_scheduler_decide(s, &v.view, &d, &err), DLSCHED_EINTERNAL);
	give_memory_back();
	ck_assert_str_eq(err.message, "dlsched_scheduler_decide: out of memory");
	dlsched_scheduler_destroy(s);
}
END_TEST

START_TEST(recording_experience_out_of_memory_does_not_terminate)
{
	const std::string db = temp_path("experience.db");
	dlsched_scheduler_t* s = scheduler(
		"Policy=fifo\nOrderingPolicy=test-huge-step\nRecordExperience=yes\nProfileDB=" + db);
	CView v;
	dlsched_error_t err;
	std::memset(&err, 0, sizeof err);
	dlsched_decisions_t* d = nullptr;
	// The step's write runs out of memory inside record_experience() (noexcept): its error path
	// must not allocate, or this is std::terminate. The decisions that follow it need memory too:
	// the call ends in the firewall's error code.
	const int rc = dlsched_scheduler_decide(s, &v.view, &d, &err);
	const bool ran_out = g_fail_all;
	give_memory_back();
	ck_assert_msg(ran_out, "the step's write never reached the trip size");
	ck_assert_int_eq(rc, DLSCHED_EINTERNAL);
	ck_assert_str_eq(err.message, "dlsched_scheduler_decide: out of memory");
	dlsched_experience_stats_t x;
	std::memset(&x, 0, sizeof x);
	x.struct_size = sizeof x;
	ck_assert_int_eq(dlsched_scheduler_experience_stats(s, &x), DLSCHED_OK);
	ck_assert_uint_eq(x.rows, 0);
	ck_assert_uint_eq(x.errors, 1);
	ck_assert_uint_eq(x.dropped, 1);
	ck_assert_str_eq(x.last_error, "recording experience: out of memory");
	dlsched_scheduler_destroy(s);
}
END_TEST

int main(void)
{
	Suite* s = suite_create("guarded");
	TCase* tc = tcase_create("firewall");
	tcase_add_test(tc, a_policy_that_throws_runtime_error_is_an_error_code);
	tcase_add_test(tc, a_policy_out_of_memory_is_an_error_code_found_without_allocating);
	tcase_add_test(tc, recording_experience_out_of_memory_does_not_terminate);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
