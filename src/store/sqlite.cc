#include "store/sqlite.h"

#include <sqlite3.h>

#include <climits>
#include <unordered_map>
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

// Statements done with, by their SQL text: reset (no read transaction held) and unbound.
class StatementCache {
 public:
  StatementCache() = default;
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;
  ~StatementCache() {
    for (auto& [sql, stmt] : idle_) sqlite3_finalize(stmt);
  }
  // A statement of this text, taken out (a nested use of the same text prepares another one).
  sqlite3_stmt* Take(const std::string& sql) {
    auto it = idle_.find(sql);
    if (it == idle_.end()) return nullptr;
    sqlite3_stmt* stmt = it->second;
    idle_.erase(it);
    return stmt;
  }
  void Give(std::string sql, sqlite3_stmt* stmt) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (idle_.size() >= Db::kCachedStatements || idle_.count(sql) != 0) {
      sqlite3_finalize(stmt);
      return;
    }
    idle_.emplace(std::move(sql), stmt);
  }

 private:
  std::unordered_map<std::string, sqlite3_stmt*> idle_;
};

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
      cache_(other.cache_),
      sql_(std::move(other.sql_)),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Release();
    stmt_ = std::exchange(other.stmt_, nullptr);
    db_ = other.db_;
    cache_ = other.cache_;
    sql_ = std::move(other.sql_);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (stmt_ == nullptr) return;
  if (cache_ != nullptr)
    cache_->Give(std::move(sql_), stmt_);
  else
    sqlite3_finalize(stmt_);
  stmt_ = nullptr;
}

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

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

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

Db::Db(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), cache_(std::make_unique<StatementCache>()) {}

Db::Db(Db&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      cache_(std::move(other.cache_)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    cache_.reset();
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    cache_ = std::move(other.cache_);
  }
  return *this;
}

// The cached statements go first. close_v2: should a Statement outlive its Db by mistake, the
// connection closes when it goes.
Db::~Db() {
  cache_.reset();
  sqlite3_close_v2(db_);
}

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
  std::string key(sql);
  if (sqlite3_stmt* cached = cache_->Take(key))
    return Statement(cached, db_, cache_.get(), std::move(key));
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, "prepare");
  return Statement(stmt, db_, cache_.get(), std::move(key));
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
    // Prepared (and so cached) rather than Exec'd: a batch of many writes opens one per write.
    Result<Statement> savepoint = db->Prepare("SAVEPOINT pp_nested");
    if (!savepoint.ok()) return savepoint.status();
    PP_RETURN_IF_ERROR(savepoint->Run());
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
  if (nested_)
    (void)db_->Exec("ROLLBACK TO pp_nested; RELEASE pp_nested");
  else
    (void)db_->Exec("ROLLBACK");
}

Status Transaction::Commit() {
  if (nested_) {
    Result<Statement> release = db_->Prepare("RELEASE pp_nested");
    if (!release.ok()) return release.status();
    PP_RETURN_IF_ERROR(release->Run());
  } else {
    PP_RETURN_IF_ERROR(db_->Exec("COMMIT"));
  }
  db_ = nullptr;
  return Status::Ok();
}

}  // namespace pinpoint::store
