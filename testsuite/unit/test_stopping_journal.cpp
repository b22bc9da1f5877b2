// util/stopping_journal: sched/dlsched's stopping table as dlsched-replay reads it. The lines are
// those plugins/sched/dlsched/stopping.c writes (its v2 and v1 records, rec, del): a job stays
// listed from its request until its del, the latest record of a job wins, malformed lines are
// skipped, a missing file is an empty table and an unreadable one an error naming it.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "util/stopping_journal.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;

namespace {

struct TempDir {
	std::string path;
	TempDir()
	{
		char tmpl[] = "/tmp/test_stopping_journal.XXXXXX";
		ck_assert_ptr_nonnull(mkdtemp(tmpl));
		path = tmpl;
	}
	~TempDir()
	{
		std::remove((path + "/" + kStoppingJournalName).c_str());
		rmdir(path.c_str());
	}
	std::string write(const std::string& text) const
	{
		const std::string p = path + "/" + kStoppingJournalName;
		std::ofstream(p) << text;
		return p;
	}
};

}  // namespace

START_TEST(lists_the_jobs_requested_and_not_deleted)
{
	TempDir d;
	const std::string p = d.write(
		// job 7: asked at 1000.5, requeued at the latest at 1600.5 (PreemptGrace=600), a resize
		"v2 7 1000.500 1600.500 4 2 1 12.5 30 0 999 0 resize\n"
		"rec 7\n"
		// job 8: an earlier release's record, then requeued (del)
		"v1 8 1001.000 1061.000 2 0 0 5 10 1 preempted by ordering\n"
		"v2 9 1002.000 1062.000 1 0 0 5 10 0 998 2 preempted by ordering\n"
		"del 8\n"
		// malformed: skipped
		"v2 x 1 2\n"
		"v2 10\n"
		"garbage\n"
		"\n"
		// job 9 asked again later: the latest record wins
		"v2 9 1100.000 1160.000 1 0 0 5 10 0 1099 3 preempted by ordering\n");
	auto t = read_stopping_journal(p);
	ck_assert_msg(t.is_ok(), "%s", t.status().message().c_str());
	const auto& m = t.value();
	ck_assert_uint_eq(m.size(), 2);
	ck_assert(m.count(7) && m.count(9) && !m.count(8) && !m.count(10));
	ck_assert_double_eq_tol(m.at(7).requested, 1000.5, 1e-9);
	ck_assert_double_eq_tol(m.at(7).deadline, 1600.5, 1e-9);
	ck_assert_double_eq_tol(m.at(9).deadline, 1160.0, 1e-9);
}
END_TEST

START_TEST(a_missing_journal_is_an_empty_table)
{
	TempDir d;
	auto t = read_stopping_journal(d.path + "/" + kStoppingJournalName);
	ck_assert(t.is_ok());
	ck_assert(t.value().empty());
}
END_TEST

START_TEST(an_unreadable_journal_is_an_error_naming_it)
{
	TempDir d;
	// A directory where the file should be: opening it for reading fails (as root too).
	const std::string p = d.path + "/sub";
	ck_assert_int_eq(mkdir(p.c_str(), 0700), 0);
	auto t = read_stopping_journal(p);
	rmdir(p.c_str());
	ck_assert(!t.is_ok());
	ck_assert_msg(t.status().message().find(p) != std::string::npos, "%s", t.status().message().c_str());
}
END_TEST

int main()
{
	Suite* s = suite_create("stopping_journal");
	TCase* tc = tcase_create("core");
	tcase_add_test(tc, lists_the_jobs_requested_and_not_deleted);
	tcase_add_test(tc, a_missing_journal_is_an_empty_table);
	tcase_add_test(tc, an_unreadable_journal_is_an_error_naming_it);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
