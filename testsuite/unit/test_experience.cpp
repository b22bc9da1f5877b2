// Experience recording for online fine-tuning: a PolicyStep round-trips through the profile DB's
// experience table; a malformed row is an error naming its rowid; the C ABI appends a learned
// ordering's steps when RecordExperience=yes and ProfileDB= are set, and a DB it cannot write (a bad
// path, another writer holding the lock) costs the cycle nothing but a counted error.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include <unistd.h>

#include "dlsched/api.h"
#include "policy/registry.h"
#include "profiledb/experience.h"
#include "profiledb/profile_db.h"
#include "temp_path.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;
using namespace dlsched::db;

namespace {

std::string temp_path(const char* name)
{
	return test::temp_path("dlsched-experience-test", name);
}

PolicyStep step(std::uint64_t cycle, double now)
{
	PolicyStep s;
	s.cycle = cycle;
	s.now = now;
	s.schema = 1;
	s.rows = 3;
	s.features = 2;
	// Floats that print badly in decimal: they must come back bit for bit.
	s.x = {0.1f, -1.5e-7f, 3.14159274f, 1e10f, 1.0f / 3.0f, -0.0f};
	s.context = {0.25f, 2.0f / 7.0f};
	s.ids = {4000000000u, 12, 13};
	s.need = {8, 1, 2};
	s.free_gpus = 6;
	s.order = {2, 0, 1};
	s.sampled = true;
	s.log_prob = -1.2345678901234;
	s.value = 0.1;
	s.in_system = 5;
	return s;
}

void check_same(const PolicyStep& a, const PolicyStep& b)
{
	ck_assert_uint_eq(a.cycle, b.cycle);
	ck_assert_double_eq(a.now, b.now);
	ck_assert_int_eq(a.schema, b.schema);
	ck_assert_int_eq(a.rows, b.rows);
	ck_assert_int_eq(a.features, b.features);
	ck_assert_uint_eq(a.x.size(), b.x.size());
	ck_assert_int_eq(std::memcmp(a.x.data(), b.x.data(), a.x.size() * sizeof(float)), 0);
	ck_assert_uint_eq(a.context.size(), b.context.size());
	ck_assert_int_eq(std::memcmp(a.context.data(), b.context.data(), a.context.size() * sizeof(float)),
			 0);
	ck_assert(a.ids == b.ids);
	ck_assert(a.need == b.need);
	ck_assert(a.order == b.order);
	ck_assert_int_eq(a.free_gpus, b.free_gpus);
	ck_assert_int_eq(a.in_system, b.in_system);
	ck_assert(a.sampled == b.sampled);
	// value and log_prob: float precision, the network's own.
	ck_assert_double_eq_tol(a.value, b.value, 1e-7 * std::abs(a.value));
	ck_assert_double_eq_tol(a.log_prob, b.log_prob, 1e-7 * std::abs(a.log_prob));
}

// Runs SQL on a file directly (to plant malformed rows).
void raw(const std::string& path, const std::string& sql)
{
	sqlite3* db = nullptr;
	ck_assert_int_eq(sqlite3_open(path.c_str(), &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK, "%s",
		      sqlite3_errmsg(db));
	sqlite3_close(db);
}

std::int64_t count_rows(const std::string& path)
{
	sqlite3* db = nullptr;
	sqlite3_stmt* st = nullptr;
	ck_assert_int_eq(sqlite3_open(path.c_str(), &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM experience", -1, &st, nullptr),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	const std::int64_t n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

// A test-only ordering that records what it saw, as a learned one does, without libtorch: FIFO,
// one row per job (features: GPUs, submit time), the identity order.
class RecordingOrdering : public Ordering {
public:
	const char* name() const override { return "test-recorder"; }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override
	{
		if (!view.recorder)
			return;
		PolicyStep s;
		s.cycle = view.cycle;
		s.now = view.now;
		s.schema = 99;
		s.rows = static_cast<int>(jobs.size());
		s.features = 2;
		for (std::size_t i = 0; i < jobs.size(); ++i) {
			s.x.push_back(static_cast<float>(jobs[i]->gpus_requested));
			s.x.push_back(static_cast<float>(jobs[i]->submit_time));
			s.ids.push_back(jobs[i]->id);
			s.need.push_back(jobs[i]->gpus_requested);
			s.order.push_back(static_cast<int>(i));
		}
		s.context = {1.0f};
		s.free_gpus = view.free_gpus();
		s.in_system = static_cast<int>(view.pending.size() + view.running.size());
		view.recorder->record(std::move(s));
	}
};

void register_test_policies(PolicyRegistry& r)
{
	r.add_ordering("test-recorder", "records its steps (tests)",
		       [](const Config&) -> Result<std::unique_ptr<Ordering>> {
			       return std::unique_ptr<Ordering>(new RecordingOrdering());
		       });
}

std::string write_conf(const std::string& name, const std::string& text)
{
	const std::string p = temp_path(name.c_str());
	std::ofstream f(p);
	f << text << "\nModelProfiles=" << DLSCHED_PROFILES << "\n";
	return p;
}

// A C view of one 8-GPU node and two pending jobs.
struct CView {
	dlsched_node_view_t node{};
	dlsched_job_view_t jobs[2]{};
	dlsched_cluster_view_t view{};

	explicit CView(std::uint64_t cycle, double now)
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
			j.job_id = static_cast<std::uint32_t>(21 + i);
			j.user = "alice";
			j.submit_time = i;
			j.gpus_requested = 4 + 4 * i;  // 4, then 8: the second waits
			j.epochs_total = 1;
			j.epoch_time_1gpu = 60;
			j.last_stop_time = -1;
		}
		view.struct_size = sizeof view;
		view.now = now;
		view.cycle = cycle;
		view.nodes = &node;
		view.node_count = 1;
		view.jobs = jobs;
		view.job_count = 2;
	}
};

dlsched_experience_stats_t experience_stats(const dlsched_scheduler_t* s)
{
	dlsched_experience_stats_t x;
	std::memset(&x, 0, sizeof x);
	x.struct_size = sizeof x;
	ck_assert_int_eq(dlsched_scheduler_experience_stats(s, &x), DLSCHED_OK);
	return x;
}

}  // namespace

START_TEST(a_step_round_trips_through_the_experience_table)
{
	const std::string path = temp_path("round.db");
	auto w = ProfileDb::open_writer(path, 50);
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert(w->add_experience("c1", step(8, 1010)).is_ok());
	ck_assert(w->add_experience("c1", step(7, 1000.5)).is_ok());
	ck_assert(w->add_experience("c2", step(1, 1005)).is_ok());
	// An empty window (nothing pending) is a valid step too.
	PolicyStep empty;
	empty.cycle = 9;
	empty.now = 1020;
	ck_assert(w->add_experience("c1", empty).is_ok());

	auto r = ProfileDb::open_reader(path);
	ck_assert_msg(r.is_ok(), "%s", r.status().message().c_str());
	auto all = r->experience("c1", 0);
	ck_assert_msg(all.is_ok(), "%s", all.status().message().c_str());
	ck_assert_uint_eq(all->size(), 3);
	check_same((*all)[0], step(7, 1000.5));  // by time, not by insertion
	check_same((*all)[1], step(8, 1010));
	ck_assert_int_eq((*all)[2].rows, 0);
	ck_assert_uint_eq((*all)[2].cycle, 9);
	auto since = r->experience("c1", 1010, 1);
	ck_assert(since.is_ok() && since->size() == 1 && (*since)[0].cycle == 8);
	auto other = r->experience("c2", 0);
	ck_assert(other.is_ok() && other->size() == 1);
	ck_assert(r->experience("nobody", 0).is_ok() && r->experience("nobody", 0)->empty());

	// The columns a trainer or an admin reads with SQL: reward = -in_system.
	sqlite3* db = nullptr;
	sqlite3_stmt* st = nullptr;
	ck_assert_int_eq(sqlite3_open(path.c_str(), &db), SQLITE_OK);
	ck_assert_int_eq(
		sqlite3_prepare_v2(db,
				   "SELECT cycle, at_s, reward, json_extract(state, '$.ids[0]'), "
				   "json_extract(action, '$.order[0]') FROM experience WHERE cluster = 'c1' "
				   "ORDER BY at_s LIMIT 1",
				   -1, &st, nullptr),
		SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int64(st, 0), 7);
	ck_assert_double_eq(sqlite3_column_double(st, 1), 1000.5);
	ck_assert_double_eq(sqlite3_column_double(st, 2), -5);
	ck_assert_int_eq(sqlite3_column_int64(st, 3), 4000000000LL);
	ck_assert_int_eq(sqlite3_column_int64(st, 4), 2);
	sqlite3_finalize(st);
	sqlite3_close(db);
}
END_TEST

START_TEST(a_malformed_row_is_an_error_naming_its_rowid)
{
	const std::string path = temp_path("bad.db");
	{
		auto w = ProfileDb::open_writer(path);
		ck_assert(w.is_ok());
		ck_assert(w->add_experience("c", step(1, 100)).is_ok());  // rowid 1
	}
	// One table-driven case per kind of damage; each is the only bad row (rowid 2) when read.
	struct Case {
		const char* state;
		const char* action;
		const char* says;
	};
	const std::string good = experience_state(step(2, 200)).dump(0);
	const Case cases[] = {
		{"{not json", "{\"order\":[0,1,2]}", "state:1:"},
		{good.c_str(), "{\"order\":[0,0,2]}", "\"order\" names row 0 twice"},
		{good.c_str(), "{\"order\":[0,1,2,1]}",
		 "\"order\" has 4 entries, expected 3"},  // more picks than rows
		{good.c_str(), "[]", "action: not a JSON object"},
		{"{\"schema\":1,\"rows\":1,\"features\":2,\"x\":[1],\"context\":[],\"ids\":[1],\"need\":[1],"
		 "\"free_gpus\":1,\"in_system\":1,\"value\":0,\"log_prob\":0,\"sampled\":false}",
		 "{\"order\":[0]}", "\"x\" has 1 entries, expected 2"},
		{"{\"schema\":1,\"rows\":1,\"features\":1,\"x\":[null],\"context\":[],\"ids\":[1],\"need\":["
		 "1],"
		 "\"free_gpus\":1,\"in_system\":1,\"value\":0,\"log_prob\":0,\"sampled\":false}",
		 "{\"order\":[0]}", "\"x\"[0] is not a valid number"},
		{"{\"schema\":1,\"rows\":1,\"features\":0,\"x\":[],\"context\":[],\"ids\":[-1],\"need\":[1],"
		 "\"free_gpus\":1,\"in_system\":1,\"value\":0,\"log_prob\":0,\"sampled\":false}",
		 "{\"order\":[0]}", "\"ids\"[0] is not a valid integer"},
		{"{\"schema\":1,\"rows\":0,\"features\":0,\"x\":[],\"context\":[],\"ids\":[],\"need\":[],"
		 "\"free_gpus\":1,\"value\":0,\"log_prob\":0,\"sampled\":false}",
		 "{\"order\":[]}", "\"in_system\" is missing"},
	};
	for (const Case& c : cases) {
		// Values quoted as SQL literals here: fixed test text without quotes of its own.
		ck_assert(std::strchr(c.state, '\'') == nullptr && std::strchr(c.action, '\'') == nullptr);
		raw(path,
		    "DELETE FROM experience WHERE rowid > 1; "
		    "INSERT INTO experience (rowid, cluster, cycle, at_s, state, action, reward) VALUES (2, "
		    "'c', 2, 200, '" +
			    std::string(c.state) + "', '" + c.action + "', -1)");
		auto r = ProfileDb::open_reader(path);
		ck_assert(r.is_ok());
		auto x = r->experience("c", 0);
		ck_assert_msg(!x.is_ok(), "a bad row was read: %s", c.says);
		const std::string& m = x.status().message();
		ck_assert_msg(
			m.find(path + ": experience row 2: ") == 0 && m.find(c.says) != std::string::npos,
			"message '%s' lacks '%s'", m.c_str(), c.says);
		// The rows before it and after it can still be read.
		auto before = r->experience("c", 0, 1);
		ck_assert(before.is_ok() && before->size() == 1);
		auto after = r->experience("c", 200.5);
		ck_assert(after.is_ok() && after->empty());
	}
}
END_TEST

START_TEST(the_capi_records_a_learned_orderings_steps)
{
	set_policy_extension(&register_test_policies);
	const std::string db = temp_path("capi.db");
	const std::string conf = write_conf(
		"rec.conf",
		"Policy=fifo\nOrderingPolicy=test-recorder\nRecordExperience=yes\nProfileDB=" + db);
	dlsched_scheduler_t* s = nullptr;
	dlsched_error_t err;
	ck_assert_msg(dlsched_scheduler_create(conf.c_str(), &s, &err) == DLSCHED_OK, "%s", err.message);
	ck_assert_int_eq(dlsched_scheduler_set_cluster(s, "lab"), DLSCHED_OK);
	char notes[512];
	ck_assert_int_eq(dlsched_scheduler_notes(s, notes, sizeof notes), DLSCHED_OK);
	ck_assert_msg(
		std::strstr(notes, ("experience: every cycle a learned ordering decides is appended to " + db)
					   .c_str()) &&
			std::strstr(notes, "(cluster lab)"),
		"notes: %s", notes);
	// Notes that do not fit are cut short, NUL-terminated.
	char small[8];
	ck_assert_int_eq(dlsched_scheduler_notes(s, small, sizeof small), DLSCHED_EINVAL);
	ck_assert_uint_eq(std::strlen(small), 7);

	for (std::uint64_t cycle = 1; cycle <= 2; ++cycle) {
		CView v(cycle, 100.0 * static_cast<double>(cycle));
		dlsched_decisions_t* d = nullptr;
		ck_assert_msg(dlsched_scheduler_decide(s, &v.view, &d, &err) == DLSCHED_OK, "%s",
			      err.message);
		dlsched_decisions_free(d);
	}
	dlsched_experience_stats_t x = experience_stats(s);
	ck_assert_int_eq(x.enabled, 1);
	ck_assert_uint_eq(x.rows, 2);
	ck_assert_uint_eq(x.errors, 0);
	dlsched_scheduler_destroy(s);

	auto r = ProfileDb::open_reader(db);
	ck_assert(r.is_ok());
	auto steps = r->experience("lab", 0);
	ck_assert_msg(steps.is_ok(), "%s", steps.status().message().c_str());
	ck_assert_uint_eq(steps->size(), 2);
	const PolicyStep& p = (*steps)[1];
	ck_assert_uint_eq(p.cycle, 2);
	ck_assert_double_eq(p.now, 200);
	ck_assert_int_eq(p.schema, 99);
	ck_assert_int_eq(p.rows, 2);
	ck_assert(p.ids == std::vector<JobId>({21, 22}));
	ck_assert(p.need == std::vector<int>({4, 8}));
	ck_assert_int_eq(p.in_system, 2);

	// Without RecordExperience nothing is recorded, even with a recording policy.
	const std::string off =
		write_conf("off.conf", "Policy=fifo\nOrderingPolicy=test-recorder\nProfileDB=" + db);
	ck_assert_int_eq(dlsched_scheduler_create(off.c_str(), &s, &err), DLSCHED_OK);
	CView v(3, 300);
	dlsched_decisions_t* d = nullptr;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &v.view, &d, &err), DLSCHED_OK);
	dlsched_decisions_free(d);
	ck_assert_int_eq(experience_stats(s).enabled, 0);
	ck_assert_int_eq(count_rows(db), 2);
	dlsched_scheduler_destroy(s);
}
END_TEST

START_TEST(a_db_it_cannot_write_costs_the_cycle_nothing)
{
	set_policy_extension(&register_test_policies);
	dlsched_scheduler_t* s = nullptr;
	dlsched_error_t err;

	// A path that cannot be created: every cycle decides; the open is tried again only
	// ProfileRefresh (60 s) after it failed (issue 27 item 9: no reopen per cycle), the cycles
	// between drop their steps. Cycles at 10, 20, 69 and 70 s: tries at 10 and 70.
	const std::string conf = write_conf("nodir.conf",
					    "Policy=fifo\nOrderingPolicy=test-recorder\n"
					    "RecordExperience=yes\nProfileDB=/nonexistent/dir/x.db");
	ck_assert_int_eq(dlsched_scheduler_create(conf.c_str(), &s, &err), DLSCHED_OK);
	const double at[] = {10, 20, 69, 70};
	for (std::uint64_t cycle = 1; cycle <= 4; ++cycle) {
		CView v(cycle, at[cycle - 1]);
		dlsched_decisions_t* d = nullptr;
		ck_assert_int_eq(dlsched_scheduler_decide(s, &v.view, &d, &err), DLSCHED_OK);
		ck_assert_uint_gt(dlsched_decisions_count(d), 0);
		dlsched_decisions_free(d);
		if (cycle == 3)
			ck_assert_uint_eq(experience_stats(s).errors, 1);
	}
	dlsched_experience_stats_t x = experience_stats(s);
	ck_assert_uint_eq(x.rows, 0);
	ck_assert_uint_eq(x.errors, 2);
	ck_assert_uint_eq(x.dropped, 4);
	ck_assert_msg(std::strstr(x.last_error, "/nonexistent/dir/x.db"), "%s", x.last_error);
	dlsched_scheduler_destroy(s);

	// Another writer holds the write lock: the cycle gives up on its rows after 50 ms (the default
	// busy timeout would wait 5 s), then records again once the lock is gone.
	const std::string db = temp_path("busy.db");
	{
		auto w = ProfileDb::open_writer(db);
		ck_assert(w.is_ok());
	}
	const std::string busy = write_conf("busy.conf",
					    "Policy=fifo\nOrderingPolicy=test-recorder\n"
					    "RecordExperience=yes\nProfileDB=" +
						    db);
	ck_assert_int_eq(dlsched_scheduler_create(busy.c_str(), &s, &err), DLSCHED_OK);
	CView v1(1, 10);
	dlsched_decisions_t* d = nullptr;
	ck_assert_int_eq(dlsched_scheduler_decide(s, &v1.view, &d, &err), DLSCHED_OK);  // opens the DB
	dlsched_decisions_free(d);
	sqlite3* other = nullptr;
	ck_assert_int_eq(sqlite3_open(db.c_str(), &other), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
	CView v2(2, 20);
	const auto t0 = std::chrono::steady_clock::now();
	ck_assert_int_eq(dlsched_scheduler_decide(s, &v2.view, &d, &err), DLSCHED_OK);
	const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	dlsched_decisions_free(d);
	ck_assert_msg(waited < 2.0, "decide waited %.2f s for the locked DB", waited);
	x = experience_stats(s);
	ck_assert_uint_eq(x.rows, 1);
	ck_assert_uint_eq(x.errors, 1);
	ck_assert_msg(std::strstr(x.last_error, "locked") || std::strstr(x.last_error, "busy"), "%s",
		      x.last_error);
	ck_assert_int_eq(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
	sqlite3_close(other);
	CView v3(3, 30);
	ck_assert_int_eq(dlsched_scheduler_decide(s, &v3.view, &d, &err), DLSCHED_OK);
	dlsched_decisions_free(d);
	x = experience_stats(s);
	ck_assert_uint_eq(x.rows, 2);
	ck_assert_uint_eq(x.errors, 1);
	dlsched_scheduler_destroy(s);
	ck_assert_int_eq(count_rows(db), 2);
}
END_TEST

int main()
{
	Suite* s = suite_create("experience");
	TCase* tc = tcase_create("experience");
	tcase_add_test(tc, a_step_round_trips_through_the_experience_table);
	tcase_add_test(tc, a_malformed_row_is_an_error_naming_its_rowid);
	tcase_add_test(tc, the_capi_records_a_learned_orderings_steps);
	tcase_add_test(tc, a_db_it_cannot_write_costs_the_cycle_nothing);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
