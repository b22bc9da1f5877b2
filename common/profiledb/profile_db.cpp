#include "profiledb/profile_db.h"

#include "profiledb/experience.h"
#include "util/trusted_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>
#include <tuple>

namespace dlsched::db {

namespace {

// Schema steps: kSteps[i] takes a database from version i to version i + 1. Never edit a released
// step; add one.
const char* const kSteps[] = {
	// 1: jobs, their epochs and their checkpoints.
	"CREATE TABLE jobs ("
	"  cluster TEXT NOT NULL DEFAULT '',"
	"  job_id INTEGER NOT NULL,"
	"  user TEXT NOT NULL DEFAULT '',"
	"  model TEXT NOT NULL DEFAULT '',"
	"  gpus INTEGER NOT NULL CHECK (gpus >= 0),"
	"  nodes INTEGER NOT NULL DEFAULT 1 CHECK (nodes >= 1),"
	"  epochs_total REAL NOT NULL DEFAULT 0,"
	"  submit_s REAL NOT NULL DEFAULT 0,"
	"  start_s REAL NOT NULL DEFAULT 0,"
	"  end_s REAL NOT NULL DEFAULT 0,"
	"  state TEXT NOT NULL DEFAULT '',"
	"  PRIMARY KEY (cluster, job_id));"
	"CREATE INDEX jobs_by_model ON jobs (model, submit_s);"
	"CREATE TABLE epochs ("
	"  cluster TEXT NOT NULL DEFAULT '',"
	"  job_id INTEGER NOT NULL,"
	"  run INTEGER NOT NULL CHECK (run >= 0),"
	"  epoch INTEGER NOT NULL CHECK (epoch >= 1),"
	"  gpus INTEGER NOT NULL CHECK (gpus >= 0),"
	"  start_s REAL NOT NULL,"
	"  end_s REAL NOT NULL CHECK (end_s >= start_s),"
	"  bytes_read INTEGER NOT NULL DEFAULT -1,"
	"  net_rx_bytes INTEGER NOT NULL DEFAULT -1,"
	"  nfs_read_bytes INTEGER NOT NULL DEFAULT -1,"
	"  PRIMARY KEY (cluster, job_id, epoch));"
	"CREATE TABLE checkpoints ("
	"  cluster TEXT NOT NULL DEFAULT '',"
	"  job_id INTEGER NOT NULL,"
	"  run INTEGER NOT NULL CHECK (run >= 0),"
	"  epoch REAL NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('save', 'load')),"
	"  bytes INTEGER NOT NULL CHECK (bytes >= 0),"
	"  seconds REAL NOT NULL CHECK (seconds >= 0),"
	"  at_s REAL NOT NULL);"
	"CREATE INDEX checkpoints_by_job ON checkpoints (cluster, job_id, at_s);",
	// 2: the scheduler's experience (state, action, reward) for online fine-tuning.
	"CREATE TABLE experience ("
	"  cluster TEXT NOT NULL DEFAULT '',"
	"  cycle INTEGER NOT NULL,"
	"  at_s REAL NOT NULL,"
	"  state TEXT NOT NULL,"
	"  action TEXT NOT NULL,"
	"  reward REAL NOT NULL);"
	"CREATE INDEX experience_by_time ON experience (cluster, at_s);",
	// 3: a checkpoint record delivered twice is stored once (collectors retry deliveries).
	"DELETE FROM checkpoints WHERE rowid NOT IN (SELECT min(rowid) FROM checkpoints "
	"  GROUP BY cluster, job_id, run, kind, at_s);"
	"CREATE UNIQUE INDEX checkpoints_once ON checkpoints (cluster, job_id, run, kind, at_s);",
	// 4: the controller's preemptions (two-step: request, then requeue), with what it predicted.
	"CREATE TABLE preemptions ("
	"  cluster TEXT NOT NULL DEFAULT '',"
	"  job_id INTEGER NOT NULL,"
	"  requested_s REAL NOT NULL,"
	"  grace_s REAL NOT NULL DEFAULT 0,"
	"  gpus INTEGER NOT NULL DEFAULT 0 CHECK (gpus >= 0),"
	"  predicted_suspend_s REAL NOT NULL DEFAULT -1,"
	"  predicted_resume_s REAL NOT NULL DEFAULT -1,"
	"  reason TEXT NOT NULL DEFAULT '',"
	"  outcome TEXT NOT NULL DEFAULT '',"
	"  requeued_s REAL NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (cluster, job_id, requested_s));",
	// 5: the node each epoch was measured on (the reporting collector's), for the controller's
	// speed model (gp-placement), and the latest epochs found by time.
	"ALTER TABLE epochs ADD COLUMN node TEXT NOT NULL DEFAULT '';"
	"CREATE INDEX epochs_by_end ON epochs (cluster, end_s);",
};
static_assert(sizeof kSteps / sizeof kSteps[0] == ProfileDb::kSchemaVersion, "one step per schema version");

const std::string kFix = "move it aside; dlsched-ingestd creates a new one";

Result<std::int64_t> pragma_int(Database& db, const char* pragma)
{
	auto st = Statement::prepare(db, std::string("PRAGMA ") + pragma);
	if (!st.is_ok())
		return st.status();
	auto row = st->step();
	if (!row.is_ok())
		return row.status();
	return row.value() ? st->column_int(0) : 0;
}

// Steps `st` to its end, calling row(st) for each row.
template <typename Row>
Status each_row(Statement& st, const Row& row)
{
	for (;;) {
		auto r = st.step();
		if (!r.is_ok())
			return r.status();
		if (!r.value())
			return Status::ok();
		row(st);
	}
}

// Prepares `sql`, whose ?1 and ?2 are a job's cluster and id.
Result<Statement> prepare_for_job(Database& db, const std::string& sql, const std::string& cluster,
				  std::int64_t job_id)
{
	auto st = Statement::prepare(db, sql);
	if (!st.is_ok())
		return st.status();
	Status b = st->bind(1, cluster);
	if (b.is_ok())
		b = st->bind(2, job_id);
	if (!b.is_ok())
		return b;
	return st;
}

// Runs `sql`, whose rows are (name, count), into pairs in row order.
Result<std::vector<std::pair<std::string, int>>> name_counts(Database& db, const char* sql)
{
	auto st = Statement::prepare(db, sql);
	if (!st.is_ok())
		return st.status();
	std::vector<std::pair<std::string, int>> out;
	Status done = each_row(st.value(), [&](const Statement& r) {
		out.emplace_back(r.column_text(0), static_cast<int>(r.column_int(1)));
	});
	if (!done.is_ok())
		return done;
	return out;
}

}  // namespace

namespace {

// "ORDER BY <newest first> LIMIT n" (the callers put the rows back in time order); the limit is a
// number formatted here, never caller text. 0: no limit.
std::string newest_first(const char* order, std::size_t limit)
{
	std::string s = std::string("ORDER BY ") + order;
	if (limit)
		s += " LIMIT " + std::to_string(limit);
	return s;
}

}  // namespace

Result<ProfileDb> ProfileDb::open_checked(const std::string& path, Database::Mode mode, bool migrate,
					  int busy_ms, bool check)
{
	// In slurmctld: a file that a user could write is never read (util/trusted_file.h).
	if (Status trust = check_profile_db(path); !trust.is_ok())
		return trust;
	auto db = Database::open(path, mode, busy_ms);
	if (!db.is_ok())
		return db.status();
	ProfileDb p;
	p.db_ = std::move(db.value());
	// A file that is not SQLite, or damaged, fails here (quick_check reads every page's structure).
	// Each statement is finished before the next step: an open one holds a read transaction.
	if (check) {
		auto qc = Statement::prepare(p.db_, "PRAGMA quick_check");
		Result<bool> row = qc.is_ok() ? qc->step() : Result<bool>(qc.status());
		if (!row.is_ok() || !row.value() || qc->column_text(0) != "ok") {
			std::string why =
				row.is_ok() && row.value() ? qc->column_text(0) : row.status().message();
			return io_error(path + ": not a readable dlsched profile database (" + why + "); " +
					kFix);
		}
	}
	auto app = pragma_int(p.db_, "application_id");
	auto version = pragma_int(p.db_, "user_version");
	std::int64_t n_tables = -1;
	{
		auto tables = Statement::prepare(p.db_, "SELECT count(*) FROM sqlite_master");
		auto t = tables.is_ok() ? tables->step() : Result<bool>(tables.status());
		if (t.is_ok() && t.value())
			n_tables = tables->column_int(0);
	}
	if (!app.is_ok() || !version.is_ok() || n_tables < 0)
		return io_error(path + ": cannot read the schema; " + kFix);
	if (app.value() != kApplicationId && !(app.value() == 0 && n_tables == 0))
		return invalid_argument(
			path + ": an SQLite file, but not a dlsched profile database (application_id " +
			std::to_string(app.value()) + "); give ProfileDB= another path");
	p.version_ = static_cast<int>(version.value());
	if (p.version_ > kSchemaVersion)
		return invalid_argument(path + ": profile database schema version " +
					std::to_string(p.version_) + " is newer than this dlsched's (" +
					std::to_string(kSchemaVersion) + "); upgrade dlsched");
	if (!migrate) {
		if (p.version_ == 0)
			return invalid_argument(
				path + ": an empty database, not yet initialised by dlsched-ingestd");
		return p;
	}
	Status st = p.db_.exec("PRAGMA journal_mode=WAL");
	// Every writer's commit is on disk when it returns: dlsched-ingestd answers 200 only then, and
	// the collector then deletes its copy; a checkpoint report lost to a power cut would leave
	// sched/dlsched waiting for it until the grace ends. (SQLite's default in WAL mode, NORMAL, may
	// lose the last commits.) Per connection: set at every open.
	if (st.is_ok())
		st = p.db_.exec("PRAGMA synchronous=FULL");
	if (st.is_ok())
		st = p.migrate_to(kSchemaVersion);
	if (!st.is_ok())
		return st;
	return p;
}

Status ProfileDb::migrate_to(int version)
{
	if (version_ >= version)
		return Status::ok();
	Transaction tx(db_);
	if (!tx.status().is_ok())
		return tx.status();
	for (int v = version_; v < version; ++v) {
		Status st = db_.exec(kSteps[v]);
		if (!st.is_ok())
			return io_error(path() + ": upgrading the schema from version " + std::to_string(v) +
					": " + st.message());
	}
	// PRAGMA values cannot be bound parameters; both are integers formatted here.
	Status st = db_.exec("PRAGMA application_id=" + std::to_string(kApplicationId) +
			     ";PRAGMA user_version=" + std::to_string(version));
	if (st.is_ok())
		st = tx.commit();
	if (st.is_ok())
		version_ = version;
	return st;
}

Result<ProfileDb> ProfileDb::open_writer(const std::string& path, int busy_timeout_ms, bool check)
{
	return open_checked(path, Database::Mode::kCreate, true, busy_timeout_ms, check);
}

Result<ProfileDb> ProfileDb::open_reader(const std::string& path, int busy_timeout_ms, bool check)
{
	struct stat sb;
	if (stat(path.c_str(), &sb) != 0)
		return not_found(path +
				 ": no profile database there (ProfileDB=; dlsched-ingestd creates it)");
	return open_checked(path, Database::Mode::kReadOnly, false, busy_timeout_ms, check);
}

Result<ProfileDb> ProfileDb::create_at_version(const std::string& path, int version)
{
	if (version < 1 || version > kSchemaVersion)
		return invalid_argument("schema version " + std::to_string(version) + " does not exist");
	auto db = Database::open(path, Database::Mode::kCreate);
	if (!db.is_ok())
		return db.status();
	ProfileDb p;
	p.db_ = std::move(db.value());
	Status st = p.migrate_to(version);
	if (!st.is_ok())
		return st;
	return p;
}

Status ProfileDb::put_job(const JobRecord& j)
{
	auto st = Statement::prepare(
		db_,
		"INSERT OR REPLACE INTO jobs (cluster, job_id, user, model, gpus, nodes, epochs_total, "
		"submit_s, start_s, end_s, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
	if (!st.is_ok())
		return st.status();
	Statement& s = st.value();
	Status b = s.bind(1, j.cluster);
	if (b.is_ok())
		b = s.bind(2, j.job_id);
	if (b.is_ok())
		b = s.bind(3, j.user);
	if (b.is_ok())
		b = s.bind(4, j.model);
	if (b.is_ok())
		b = s.bind(5, static_cast<std::int64_t>(j.gpus));
	if (b.is_ok())
		b = s.bind(6, static_cast<std::int64_t>(j.nodes));
	if (b.is_ok())
		b = s.bind(7, j.epochs_total);
	if (b.is_ok())
		b = s.bind(8, j.submit_s);
	if (b.is_ok())
		b = s.bind(9, j.start_s);
	if (b.is_ok())
		b = s.bind(10, j.end_s);
	if (b.is_ok())
		b = s.bind(11, j.state);
	return b.is_ok() ? s.run() : b;
}

Result<bool> ProfileDb::add_epoch(const EpochRecord& e)
{
	// The node from version 5 on (a database made at an older version for a test has no column).
	auto st = Statement::prepare(
		db_, std::string("INSERT INTO epochs (cluster, job_id, run, epoch, gpus, start_s, "
				 "end_s, bytes_read, net_rx_bytes, nfs_read_bytes") +
			     (version_ >= 5 ? ", node" : "") +
			     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10" +
			     (version_ >= 5 ? ", ?11" : "") +
			     ") "
			     // Only a duplicate is skipped; a CHECK failure stays an error.
			     "ON CONFLICT DO NOTHING");
	if (!st.is_ok())
		return st.status();
	Statement& s = st.value();
	Status b = s.bind(1, e.cluster);
	if (b.is_ok())
		b = s.bind(2, e.job_id);
	if (b.is_ok())
		b = s.bind(3, static_cast<std::int64_t>(e.run));
	if (b.is_ok())
		b = s.bind(4, static_cast<std::int64_t>(e.epoch));
	if (b.is_ok())
		b = s.bind(5, static_cast<std::int64_t>(e.gpus));
	if (b.is_ok())
		b = s.bind(6, e.start_s);
	if (b.is_ok())
		b = s.bind(7, e.end_s);
	if (b.is_ok())
		b = s.bind(8, e.bytes_read);
	if (b.is_ok())
		b = s.bind(9, e.net_rx_bytes);
	if (b.is_ok())
		b = s.bind(10, e.nfs_read_bytes);
	if (b.is_ok() && version_ >= 5)
		b = s.bind(11, e.node);
	if (b.is_ok())
		b = s.run();
	if (!b.is_ok())
		return b;
	return db_.changes() > 0;
}

Result<bool> ProfileDb::add_checkpoint(const CheckpointRecord& c)
{
	auto st = Statement::prepare(
		db_,
		"INSERT INTO checkpoints (cluster, job_id, run, epoch, kind, bytes, seconds, at_s) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING");
	if (!st.is_ok())
		return st.status();
	Statement& s = st.value();
	Status b = s.bind(1, c.cluster);
	if (b.is_ok())
		b = s.bind(2, c.job_id);
	if (b.is_ok())
		b = s.bind(3, static_cast<std::int64_t>(c.run));
	if (b.is_ok())
		b = s.bind(4, c.epoch);
	if (b.is_ok())
		b = s.bind(5, c.kind);
	if (b.is_ok())
		b = s.bind(6, c.bytes);
	if (b.is_ok())
		b = s.bind(7, c.seconds);
	if (b.is_ok())
		b = s.bind(8, c.at_s);
	if (b.is_ok())
		b = s.run();
	if (!b.is_ok())
		return b;
	return db_.changes() > 0;
}

Status ProfileDb::add_experience(const std::string& cluster, const PolicyStep& step)
{
	auto st = Statement::prepare(db_,
				     "INSERT INTO experience (cluster, cycle, at_s, state, action, reward) "
				     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	if (!st.is_ok())
		return st.status();
	Statement& s = st.value();
	Status b = s.bind(1, cluster);
	if (b.is_ok())
		b = s.bind(2, static_cast<std::int64_t>(step.cycle));
	if (b.is_ok())
		b = s.bind(3, step.now);
	if (b.is_ok())
		b = s.bind(4, experience_state(step).dump(0));
	if (b.is_ok())
		b = s.bind(5, experience_action(step).dump(0));
	if (b.is_ok())
		b = s.bind(6, experience_reward(step));
	return b.is_ok() ? s.run() : b;
}

Status ProfileDb::add_experience(const std::string& cluster, const std::vector<PolicyStep>& steps)
{
	Transaction tx = transaction();
	Status st = tx.status();
	for (std::size_t i = 0; st.is_ok() && i < steps.size(); ++i)
		st = add_experience(cluster, steps[i]);
	return st.is_ok() ? tx.commit() : st;
}

Result<std::vector<PolicyStep>> ProfileDb::experience(const std::string& cluster, double since_s,
						      std::size_t limit)
{
	std::string sql =
		"SELECT rowid, cycle, at_s, state, action FROM experience WHERE cluster = ?1 AND at_s >= ?2 "
		"ORDER BY at_s, cycle, rowid";
	if (limit)
		sql += " LIMIT " + std::to_string(limit);  // a number formatted here, not caller text
	auto st = Statement::prepare(db_, sql);
	if (!st.is_ok())
		return st.status();
	Status b = st->bind(1, cluster);
	if (b.is_ok())
		b = st->bind(2, since_s);
	if (!b.is_ok())
		return b;
	std::vector<PolicyStep> out;
	Status bad_row;
	Status done = each_row(st.value(), [&](const Statement& r) {
		if (!bad_row.is_ok())
			return;
		PolicyStep step;
		step.cycle = static_cast<std::uint64_t>(r.column_int(1));
		step.now = r.column_double(2);
		Status p = parse_experience(r.column_text(3), r.column_text(4), step);
		if (!p.is_ok()) {
			bad_row = Status(p.code(), path() + ": experience row " +
							   std::to_string(r.column_int(0)) + ": " +
							   p.message());
			return;
		}
		out.push_back(std::move(step));
	});
	if (!done.is_ok())
		return done;
	if (!bad_row.is_ok())
		return bad_row;
	return out;
}

Result<std::vector<std::pair<std::string, int>>> ProfileDb::experience_clusters()
{
	return name_counts(db_, "SELECT cluster, count(*) FROM experience GROUP BY cluster ORDER BY cluster");
}

Result<std::vector<std::pair<std::string, int>>> ProfileDb::models()
{
	return name_counts(
		db_,
		"SELECT j.model, count(*) FROM jobs j WHERE EXISTS (SELECT 1 FROM epochs e WHERE "
		"e.cluster = j.cluster AND e.job_id = j.job_id) GROUP BY j.model ORDER BY j.model");
}

const char* ProfileDb::node_column() const
{
	return version_ >= 5 ? "node" : "''";
}

Result<std::vector<EpochRecord>> ProfileDb::epochs_of(const std::string& cluster, std::int64_t job_id,
						      std::size_t limit)
{
	auto st = prepare_for_job(
		db_,
		std::string("SELECT run, epoch, gpus, start_s, end_s, bytes_read, net_rx_bytes, "
			    "nfs_read_bytes, ") +
			node_column() + " FROM epochs WHERE cluster = ?1 AND job_id = ?2 " +
			newest_first("epoch DESC", limit),
		cluster, job_id);
	if (!st.is_ok())
		return st.status();
	std::vector<EpochRecord> out;
	Status done = each_row(st.value(), [&](const Statement& r) {
		EpochRecord e;
		e.cluster = cluster;
		e.job_id = job_id;
		e.run = static_cast<int>(r.column_int(0));
		e.epoch = static_cast<int>(r.column_int(1));
		e.gpus = static_cast<int>(r.column_int(2));
		e.start_s = r.column_double(3);
		e.end_s = r.column_double(4);
		e.bytes_read = r.column_int(5);
		e.net_rx_bytes = r.column_int(6);
		e.nfs_read_bytes = r.column_int(7);
		e.node = r.column_text(8);
		out.push_back(e);
	});
	if (!done.is_ok())
		return done;
	std::reverse(out.begin(), out.end());
	return out;
}

Result<std::vector<CheckpointRecord>> ProfileDb::checkpoints_of(const std::string& cluster,
								std::int64_t job_id, std::size_t limit)
{
	auto st = prepare_for_job(
		db_,
		"SELECT run, epoch, kind, bytes, seconds, at_s FROM checkpoints WHERE cluster = ?1 "
		"AND job_id = ?2 " +
			newest_first("at_s DESC, rowid DESC", limit),
		cluster, job_id);
	if (!st.is_ok())
		return st.status();
	std::vector<CheckpointRecord> out;
	Status done = each_row(st.value(), [&](const Statement& r) {
		CheckpointRecord c;
		c.cluster = cluster;
		c.job_id = job_id;
		c.run = static_cast<int>(r.column_int(0));
		c.epoch = r.column_double(1);
		c.kind = r.column_text(2);
		c.bytes = r.column_int(3);
		c.seconds = r.column_double(4);
		c.at_s = r.column_double(5);
		out.push_back(c);
	});
	if (!done.is_ok())
		return done;
	std::reverse(out.begin(), out.end());
	return out;
}

namespace {
JobRecord job_from_row(const Statement& s)
{
	JobRecord j;
	j.cluster = s.column_text(0);
	j.job_id = s.column_int(1);
	j.user = s.column_text(2);
	j.model = s.column_text(3);
	j.gpus = static_cast<int>(s.column_int(4));
	j.nodes = static_cast<int>(s.column_int(5));
	j.epochs_total = s.column_double(6);
	j.submit_s = s.column_double(7);
	j.start_s = s.column_double(8);
	j.end_s = s.column_double(9);
	j.state = s.column_text(10);
	return j;
}
const char kJobColumns[] =
	"cluster, job_id, user, model, gpus, nodes, epochs_total, submit_s, start_s, end_s, state";
}  // namespace

Result<JobRecord> ProfileDb::job_record(const std::string& cluster, std::int64_t job_id)
{
	auto st = prepare_for_job(
		db_, std::string("SELECT ") + kJobColumns + " FROM jobs WHERE cluster = ?1 AND job_id = ?2",
		cluster, job_id);
	if (!st.is_ok())
		return st.status();
	auto row = st->step();
	if (!row.is_ok())
		return row.status();
	if (!row.value())
		return not_found(path() + ": no job " + std::to_string(job_id) +
				 (cluster.empty() ? std::string() : " on cluster " + cluster));
	return job_from_row(st.value());
}

Status ProfileDb::forget_job(const std::string& cluster, std::int64_t job_id)
{
	for (const char* table : {"epochs", "checkpoints", "preemptions", "jobs"}) {
		auto st = prepare_for_job(
			db_, std::string("DELETE FROM ") + table + " WHERE cluster = ?1 AND job_id = ?2",
			cluster, job_id);
		if (!st.is_ok())
			return st.status();
		Status run = st->run();
		if (!run.is_ok())
			return run;
	}
	return Status::ok();
}

Status ProfileDb::add_preemption(const PreemptionRecord& p)
{
	auto st = Statement::prepare(
		db_,
		"INSERT OR REPLACE INTO preemptions (cluster, job_id, requested_s, grace_s, gpus, "
		"predicted_suspend_s, predicted_resume_s, reason, outcome, requeued_s) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
	if (!st.is_ok())
		return st.status();
	Statement& s = st.value();
	Status b = s.bind(1, p.cluster);
	if (b.is_ok())
		b = s.bind(2, p.job_id);
	if (b.is_ok())
		b = s.bind(3, p.requested_s);
	if (b.is_ok())
		b = s.bind(4, p.grace_s);
	if (b.is_ok())
		b = s.bind(5, static_cast<std::int64_t>(p.gpus));
	if (b.is_ok())
		b = s.bind(6, p.predicted_suspend_s);
	if (b.is_ok())
		b = s.bind(7, p.predicted_resume_s);
	if (b.is_ok())
		b = s.bind(8, p.reason);
	if (b.is_ok())
		b = s.bind(9, p.outcome);
	if (b.is_ok())
		b = s.bind(10, p.requeued_s);
	return b.is_ok() ? s.run() : b;
}

Status ProfileDb::finish_preemption(const std::string& cluster, std::int64_t job_id, double requested_s,
				    const std::string& outcome, double requeued_s)
{
	auto st = Statement::prepare(
		db_,
		"UPDATE preemptions SET outcome = ?4, requeued_s = ?5 WHERE cluster = ?1 AND "
		"job_id = ?2 AND requested_s = ?3");
	if (!st.is_ok())
		return st.status();
	Statement& s = st.value();
	Status b = s.bind(1, cluster);
	if (b.is_ok())
		b = s.bind(2, job_id);
	if (b.is_ok())
		b = s.bind(3, requested_s);
	if (b.is_ok())
		b = s.bind(4, outcome);
	if (b.is_ok())
		b = s.bind(5, requeued_s);
	return b.is_ok() ? s.run() : b;
}

Result<std::vector<PreemptionRecord>> ProfileDb::preemptions_of(const std::string& cluster,
								std::int64_t job_id, std::size_t limit)
{
	auto st = prepare_for_job(
		db_,
		std::string("SELECT requested_s, grace_s, gpus, predicted_suspend_s, "
			    "predicted_resume_s, reason, outcome, requeued_s FROM preemptions "
			    "WHERE cluster = ?1 AND job_id = ?2 ") +
			newest_first("requested_s DESC", limit),
		cluster, job_id);
	if (!st.is_ok())
		return st.status();
	std::vector<PreemptionRecord> out;
	Status done = each_row(st.value(), [&](const Statement& r) {
		PreemptionRecord p;
		p.cluster = cluster;
		p.job_id = job_id;
		p.requested_s = r.column_double(0);
		p.grace_s = r.column_double(1);
		p.gpus = static_cast<int>(r.column_int(2));
		p.predicted_suspend_s = r.column_double(3);
		p.predicted_resume_s = r.column_double(4);
		p.reason = r.column_text(5);
		p.outcome = r.column_text(6);
		p.requeued_s = r.column_double(7);
		out.push_back(p);
	});
	if (!done.is_ok())
		return done;
	std::reverse(out.begin(), out.end());
	return out;
}

Result<JobProfile> ProfileDb::job(const std::string& cluster, std::int64_t job_id, std::size_t row_limit)
{
	auto j = job_record(cluster, job_id);
	if (!j.is_ok())
		return j.status();
	JobProfile p;
	p.job = std::move(j.value());
	Status st_fill = fill(p, row_limit);
	if (!st_fill.is_ok())
		return st_fill;
	return p;
}

Status ProfileDb::fill(JobProfile& p, std::size_t limit)
{
	auto e = epochs_of(p.job.cluster, p.job.job_id, limit);
	if (!e.is_ok())
		return e.status();
	auto c = checkpoints_of(p.job.cluster, p.job.job_id, limit);
	if (!c.is_ok())
		return c.status();
	auto pr = preemptions_of(p.job.cluster, p.job.job_id, limit);
	if (!pr.is_ok())
		return pr.status();
	p.epochs = std::move(e.value());
	p.checkpoints = std::move(c.value());
	p.preemptions = std::move(pr.value());
	return Status::ok();
}

Result<std::vector<JobProfile>> ProfileDb::model_history(const std::string& model, std::size_t limit)
{
	std::string sql =
		std::string("SELECT ") + kJobColumns +
		" FROM jobs j WHERE model = ?1 AND EXISTS (SELECT 1 FROM epochs e WHERE "
		"e.cluster = j.cluster AND e.job_id = j.job_id) ORDER BY submit_s DESC, job_id DESC";
	if (limit)
		sql += " LIMIT " + std::to_string(limit);  // a number formatted here, not caller text
	auto st = Statement::prepare(db_, sql);
	if (!st.is_ok())
		return st.status();
	Status b = st->bind(1, model);
	if (!b.is_ok())
		return b;
	std::vector<JobProfile> out;
	Status done = each_row(st.value(), [&](const Statement& r) {
		out.push_back(JobProfile{job_from_row(r), {}, {}, {}});
	});
	if (!done.is_ok())
		return done;
	for (JobProfile& p : out) {
		Status f = fill(p, kJobRowLimit);
		if (!f.is_ok())
			return f;
	}
	return out;
}

Result<std::vector<NodeRun>> ProfileDb::recent_node_runs(const std::string& cluster, std::size_t runs,
							 std::size_t max_rows)
{
	std::vector<NodeRun> out;
	if (version_ < 5 || runs == 0)
		return out;  // no epoch knows its node before schema 5
	// The latest epochs first (epochs_by_end), until `runs` distinct runs-on-a-node are found.
	auto latest =
		Statement::prepare(db_,
				   "SELECT job_id, run, node FROM epochs WHERE cluster = ?1 AND node != '' "
				   "ORDER BY end_s DESC, job_id DESC, epoch DESC");
	if (!latest.is_ok())
		return latest.status();
	Status b = latest->bind(1, cluster);
	if (!b.is_ok())
		return b;
	std::set<std::tuple<std::int64_t, int, std::string>> seen;
	for (std::size_t rows = 0; out.size() < runs && rows < max_rows; ++rows) {
		auto r = latest->step();
		if (!r.is_ok())
			return r.status();
		if (!r.value())
			break;
		NodeRun n;
		n.job_id = latest->column_int(0);
		n.run = static_cast<int>(latest->column_int(1));
		n.node = latest->column_text(2);
		if (seen.insert(std::make_tuple(n.job_id, n.run, n.node)).second)
			out.push_back(std::move(n));
	}
	// Each run's epochs on its node (the jobs' primary key), and its job's model and node count.
	auto epochs =
		Statement::prepare(db_,
				   "SELECT epoch, gpus, start_s, end_s FROM epochs WHERE cluster = ?1 AND "
				   "job_id = ?2 AND run = ?3 AND node = ?4 ORDER BY epoch");
	if (!epochs.is_ok())
		return epochs.status();
	for (NodeRun& n : out) {
		auto job = job_record(cluster, n.job_id);
		if (job.is_ok()) {
			n.model = job->model;
			n.user = job->user;
			n.nodes = job->nodes;
		} else if (job.status().code() != StatusCode::kNotFound) {
			return job.status();
		}
		epochs->reset();
		Status reset = epochs->bind(1, cluster);
		if (reset.is_ok())
			reset = epochs->bind(2, n.job_id);
		if (reset.is_ok())
			reset = epochs->bind(3, static_cast<std::int64_t>(n.run));
		if (reset.is_ok())
			reset = epochs->bind(4, n.node);
		if (!reset.is_ok())
			return reset;
		Status done = each_row(epochs.value(), [&](const Statement& r) {
			EpochRecord e;
			e.cluster = cluster;
			e.job_id = n.job_id;
			e.run = n.run;
			e.epoch = static_cast<int>(r.column_int(0));
			e.gpus = static_cast<int>(r.column_int(1));
			e.start_s = r.column_double(2);
			e.end_s = r.column_double(3);
			e.node = n.node;
			n.epochs.push_back(e);
		});
		if (!done.is_ok())
			return done;
	}
	return out;
}

Status ProfileDb::vacuum()
{
	return db_.exec("VACUUM");
}

Status ProfileDb::backup(const std::string& dest)
{
	struct stat st;
	if (dest.empty() || ::stat(dest.c_str(), &st) == 0)
		return invalid_argument(
			"backup: " + (dest.empty() ? std::string("no file given") : dest + " exists") +
			"; give a new file name");
	auto s = Statement::prepare(db_, "VACUUM INTO ?1");
	if (!s.is_ok())
		return s.status();
	if (Status b = s->bind(1, dest); !b.is_ok())
		return b;
	if (Status r = s->run(); !r.is_ok())
		return io_error("backup to " + dest + ": " + r.message());
	return Status::ok();
}

namespace {
std::string csv_cell(const Statement& s, int i)
{
	std::string t = s.column_text(i);
	if (t.find_first_of(",\"\n\r") == std::string::npos)
		return t;
	std::string q = "\"";
	for (char c : t)
		q += c == '"' ? std::string("\"\"") : std::string(1, c);
	return q + "\"";
}
}  // namespace

Status ProfileDb::export_csv(const std::string& table, std::ostream& out)
{
	const char* cols = nullptr;
	const char* order = nullptr;
	if (table == "jobs") {
		cols = kJobColumns;
		order = "cluster, job_id";
	} else if (table == "epochs") {
		// The node last (from schema 5 on): scripts read the columns before it by position.
		cols = version_ >= 5 ? "cluster, job_id, run, epoch, gpus, start_s, end_s, bytes_read, "
				       "net_rx_bytes, "
				       "nfs_read_bytes, node"
				     : "cluster, job_id, run, epoch, gpus, start_s, end_s, bytes_read, "
				       "net_rx_bytes, "
				       "nfs_read_bytes";
		order = "cluster, job_id, epoch";
	} else if (table == "checkpoints") {
		cols = "cluster, job_id, run, epoch, kind, bytes, seconds, at_s";
		order = "cluster, job_id, at_s, rowid";
	} else if (table == "preemptions") {
		cols = "cluster, job_id, requested_s, grace_s, gpus, predicted_suspend_s, "
		       "predicted_resume_s, reason, outcome, "
		       "requeued_s";
		order = "cluster, job_id, requested_s";
	} else {
		return invalid_argument("unknown table '" + table +
					"' (known: jobs, epochs, checkpoints, preemptions)");
	}
	// The table and column names come from the fixed list above, never from the caller.
	auto st = Statement::prepare(db_,
				     std::string("SELECT ") + cols + " FROM " + table + " ORDER BY " + order);
	if (!st.is_ok())
		return st.status();
	std::string header = cols;
	for (std::size_t p; (p = header.find(", ")) != std::string::npos;)
		header.replace(p, 2, ",");
	out << header << "\n";
	const int n = static_cast<int>(std::count(header.begin(), header.end(), ',')) + 1;
	Status done = each_row(st.value(), [&](const Statement& r) {
		for (int i = 0; i < n; ++i)
			out << (i ? "," : "") << csv_cell(r, i);
		out << "\n";
	});
	if (!done.is_ok())
		return done;
	return out ? Status::ok() : io_error("writing the CSV export failed");
}

}  // namespace dlsched::db
