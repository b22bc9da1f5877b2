// The job-profile database: records round-trip, a record delivered twice is kept once, the schema
// is upgraded from an older version with its data, and bad files (missing, empty, foreign, newer,
// corrupt) are errors that name the file.
#include <sqlite3.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "profiledb/profile_db.h"
#include "util/trusted_file.h"
#include "temp_path.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;
using namespace dlsched::db;

namespace {

std::string temp_path(const char* name)
{
	return test::temp_path("dlsched-profiledb-test", name);
}

JobRecord job(std::int64_t id, const std::string& model, double submit)
{
	JobRecord j;
	j.job_id = id;
	j.user = "alice";
	j.model = model;
	j.gpus = 4;
	j.epochs_total = 10;
	j.submit_s = submit;
	j.state = "running";
	return j;
}

EpochRecord epoch(std::int64_t id, int n, double start, double seconds)
{
	EpochRecord e;
	e.job_id = id;
	e.epoch = n;
	e.gpus = 4;
	e.start_s = start;
	e.end_s = start + seconds;
	e.bytes_read = 1000 * n;
	return e;
}

// Runs SQL on a file directly (to make foreign, newer or empty databases).
void raw(const std::string& path, const char* sql)
{
	sqlite3* db = nullptr;
	ck_assert_int_eq(sqlite3_open(path.c_str(), &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
	sqlite3_close(db);
}

bool starts_with(const std::string& s, const std::string& prefix)
{
	return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

START_TEST(records_round_trip_and_duplicates_are_ignored)
{
	const std::string path = temp_path("a.db");
	auto w = ProfileDb::open_writer(path);
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert_int_eq(w->schema_version(), ProfileDb::kSchemaVersion);
	// A model name with quotes goes in as a bound value, not as SQL.
	const std::string odd = "o'brien\"net";
	ck_assert(w->put_job(job(7, odd, 100)).is_ok());
	ck_assert(w->put_job(job(8, odd, 200)).is_ok());
	ck_assert(w->put_job(job(9, "bert", 300)).is_ok());
	ck_assert(w->put_job(job(10, "bert", 400)).is_ok());  // no epochs: not in history
	auto first = w->add_epoch(epoch(7, 1, 1000, 30));
	ck_assert(first.is_ok() && first.value());
	auto again = w->add_epoch(epoch(7, 1, 1000, 30));
	ck_assert_msg(again.is_ok() && !again.value(), "a duplicate epoch was not ignored");
	ck_assert(w->add_epoch(epoch(7, 2, 1030, 20)).is_ok());
	ck_assert(w->add_epoch(epoch(8, 1, 2000, 25)).is_ok());
	ck_assert(w->add_epoch(epoch(9, 1, 3000, 60)).is_ok());
	CheckpointRecord c;
	c.job_id = 7;
	c.epoch = 2;
	c.kind = "save";
	c.bytes = 300 << 20;
	c.seconds = 1.5;
	c.at_s = 1051;
	auto added = w->add_checkpoint(c);
	ck_assert(added.is_ok() && added.value());
	auto twice = w->add_checkpoint(c);
	ck_assert_msg(twice.is_ok() && !twice.value(), "a checkpoint delivered twice was stored twice");
	c.kind = "suspend";  // not save or load: refused by the schema
	ck_assert(!w->add_checkpoint(c).is_ok());
	// Only duplicates are skipped: an epoch that ends before it starts is an error, not ignored.
	ck_assert(!w->add_epoch(epoch(9, 2, 3100, -1)).is_ok());

	auto r = ProfileDb::open_reader(path);
	ck_assert_msg(r.is_ok(), "%s", r.status().message().c_str());
	auto p = r->job("", 7);
	ck_assert(p.is_ok());
	ck_assert_str_eq(p->job.model.c_str(), odd.c_str());
	ck_assert_uint_eq(p->epochs.size(), 2);
	ck_assert_int_eq(p->epochs[1].epoch, 2);
	ck_assert_double_eq(p->epochs[1].seconds(), 20);
	ck_assert_int_eq(p->epochs[1].bytes_read, 2000);
	ck_assert_int_eq(p->epochs[1].net_rx_bytes, -1);
	ck_assert_uint_eq(p->checkpoints.size(), 1);
	ck_assert_int_eq(p->checkpoints[0].bytes, 300 << 20);

	auto models = r->models();
	ck_assert(models.is_ok());
	ck_assert_uint_eq(models->size(), 2);
	ck_assert_str_eq((*models)[0].first.c_str(), "bert");
	ck_assert_int_eq((*models)[0].second, 1);
	ck_assert_int_eq((*models)[1].second, 2);

	auto h = r->model_history(odd);
	ck_assert(h.is_ok());
	ck_assert_uint_eq(h->size(), 2);
	ck_assert_int_eq((*h)[0].job.job_id, 8);  // most recent first
	auto h1 = r->model_history(odd, 1);
	ck_assert(h1.is_ok() && h1->size() == 1);

	auto missing = r->job("", 99);
	ck_assert(!missing.is_ok());
	ck_assert_int_eq(static_cast<int>(missing.status().code()), static_cast<int>(StatusCode::kNotFound));
	// The reader is read-only.
	ck_assert(!r->put_job(job(11, "x", 0)).is_ok());

	std::ostringstream csv;
	ck_assert(r->export_csv("epochs", csv).is_ok());
	std::istringstream lines(csv.str());
	std::string header, row;
	std::getline(lines, header);
	std::getline(lines, row);
	ck_assert_str_eq(
		header.c_str(),
		"cluster,job_id,run,epoch,gpus,start_s,end_s,bytes_read,net_rx_bytes,nfs_read_bytes,node");
	ck_assert_str_eq(row.c_str(), ",7,0,1,4,1000.0,1030.0,1000,-1,-1,");
	ck_assert(!r->export_csv("sqlite_master", csv).is_ok());
}
END_TEST

START_TEST(an_older_schema_is_upgraded_with_its_data)
{
	const std::string path = temp_path("old.db");
	{
		auto v1 = ProfileDb::create_at_version(path, 1);
		ck_assert_msg(v1.is_ok(), "%s", v1.status().message().c_str());
		ck_assert_int_eq(v1->schema_version(), 1);
		ck_assert(v1->put_job(job(1, "cifar10", 10)).is_ok());
		ck_assert(v1->add_epoch(epoch(1, 1, 10, 5)).is_ok());
	}
	// A reader opens version 1 as it is; the writer upgrades it.
	auto r = ProfileDb::open_reader(path);
	ck_assert(r.is_ok());
	ck_assert_int_eq(r->schema_version(), 1);
	auto w = ProfileDb::open_writer(path);
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert_int_eq(w->schema_version(), ProfileDb::kSchemaVersion);
	auto p = w->job("", 1);
	ck_assert(p.is_ok() && p->epochs.size() == 1);
	// Version 2's table exists now.
	raw(path,
	    "INSERT INTO experience (cycle, at_s, state, action, reward) VALUES (1, 2, '{}', 'start 1', "
	    "0.5)");
	auto again = ProfileDb::open_writer(path);
	ck_assert(again.is_ok() && again->schema_version() == ProfileDb::kSchemaVersion);
}
END_TEST

START_TEST(version_3_keeps_one_of_each_duplicated_checkpoint)
{
	const std::string path = temp_path("v2.db");
	{
		auto v2 = ProfileDb::create_at_version(path, 2);
		ck_assert_msg(v2.is_ok(), "%s", v2.status().message().c_str());
	}
	// Version 2 let a retried delivery store a checkpoint twice.
	for (int i = 0; i < 2; ++i)
		raw(path,
		    "INSERT INTO checkpoints (job_id, run, epoch, kind, bytes, seconds, at_s) "
		    "VALUES (4, 0, 3, 'save', 1000, 0.5, 77)");
	raw(path,
	    "INSERT INTO checkpoints (job_id, run, epoch, kind, bytes, seconds, at_s) "
	    "VALUES (4, 1, 3, 'load', 1000, 0.25, 90)");
	auto w = ProfileDb::open_writer(path);
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert_int_eq(w->schema_version(), ProfileDb::kSchemaVersion);  // upgraded through 3
	std::ostringstream csv;
	ck_assert(w->export_csv("checkpoints", csv).is_ok());
	int lines = 0;
	for (char ch : csv.str())
		lines += ch == '\n';
	ck_assert_int_eq(lines, 3);  // header, one save, one load
}
END_TEST

START_TEST(version_4_records_preemptions_with_their_predictions)
{
	const std::string path = temp_path("v4.db");
	{
		auto v3 = ProfileDb::create_at_version(path, 3);
		ck_assert_msg(v3.is_ok(), "%s", v3.status().message().c_str());
	}
	auto w = ProfileDb::open_writer(path);
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	JobRecord j;
	j.cluster = "c";
	j.job_id = 9;
	j.gpus = 2;
	ck_assert(w->put_job(j).is_ok());
	PreemptionRecord p;
	p.cluster = "c";
	p.job_id = 9;
	p.requested_s = 1000;
	p.grace_s = 600;
	p.gpus = 2;
	p.predicted_suspend_s = 12.5;
	p.predicted_resume_s = 30;
	p.reason = "preempted for job 11 (overhead)";
	ck_assert(w->add_preemption(p).is_ok());
	ck_assert(
		w->add_preemption(p).is_ok());  // sent again (a restarted controller): replaced, not doubled
	ck_assert(w->finish_preemption("c", 9, 1000, "checkpointed", 1013).is_ok());
	auto got = w->job("c", 9);
	ck_assert(got.is_ok());
	ck_assert_uint_eq(got->preemptions.size(), 1);
	const PreemptionRecord& r = got->preemptions[0];
	ck_assert_double_eq(r.predicted_suspend_s, 12.5);
	ck_assert_double_eq(r.predicted_resume_s, 30);
	ck_assert_str_eq(r.outcome.c_str(), "checkpointed");
	ck_assert_double_eq(r.requeued_s, 1013);
	ck_assert_str_eq(r.reason.c_str(), "preempted for job 11 (overhead)");
	std::ostringstream csv;
	ck_assert(w->export_csv("preemptions", csv).is_ok());
	const std::string text = csv.str();  // Check's string macros keep the pointer they are given
	ck_assert_str_eq(text.c_str(),
			 "cluster,job_id,requested_s,grace_s,gpus,predicted_suspend_s,predicted_resume_s,"
			 "reason,outcome,"
			 "requeued_s\nc,9,1000.0,600.0,2,12.5,30.0,preempted for job 11 "
			 "(overhead),checkpointed,1013.0\n");
}
END_TEST

// Schema 5: each epoch keeps the node that reported it, and the controller's speed model reads the
// latest runs per node (the rows before the upgrade have no node and are not among them).
START_TEST(version_5_knows_each_epoch_s_node)
{
	const std::string path = temp_path("v5.db");
	{
		auto v4 = ProfileDb::create_at_version(path, 4);
		ck_assert_msg(v4.is_ok(), "%s", v4.status().message().c_str());
		ck_assert(v4->put_job(job(1, "cifar10", 10)).is_ok());
		ck_assert(v4->add_epoch(epoch(1, 1, 10, 5)).is_ok());
		ck_assert(v4->add_epoch(epoch(1, 2, 15, 5)).is_ok());
		// A reader of version 4 finds no node, and no run to learn from.
		auto runs = v4->recent_node_runs("", 10);
		ck_assert(runs.is_ok() && runs->empty());
		std::ostringstream csv;
		ck_assert(v4->export_csv("epochs", csv).is_ok());
		ck_assert(csv.str().rfind("cluster,job_id,run,epoch,gpus,start_s,end_s,bytes_read,net_rx_"
					  "bytes,nfs_read_bytes\n",
					  0) == 0);
	}
	auto w = ProfileDb::open_writer(path);
	ck_assert_msg(w.is_ok(), "%s", w.status().message().c_str());
	ck_assert_int_eq(w->schema_version(), 5);
	auto on = [](std::int64_t id, int run, int n, double start, double seconds, const char* node) {
		EpochRecord e = epoch(id, n, start, seconds);
		e.run = run;
		e.node = node;
		return e;
	};
	JobRecord two = job(2, "bert", 20);
	two.nodes = 2;
	ck_assert(w->put_job(two).is_ok());
	ck_assert(w->put_job(job(3, "cifar10", 30)).is_ok());
	// Job 2: run 0 on n1 (epochs 1-3), run 1 on n2 (epochs 4-5); job 3: run 0 on n1, latest.
	ck_assert(w->add_epoch(on(2, 0, 1, 100, 10, "n1")).is_ok());
	ck_assert(w->add_epoch(on(2, 0, 2, 110, 10, "n1")).is_ok());
	ck_assert(w->add_epoch(on(2, 0, 3, 120, 10, "n1")).is_ok());
	ck_assert(w->add_epoch(on(2, 1, 4, 200, 12, "n2")).is_ok());
	ck_assert(w->add_epoch(on(2, 1, 5, 212, 12, "n2")).is_ok());
	ck_assert(w->add_epoch(on(3, 0, 1, 300, 7, "n1")).is_ok());
	auto p = w->job("", 2);
	ck_assert(p.is_ok() && p->epochs.size() == 5);
	ck_assert_str_eq(p->epochs[3].node.c_str(), "n2");
	auto runs = w->recent_node_runs("", 10);
	ck_assert_msg(runs.is_ok(), "%s", runs.status().message().c_str());
	ck_assert_uint_eq(runs->size(), 3);  // job 1's epochs have no node
	const NodeRun& latest = (*runs)[0];
	ck_assert_int_eq(latest.job_id, 3);
	ck_assert_str_eq(latest.model.c_str(), "cifar10");
	ck_assert_uint_eq(latest.epochs.size(), 1);
	const NodeRun& second = (*runs)[1];
	ck_assert(second.job_id == 2 && second.run == 1 && second.node == "n2");
	ck_assert_int_eq(second.nodes, 2);
	ck_assert_uint_eq(second.epochs.size(), 2);
	ck_assert_int_eq(second.epochs[0].epoch, 4);
	ck_assert_double_eq(second.epochs[1].seconds(), 12);
	ck_assert(((*runs)[2].job_id == 2 && (*runs)[2].run == 0 && (*runs)[2].epochs.size() == 3));
	// At most `runs` of them, and no other cluster's.
	auto one = w->recent_node_runs("", 1);
	ck_assert(one.is_ok() && one->size() == 1 && (*one)[0].job_id == 3);
	auto other = w->recent_node_runs("elsewhere", 10);
	ck_assert(other.is_ok() && other->empty());
	std::ostringstream csv;
	ck_assert(w->export_csv("epochs", csv).is_ok());
	ck_assert(csv.str().find("\n,2,1,5,4,212.0,224.0,5000,-1,-1,n2\n") != std::string::npos);
}
END_TEST

START_TEST(bad_files_are_errors_naming_the_file)
{
	auto none = ProfileDb::open_reader("/nonexistent/profiles.db");
	ck_assert(!none.is_ok());
	ck_assert(
		starts_with(none.status().message(), "/nonexistent/profiles.db: no profile database there"));

	const std::string empty = temp_path("empty.db");
	raw(empty, "PRAGMA user_version=0");
	auto e = ProfileDb::open_reader(empty);
	ck_assert(!e.is_ok());
	ck_assert_msg(
		e.status().message() == empty + ": an empty database, not yet initialised by dlsched-ingestd",
		"%s", e.status().message().c_str());

	const std::string foreign = temp_path("foreign.db");
	raw(foreign, "CREATE TABLE recipes (name TEXT)");
	auto f = ProfileDb::open_writer(foreign);
	ck_assert(!f.is_ok());
	ck_assert(starts_with(f.status().message(),
			      foreign + ": an SQLite file, but not a dlsched profile database"));

	const std::string newer = temp_path("newer.db");
	{
		auto w = ProfileDb::open_writer(newer);
		ck_assert(w.is_ok());
	}
	raw(newer, "PRAGMA user_version=99");
	auto n = ProfileDb::open_reader(newer);
	ck_assert(!n.is_ok());
	ck_assert_msg(n.status().message() ==
			      newer + ": profile database schema version 99 is newer than this dlsched's (" +
				      std::to_string(ProfileDb::kSchemaVersion) + "); upgrade dlsched",
		      "%s", n.status().message().c_str());

	const std::string corrupt = temp_path("corrupt.db");
	{
		std::ofstream out(corrupt, std::ios::binary);
		for (int i = 0; i < 4096; ++i)
			out << static_cast<char>((i * 37) & 0xff);
	}
	auto c = ProfileDb::open_reader(corrupt);
	ck_assert(!c.is_ok());
	ck_assert_msg(
		starts_with(c.status().message(), corrupt + ": not a readable dlsched profile database ("),
		"%s", c.status().message().c_str());
	ck_assert(c.status().message().find("move it aside") != std::string::npos);
}
END_TEST

// Issue 27 item 9: a job's rows reach slurmctld bounded (ProfileDb::kJobRowLimit of each kind, the
// newest), in time order; dlsched-db reads them all (0).
START_TEST(a_job_s_rows_are_bounded_newest_first)
{
	const std::string path = temp_path("bounded.db");
	auto w = ProfileDb::open_writer(path);
	ck_assert(w.is_ok());
	JobRecord j;
	j.cluster = "c", j.job_id = 7, j.model = "m", j.gpus = 1, j.epochs_total = 1e6;
	ck_assert(w->put_job(j).is_ok());
	const int n = static_cast<int>(ProfileDb::kJobRowLimit) + 500;
	{
		auto tx = w->transaction();
		for (int e = 1; e <= n; ++e) {
			EpochRecord er;
			er.cluster = "c", er.job_id = 7, er.run = 0, er.epoch = e, er.gpus = 1;
			er.start_s = 10.0 * e;
			er.end_s = 10.0 * e + 10;
			ck_assert(w->add_epoch(er).is_ok());
			CheckpointRecord c;
			c.cluster = "c", c.job_id = 7, c.run = 0, c.epoch = e, c.kind = "save", c.bytes = 1,
			c.seconds = 1;
			c.at_s = 10.0 * e + 10;
			ck_assert(w->add_checkpoint(c).is_ok());
		}
		for (int k = 1; k <= 5; ++k) {
			PreemptionRecord p;
			p.cluster = "c", p.job_id = 7, p.requested_s = 100.0 * k, p.gpus = 1,
			p.outcome = "requeued";
			ck_assert(w->add_preemption(p).is_ok());
		}
		ck_assert(tx.commit().is_ok());
	}
	// Default: the newest kJobRowLimit epochs (501 .. n) and checkpoints, in time order.
	auto p = w->job("c", 7);
	ck_assert(p.is_ok());
	ck_assert_uint_eq(p->epochs.size(), ProfileDb::kJobRowLimit);
	ck_assert_int_eq(p->epochs.front().epoch, 501);
	ck_assert_int_eq(p->epochs.back().epoch, n);
	ck_assert_uint_eq(p->checkpoints.size(), ProfileDb::kJobRowLimit);
	ck_assert_double_eq(p->checkpoints.front().at_s, 5020);
	ck_assert_double_eq(p->checkpoints.back().at_s, 10.0 * n + 10);
	ck_assert_uint_eq(p->preemptions.size(), 5);
	// A limit of 3: epochs n-2 .. n, the 3 latest preemptions (300, 400, 500 s).
	auto q = w->job("c", 7, 3);
	ck_assert(q.is_ok());
	ck_assert_uint_eq(q->epochs.size(), 3);
	ck_assert_int_eq(q->epochs[0].epoch, n - 2);
	ck_assert_int_eq(q->epochs[2].epoch, n);
	ck_assert_uint_eq(q->preemptions.size(), 3);
	ck_assert_double_eq(q->preemptions[0].requested_s, 300);
	ck_assert_double_eq(q->preemptions[2].requested_s, 500);
	// 0: all.
	auto all = w->job("c", 7, 0);
	ck_assert(all.is_ok());
	ck_assert_uint_eq(all->epochs.size(), static_cast<std::size_t>(n));
	ck_assert_int_eq(all->epochs.front().epoch, 1);
}
END_TEST

// In slurmctld (file trust on, as the plugins turn it on): a profile DB that every user could write,
// or could replace (its directory is world-writable), is refused with an error naming the file and
// the fix, by readers and writers alike; the documented setup (0660 in a 2770 directory, owned by the
// ingest service's user) opens. Off (the tools), nothing is checked.
START_TEST(a_profile_db_others_could_write_is_refused_in_slurmctld)
{
	const std::string path = temp_path("trust.db");
	ck_assert(ProfileDb::open_writer(path).is_ok());
	ck_assert_int_eq(chmod(path.c_str(), 0666), 0);
	ck_assert(ProfileDb::open_reader(path).is_ok());  // checks off
	trust_files_owned_by(static_cast<std::uint32_t>(getuid()) + 4242);
	for (bool writer : {false, true}) {
		auto r = writer ? ProfileDb::open_writer(path) : ProfileDb::open_reader(path);
		ck_assert(!r.is_ok());
		const std::string m = r.status().message();
		ck_assert_msg(
			starts_with(m, path + ": profile database refused: it is writable by every user") &&
				m.find("mode 0660 in a directory of mode 2770") != std::string::npos,
			"%s", m.c_str());
	}
	// Group-writable, as the ingest service's unit leaves it: opens.
	ck_assert_int_eq(chmod(path.c_str(), 0660), 0);
	ck_assert(ProfileDb::open_reader(path).is_ok());
	// In a directory every user can write, someone else could have put it there.
	const std::string dir = path.substr(0, path.find_last_of('/')) + "/open";
	ck_assert_int_eq(mkdir(dir.c_str(), 0700), 0);
	ck_assert_int_eq(chmod(dir.c_str(), 01777), 0);
	const std::string in_open = dir + "/p.db";
	ck_assert_int_eq(std::rename(path.c_str(), in_open.c_str()), 0);
	auto r = ProfileDb::open_reader(in_open);
	ck_assert(!r.is_ok());
	ck_assert_msg(r.status().message().find("is in " + dir + ", a directory every user can write") !=
			      std::string::npos,
		      "%s", r.status().message().c_str());
	trust_any_file();
	ck_assert(ProfileDb::open_reader(in_open).is_ok());
	std::remove(in_open.c_str());
	rmdir(dir.c_str());
}
END_TEST

int main()
{
	Suite* s = suite_create("profiledb");
	TCase* tc = tcase_create("profiledb");
	tcase_add_test(tc, records_round_trip_and_duplicates_are_ignored);
	tcase_add_test(tc, an_older_schema_is_upgraded_with_its_data);
	tcase_add_test(tc, version_3_keeps_one_of_each_duplicated_checkpoint);
	tcase_add_test(tc, version_4_records_preemptions_with_their_predictions);
	tcase_add_test(tc, version_5_knows_each_epoch_s_node);
	tcase_add_test(tc, bad_files_are_errors_naming_the_file);
	tcase_add_test(tc, a_job_s_rows_are_bounded_newest_first);
	tcase_add_test(tc, a_profile_db_others_could_write_is_refused_in_slurmctld);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
