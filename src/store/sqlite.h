// A thin RAII layer over the SQLite C API for the store: one connection (Db), one prepared
// statement (Statement), and a transaction guard. Every SQLite failure becomes a kIo Status that
// carries SQLite's own message. Nothing here throws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "pinpoint/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace pinpoint::store {

class StatementCache;

// One prepared statement. Bind values with 1-based indexes, then Step() or Run(). A bind error is
// remembered and returned by the next Step()/Run(). On destruction it is reset and goes back to
// its Db's cache (or is finalized); it must not outlive the Db that prepared it. Not thread-safe.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view text);
  Statement& BindNull(int index);

  // Advances one row: true when a row is available, false when done. Errors: kIo.
  Result<bool> Step();
  // Steps to completion, for statements that return no rows. Errors: kIo.
  Status Run();

  // Column reads of the current row, 0-based. NULL reads as 0 / "".
  int64_t ColumnInt64(int column) const;
  std::string ColumnText(int column) const;
  bool ColumnIsNull(int column) const;

 private:
  friend class Db;
  Statement(sqlite3_stmt* stmt, sqlite3* db, StatementCache* cache, std::string sql)
      : stmt_(stmt), db_(db), cache_(cache), sql_(std::move(sql)) {}
  void RememberBindError(int rc);
  void Release();  // back to the cache, or finalized

  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
  StatementCache* cache_ = nullptr;  // null: finalized when done
  std::string sql_;                  // the cache's key
  Status bind_error_;
};

// One SQLite connection. Closed on destruction (statements must be gone by then). Not
// thread-safe: one owner.
class Db {
 public:
  // Opens (creating when absent) the database file at `path`. SQLite reads nothing yet, so a
  // file that is not a database is only noticed by the first query. Errors: kIo.
  static Result<Db> Open(const std::string& path);
  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Runs SQL text that carries no values (DDL, pragmas with constants, BEGIN/COMMIT); may hold
  // several statements. Errors: kIo.
  Status Exec(const char* sql);
  // Errors: kIo (e.g. a syntax error, or "file is not a database"). A statement of the same text
  // prepared before and done with is reused (the connection keeps up to kCachedStatements of
  // them), so a write repeated for each of many jobs compiles its SQL once.
  Result<Statement> Prepare(std::string_view sql);
  static constexpr size_t kCachedStatements = 64;
  // Runs a query that returns one integer (e.g. "PRAGMA user_version"). Errors: kIo.
  Result<int64_t> QueryInt64(std::string_view sql);
  // Runs a query that returns one text value (e.g. "PRAGMA journal_mode=WAL"). Errors: kIo.
  Result<std::string> QueryText(std::string_view sql);

  Status SetBusyTimeout(int timeout_ms);
  int64_t LastInsertRowId() const;
  // Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  int64_t Changes() const;
  // The extended result code of the last failed call (e.g. SQLITE_NOTADB,
  // SQLITE_CONSTRAINT_FOREIGNKEY), for callers that map some failures to other codes.
  int LastErrorCode() const;
  // Whether a transaction is open on this connection (SQLite may end one on its own after some
  // failures, e.g. SQLITE_FULL).
  bool InTransaction() const;
  const std::string& path() const { return path_; }

 private:
  Db(sqlite3* db, std::string path);

  sqlite3* db_ = nullptr;
  std::string path_;
  std::unique_ptr<StatementCache> cache_;  // its address stays when the Db moves
};

// A write transaction (BEGIN IMMEDIATE, so that another writer is met at BEGIN, under the busy
// timeout, rather than part way through). Rolled back on destruction unless Commit() succeeded.
// Begun while another transaction is open on the connection, it is a savepoint inside it: its
// Commit releases the savepoint (durable only when the outer one commits) and its rollback
// undoes only its own writes. Transactions nest strictly (the inner one ends first). The Db must
// outlive it.
class Transaction {
 public:
  static Result<Transaction> Begin(Db* db);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // Errors: kIo; the transaction is then rolled back by the destructor.
  Status Commit();

 private:
  Transaction(Db* db, bool nested) : db_(db), nested_(nested) {}
  Db* db_ = nullptr;  // null once committed or moved from
  bool nested_ = false;
};

// A kIo Status "sqlite: <what>: <message of the last error on db>".
Status SqliteError(sqlite3* db, std::string_view what);

}  // namespace pinpoint::store
