#include "store/sqlite.h"

#include <sqlite3.h>

#include <climits>
#include <utility>

namespace pinpoint::store {

namespace {

// "sqlite: /var/lib/pinpoint/pinpoint.db: " so that a daemon log line names the file.
std::string Prefix(sqlite3* db) {
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  if (file == nullptr || *file == '\0') return "sqlite: ";
  return std::string("sqlite: ") + file + ": ";
}

}  // namespace

Status SqliteError(sqlite3* db, std::string_view what) {
  std::string message = Prefix(db);
  message += what;
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  return IoError(std::move(message));
}

// ---- Statement ----

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)),
      db_(other.db_),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    db_ = other.db_;
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::RememberBindError(int rc) {
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = SqliteError(db_, "bind");
}

Statement& Statement::Bind(int index, int64_t value) {
  RememberBindError(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, so the caller's string may go away before Step().
  RememberBindError(
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::BindNull(int index) {
  RememberBindError(sqlite3_bind_null(stmt_, index));
  return *this;
}

Result<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, "step");
}

Status Statement::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

// ---- Db ----

Result<Db> Db::Open(const std::string& path) {
  sqlite3* handle = nullptr;
  // NOMUTEX: one owner per connection, so SQLite's own per-connection locking is wasted work.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status error = IoError("sqlite: open " + path + ": " +
                           (handle != nullptr ? sqlite3_errmsg(handle) : "out of memory"));
    sqlite3_close(handle);
    return error;
  }
  sqlite3_extended_result_codes(handle, 1);
  return Db(handle, path);
}

Db::Db(Db&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

// close_v2: should a Statement outlive its Db by mistake, the connection closes when it goes.
Db::~Db() { sqlite3_close_v2(db_); }

Status Db::Exec(const char* sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return IoError(Prefix(db_) + text);
}

Result<Statement> Db::Prepare(std::string_view sql) {
  if (sql.size() > INT_MAX) return InvalidArgument("SQL text too long");
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, "prepare");
  return Statement(stmt, db_);
}

Result<int64_t> Db::QueryInt64(std::string_view sql) {
  Result<Statement> stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return IoError("sqlite: query returned no row: " + std::string(sql));
  return stmt->ColumnInt64(0);
}

Result<std::string> Db::QueryText(std::string_view sql) {
  Result<Statement> stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return IoError("sqlite: query returned no row: " + std::string(sql));
  return stmt->ColumnText(0);
}

Status Db::SetBusyTimeout(int timeout_ms) {
  if (sqlite3_busy_timeout(db_, timeout_ms) != SQLITE_OK) return SqliteError(db_, "busy timeout");
  return Status::Ok();
}

int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Db::Changes() const { return sqlite3_changes64(db_); }

int Db::LastErrorCode() const { return sqlite3_extended_errcode(db_); }

bool Db::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

// ---- Transaction ----

Result<Transaction> Transaction::Begin(Db* db) {
  if (db->InTransaction()) {
    PP_RETURN_IF_ERROR(db->Exec("SAVEPOINT pp_nested"));
    return Transaction(db, /*nested=*/true);
  }
  PP_RETURN_IF_ERROR(db->Exec("BEGIN IMMEDIATE"));
  return Transaction(db, /*nested=*/false);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), nested_(other.nested_) {}

Transaction::~Transaction() {
  if (db_ == nullptr) return;
  // A failed COMMIT may already have rolled back; the second ROLLBACK's error means nothing.
  // A savepoint is undone and then removed, leaving the outer transaction as it was before it.
  if (nested_) (void)db_->Exec("ROLLBACK TO pp_nested; RELEASE pp_nested");
  else (void)db_->Exec("ROLLBACK");
}

Status Transaction::Commit() {
  PP_RETURN_IF_ERROR(db_->Exec(nested_ ? "RELEASE pp_nested" : "COMMIT"));
  db_ = nullptr;
  return Status::Ok();
}

}  // namespace pinpoint::store
