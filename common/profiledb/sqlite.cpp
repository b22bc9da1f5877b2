#include "profiledb/sqlite.h"

#include <sqlite3.h>

#include <utility>

namespace dlsched::db {

Database::~Database()
{
	if (db_)
		sqlite3_close_v2(db_);
}

Database::Database(Database&& o) noexcept : db_(o.db_), path_(std::move(o.path_))
{
	o.db_ = nullptr;
}

Database& Database::operator=(Database&& o) noexcept
{
	if (this != &o) {
		if (db_)
			sqlite3_close_v2(db_);
		db_ = o.db_;
		path_ = std::move(o.path_);
		o.db_ = nullptr;
	}
	return *this;
}

Result<Database> Database::open(const std::string& path, Mode mode, int busy_timeout_ms)
{
	int flags = SQLITE_OPEN_NOMUTEX;
	switch (mode) {
		case Mode::kReadOnly:
			flags |= SQLITE_OPEN_READONLY;
			break;
		case Mode::kReadWrite:
			flags |= SQLITE_OPEN_READWRITE;
			break;
		case Mode::kCreate:
			flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
			break;
	}
	Database d;
	d.path_ = path;
	const int rc = sqlite3_open_v2(path.c_str(), &d.db_, flags, nullptr);
	if (rc != SQLITE_OK) {
		std::string why = d.db_ ? sqlite3_errmsg(d.db_) : sqlite3_errstr(rc);
		if (rc == SQLITE_CANTOPEN)
			return not_found(path + ": cannot open the profile database (" + why + ")");
		return io_error(path + ": " + why);
	}
	// A reader and the single writer (dlsched-ingestd) meet on a busy database: wait, do not fail.
	sqlite3_busy_timeout(d.db_, busy_timeout_ms);
	return d;
}

Status Database::exec(const std::string& sql)
{
	char* msg = nullptr;
	if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
		std::string m = path_ + ": " + (msg ? msg : "error");
		sqlite3_free(msg);
		return io_error(m);
	}
	return Status::ok();
}

int Database::changes() const
{
	return db_ ? sqlite3_changes(db_) : 0;
}

std::string Database::error(const std::string& what) const
{
	return path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "not open");
}

Statement::~Statement()
{
	if (st_)
		sqlite3_finalize(st_);
}

Statement::Statement(Statement&& o) noexcept : db_(o.db_), st_(o.st_)
{
	o.st_ = nullptr;
}

Statement& Statement::operator=(Statement&& o) noexcept
{
	if (this != &o) {
		if (st_)
			sqlite3_finalize(st_);
		db_ = o.db_;
		st_ = o.st_;
		o.st_ = nullptr;
	}
	return *this;
}

Result<Statement> Statement::prepare(Database& db, const std::string& sql)
{
	Statement s;
	s.db_ = &db;
	if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &s.st_, nullptr) != SQLITE_OK)
		return io_error(db.error("preparing a statement"));
	return s;
}

namespace {
Status bound(int rc, const Database* db)
{
	return rc == SQLITE_OK ? Status::ok() : io_error(db->error("binding a value"));
}
}  // namespace

Status Statement::bind(int i, std::int64_t v)
{
	return bound(sqlite3_bind_int64(st_, i, v), db_);
}

Status Statement::bind(int i, double v)
{
	return bound(sqlite3_bind_double(st_, i, v), db_);
}

Status Statement::bind(int i, const std::string& v)
{
	return bound(sqlite3_bind_text(st_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT), db_);
}

Status Statement::bind_null(int i)
{
	return bound(sqlite3_bind_null(st_, i), db_);
}

Result<bool> Statement::step()
{
	const int rc = sqlite3_step(st_);
	if (rc == SQLITE_ROW)
		return true;
	if (rc == SQLITE_DONE)
		return false;
	if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
		return io_error(db_->error("the database is corrupt"));
	return io_error(db_->error("running a statement"));
}

Status Statement::run()
{
	for (;;) {
		auto r = step();
		if (!r.is_ok())
			return r.status();
		if (!r.value())
			return Status::ok();
	}
}

void Statement::reset()
{
	sqlite3_reset(st_);
	sqlite3_clear_bindings(st_);
}

std::int64_t Statement::column_int(int i) const
{
	return sqlite3_column_int64(st_, i);
}

double Statement::column_double(int i) const
{
	return sqlite3_column_double(st_, i);
}

std::string Statement::column_text(int i) const
{
	const unsigned char* t = sqlite3_column_text(st_, i);
	return t ? std::string(reinterpret_cast<const char*>(t),
			       static_cast<std::size_t>(sqlite3_column_bytes(st_, i)))
		 : std::string();
}

bool Statement::column_is_null(int i) const
{
	return sqlite3_column_type(st_, i) == SQLITE_NULL;
}

Transaction::Transaction(Database& db) : db_(db)
{
	begun_ = db_.exec("BEGIN IMMEDIATE");
	open_ = begun_.is_ok();
}

Transaction::~Transaction()
{
	if (open_)
		(void)db_.exec("ROLLBACK");
}

Status Transaction::commit()
{
	if (!open_)
		return begun_.is_ok() ? internal_error(db_.path() + ": commit of a finished transaction")
				      : begun_;
	Status st = db_.exec("COMMIT");
	if (st.is_ok())
		open_ = false;
	return st;
}

}  // namespace dlsched::db
