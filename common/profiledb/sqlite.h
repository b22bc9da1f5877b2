// A small RAII layer over SQLite: a connection, a prepared statement with typed binds and columns,
// and a transaction that rolls back in its destructor unless committed. Every statement's values
// are bound, never spliced into SQL text.
#ifndef DLSCHED_PROFILEDB_SQLITE_H
#define DLSCHED_PROFILEDB_SQLITE_H

#include <cstdint>
#include <string>

#include "util/status.h"

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

namespace dlsched::db {

class Database {
public:
	enum class Mode { kReadOnly, kReadWrite, kCreate };
	// How long a statement waits on another connection's lock before SQLITE_BUSY, by default.
	static constexpr int kBusyTimeoutMs = 5000;

	Database() = default;
	~Database();
	Database(Database&& o) noexcept;
	Database& operator=(Database&& o) noexcept;
	Database(const Database&) = delete;
	Database& operator=(const Database&) = delete;

	// Opens `path`. kReadOnly and kReadWrite need an existing file; errors name the path.
	static Result<Database> open(const std::string& path, Mode mode,
				     int busy_timeout_ms = kBusyTimeoutMs);

	// Runs fixed SQL (schema, pragmas): never text that carries user data.
	Status exec(const std::string& sql);
	// "path: what SQLite says" for the last error on this connection.
	std::string error(const std::string& what) const;
	const std::string& path() const { return path_; }
	sqlite3* handle() const { return db_; }
	// Rows changed by the last INSERT, UPDATE or DELETE.
	int changes() const;

private:
	sqlite3* db_ = nullptr;
	std::string path_;
};

class Statement {
public:
	Statement() = default;
	~Statement();
	Statement(Statement&& o) noexcept;
	Statement& operator=(Statement&& o) noexcept;
	Statement(const Statement&) = delete;
	Statement& operator=(const Statement&) = delete;

	static Result<Statement> prepare(Database& db, const std::string& sql);

	// Parameters are 1-based, as in SQLite.
	Status bind(int i, std::int64_t v);
	Status bind(int i, double v);
	Status bind(int i, const std::string& v);
	Status bind_null(int i);
	// One step: true when a row is ready, false when done.
	Result<bool> step();
	// Steps to the end (INSERT, UPDATE, DELETE).
	Status run();
	void reset();

	std::int64_t column_int(int i) const;
	double column_double(int i) const;
	std::string column_text(int i) const;
	bool column_is_null(int i) const;

private:
	Database* db_ = nullptr;
	sqlite3_stmt* st_ = nullptr;
};

// BEGIN IMMEDIATE on construction (status()); ROLLBACK on destruction unless commit() succeeded.
class Transaction {
public:
	explicit Transaction(Database& db);
	~Transaction();
	Transaction(const Transaction&) = delete;
	Transaction& operator=(const Transaction&) = delete;

	const Status& status() const { return begun_; }
	Status commit();

private:
	Database& db_;
	Status begun_;
	bool open_ = false;
};

}  // namespace dlsched::db

#endif
