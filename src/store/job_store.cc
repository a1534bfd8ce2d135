#include "store/job_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "store/id_mark.h"
#include "store/job_row.h"
#include "store/job_store_impl.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace pinpoint::store {

static_assert(JobStore::kCurrentVersion == kCurrentSchemaVersion);
static_assert(JobStore::kOldestSupportedVersion == kOldestSupportedSchemaVersion);

namespace {

// Long enough to ride out a `sqlite3 .backup` or an admin's query holding a lock.
constexpr int kBusyTimeoutMs = 5000;

// SQLite would create the file 0644; job records carry environments (tokens, passwords).
Status CreatePrivateFile(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    return Status::Ok();
  }
  if (errno == EEXIST) return Status::Ok();
  return IoError("create " + path + ": " + std::strerror(errno));
}

Status Configure(Db* db) {
  Result<std::string> mode = db->QueryText("PRAGMA journal_mode = WAL");
  if (!mode.ok()) return mode.status();
  if (*mode != "wal") {
    return IoError("sqlite: " + db->path() + ": cannot use WAL mode (journal_mode is " + *mode +
                   "); is it on a network filesystem?");
  }
  // FULL: in WAL mode NORMAL may lose the last commits on power loss; we promise durability.
  PP_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = FULL"));
  return db->Exec("PRAGMA foreign_keys = ON");
}

// Where a person finds what to do about a damaged or lost store.
constexpr char kRecoverySteps[] = "see docs/store.md, \"Recovering a damaged store\"";

// SQLITE_CORRUPT (and its extended codes) from any step of opening means a damaged file.
Status DamagedIfCorrupt(Db* db, Status s) {
  if (s.ok() || (db->LastErrorCode() & 0xff) != SQLITE_CORRUPT) return s;
  return FailedPrecondition(db->path() + " is damaged (" + s.message() +
                            "); pinpointd will not use it: " + kRecoverySteps);
}

// A damaged file must stop the daemon before it acts on what the file says about running jobs.
// quick_check reads every page (through the WAL) but skips comparing indexes with their tables.
Status CheckIntegrity(Db* db) {
  Result<std::string> verdict = db->QueryText("PRAGMA quick_check(1)");
  if (!verdict.ok()) return DamagedIfCorrupt(db, verdict.status());
  if (*verdict == "ok") return Status::Ok();
  // SQLite's verdict spans lines ("*** in database main ***\nPage 3: ..."); the error is one.
  std::string what = verdict->substr(0, 200);
  std::replace(what.begin(), what.end(), '\n', ' ');
  return FailedPrecondition(db->path() + " is damaged (PRAGMA quick_check: " + what +
                            "); pinpointd will not use it: " + kRecoverySteps);
}

// Raises the jobs table's AUTOINCREMENT sequence to at least `floor`, so the next id is above
// it. Returns the largest id the store may already have handed out, after the raise.
Result<JobId> RaiseIdSequence(Db* db, JobId floor) {
  Result<Transaction> txn = Transaction::Begin(db);
  if (!txn.ok()) return txn.status();
  Result<int64_t> used = db->QueryInt64(
      "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0), "
      "coalesce((SELECT max(id) FROM jobs), 0))");
  if (!used.ok()) return used.status();
  if (*used >= floor) return *used;
  // sqlite_sequence has a row for jobs only once a job was inserted; replace it either way.
  PP_RETURN_IF_ERROR(db->Exec("DELETE FROM sqlite_sequence WHERE name = 'jobs'"));
  Result<Statement> stmt =
      db->Prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('jobs', ?1)");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, floor);
  PP_RETURN_IF_ERROR(stmt->Run());
  PP_RETURN_IF_ERROR(txn->Commit());
  return floor;
}

Status InsertEvent(Db* db, const JobEvent& event) {
  Result<Statement> stmt =
      db->Prepare("INSERT INTO job_events (job_id, time_ms, kind, detail) VALUES (?1, ?2, ?3, ?4)");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, event.job_id).Bind(2, event.time_ms).Bind(3, event.kind).Bind(4, event.detail);
  Status s = stmt->Run();
  if (!s.ok() && db->LastErrorCode() == SQLITE_CONSTRAINT_FOREIGNKEY) {
    return NotFound("no job " + std::to_string(event.job_id));
  }
  return s;
}

Result<bool> JobExists(Db* db, JobId id) {
  Result<Statement> stmt = db->Prepare("SELECT 1 FROM jobs WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, id);
  return stmt->Step();
}

// "SELECT ... WHERE state IN (?, ?) AND uid = ? ORDER BY id DESC LIMIT ?": only placeholders
// are built here; every value is bound by BindListQuery.
// Both read only the listing index (jobs_listing holds every column a filter names), never the
// rows with their records.
std::string ListQuery(const ListFilter& filter, const std::string& columns = "id",
                      bool count = false) {
  std::string sql = "SELECT " + columns + " FROM jobs INDEXED BY jobs_listing WHERE 1";
  if (!filter.states.empty()) {
    sql += " AND state IN (?";
    for (size_t i = 1; i < filter.states.size(); ++i) sql += ", ?";
    sql += ")";
  }
  if (filter.uid) sql += " AND uid = ?";
  if (filter.end_ms_min) sql += " AND end_ms >= ?";
  if (filter.end_ms_max) sql += " AND end_ms < ?";
  for (size_t i = 0; i < filter.id_ranges.size(); ++i)
    sql += i == 0 ? " AND (id BETWEEN ? AND ?" : " OR id BETWEEN ? AND ?";
  if (!filter.id_ranges.empty()) sql += ")";
  return count ? sql : sql + " ORDER BY id DESC LIMIT ? OFFSET ?";
}

void BindListQuery(Statement* stmt, const ListFilter& filter, bool count = false) {
  int index = 1;
  for (JobState state : filter.states) stmt->Bind(index++, StoredStateName(state));
  if (filter.uid) stmt->Bind(index++, static_cast<int64_t>(*filter.uid));
  if (filter.end_ms_min) stmt->Bind(index++, *filter.end_ms_min);
  if (filter.end_ms_max) stmt->Bind(index++, *filter.end_ms_max);
  for (const auto& [first, last] : filter.id_ranges) {
    stmt->Bind(index++, first);
    stmt->Bind(index++, last);
  }
  if (count) return;
  stmt->Bind(index++, filter.limit > 0 ? int64_t{filter.limit} : int64_t{-1});  // -1: no limit
  stmt->Bind(index, filter.limit > 0 ? int64_t{filter.offset} : int64_t{0});
}

}  // namespace

JobStore::JobStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobStore::~JobStore() = default;

Result<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path,
                                                 const StoreOptions& options) {
  PP_RETURN_IF_ERROR(CreatePrivateFile(path));
  Result<Db> db = Db::Open(path);
  if (!db.ok()) return db.status();
  PP_RETURN_IF_ERROR(db->SetBusyTimeout(kBusyTimeoutMs));
  // Check before Configure: switching to WAL writes the header of a file we may not own.
  Result<int> version = ReadSchemaVersion(&*db);
  if (!version.ok()) return DamagedIfCorrupt(&*db, version.status());
  PP_RETURN_IF_ERROR(DamagedIfCorrupt(&*db, CheckSchemaVersion(&*db, *version)));
  PP_RETURN_IF_ERROR(CheckIntegrity(&*db));
  PP_RETURN_IF_ERROR(Configure(&*db));
  PP_RETURN_IF_ERROR(DamagedIfCorrupt(&*db, MigrateTo(&*db, kCurrentVersion)));

  auto impl = std::make_unique<Impl>(std::move(db).value());
  impl->mark_path = IdMarkPath(path);
  Result<JobId> mark = ReadIdMark(impl->mark_path);
  if (!mark.ok()) return mark.status();
  Result<JobId> used = RaiseIdSequence(&impl->db, std::max(*mark, options.min_id_exclusive));
  if (!used.ok()) return used.status();
  impl->reserved_ids = *mark;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return IoError("stat " + path + ": " + std::strerror(errno));
  impl->dev = st.st_dev;
  impl->ino = st.st_ino;
  return std::unique_ptr<JobStore>(new JobStore(std::move(impl)));
}

Status JobStore::CheckFile() {
  Impl& impl = *impl_;
  if (!impl.lost.ok()) return impl.lost;
  const std::string& path = impl.db.path();
  struct stat st {};
  const char* what = nullptr;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return IoError("stat " + path + ": " + std::strerror(errno));
    what = "was deleted";
  } else if (st.st_dev != impl.dev || st.st_ino != impl.ino) {
    what = "was replaced by another file";
  } else {
    return Status::Ok();
  }
  impl.lost = IoError("job store " + path + " " + what +
                      " while pinpointd ran; nothing more is stored until pinpointd is "
                      "restarted: " +
                      kRecoverySteps);
  return impl.lost;
}

int JobStore::SchemaVersion() const { return kCurrentVersion; }

Status JobStore::CheckWritable() {
  PP_RETURN_IF_ERROR(CheckFile());
  // Writes after SQLite undid the batch would each be committed on their own, out of the batch.
  if (impl_->batch_open && !impl_->db.InTransaction())
    return IoError("sqlite: " + impl_->db.path() +
                   ": the write batch was undone by an earlier error");
  return Status::Ok();
}

Result<JobId> JobStore::Insert(const JobRecord& record, const std::optional<IdempotencyKey>& key) {
  return InsertJob(record, key, 1);
}

Result<JobId> JobStore::InsertArray(const JobRecord& rest, int count,
                                    const std::optional<IdempotencyKey>& key) {
  if (count < 1) return InvalidArgument("an array needs at least one task");
  return InsertJob(rest, key, count);
}

Result<JobId> JobStore::InsertJob(const JobRecord& record, const std::optional<IdempotencyKey>& key,
                                  int reserve) {
  PP_RETURN_IF_ERROR(CheckWritable());
  Db* db = &impl_->db;
  Result<Transaction> txn = Transaction::Begin(db);
  if (!txn.ok()) return txn.status();
  // A record's JSON carries its id (and an array's its array id), known only after the INSERT:
  // the row holds a placeholder until its record is written below.
  Result<StoredEnv> env = InsertEnv(db, record.request.env);
  if (!env.ok()) return env.status();
  Result<Statement> insert = db->Prepare(
      "INSERT INTO jobs (uid, user, state, reason, priority, submit_ms, start_ms, end_ms, record, "
      "submit_uid, idempotency_key, env_id, env_bytes) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  if (!insert.ok()) return insert.status();
  BindJobColumns(&*insert, record, "");
  if (key) {
    insert->Bind(10, static_cast<int64_t>(key->submit_uid)).Bind(11, key->key);
  } else {
    insert->BindNull(10).BindNull(11);
  }
  BindEnv(&*insert, 12, *env);
  Status inserted = insert->Run();
  if (!inserted.ok() && db->LastErrorCode() == SQLITE_CONSTRAINT_UNIQUE) {
    return FailedPrecondition("idempotency key '" + key->key + "' is already used by uid " +
                              std::to_string(key->submit_uid));
  }
  PP_RETURN_IF_ERROR(inserted);
  JobId id = db->LastInsertRowId();
  JobId last = id + reserve - 1;
  if (reserve > 1) {
    // The array's other tasks' ids: AUTOINCREMENT hands out ids above its sequence only.
    Result<Statement> seq =
        db->Prepare("UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'jobs' AND seq < ?1");
    if (!seq.ok()) return seq.status();
    seq->Bind(1, last);
    PP_RETURN_IF_ERROR(seq->Run());
  }
  // The mark must cover every id before anyone learns of one; reserving a block of ids makes this
  // one extra durable write per kIdMarkBlock submitted jobs.
  if (last > impl_->reserved_ids) {
    JobId mark = last + kIdMarkBlock - 1;
    PP_RETURN_IF_ERROR(WriteIdMark(impl_->mark_path, mark));
    impl_->reserved_ids = mark;
  }
  JobRecord stored = record;
  stored.id = id;
  if (reserve > 1 || !stored.array.pending.empty()) stored.array.array_id = id;
  Result<std::string> json = EncodeRecordWithoutEnv(stored);
  if (!json.ok()) return json.status();
  Result<Statement> update = db->Prepare("UPDATE jobs SET record = ?1 WHERE id = ?2");
  if (!update.ok()) return update.status();
  update->Bind(1, *json).Bind(2, id);
  PP_RETURN_IF_ERROR(update->Run());
  std::string detail = "by " + stored.user + " (uid " + std::to_string(stored.uid) + ")";
  PP_RETURN_IF_ERROR(InsertEvent(db, JobEvent{id, stored.submit_ms, kSubmitEventKind, detail}));
  PP_RETURN_IF_ERROR(txn->Commit());
  return id;
}

Status JobStore::InsertAt(const JobRecord& record, JobId env_of) {
  PP_RETURN_IF_ERROR(CheckWritable());
  Result<std::string> json = EncodeRecordWithoutEnv(record);
  if (!json.ok()) return json.status();
  Db* db = &impl_->db;
  Result<Transaction> txn = Transaction::Begin(db);
  if (!txn.ok()) return txn.status();
  Result<int64_t> seq =
      db->QueryInt64("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0)");
  if (!seq.ok()) return seq.status();
  std::string job = "job " + std::to_string(record.id);
  if (record.id <= 0 || record.id > *seq)
    return FailedPrecondition(job + " has an id no array reserved");
  Result<StoredEnv> env = env_of != 0 ? EnvOf(db, env_of) : InsertEnv(db, record.request.env);
  if (!env.ok()) return env.status();
  Result<Statement> insert = db->Prepare(
      "INSERT INTO jobs (uid, user, state, reason, priority, submit_ms, start_ms, end_ms, record, "
      "id, "
      "env_id, env_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  if (!insert.ok()) return insert.status();
  BindJobColumns(&*insert, record, *json);
  insert->Bind(10, record.id);
  BindEnv(&*insert, 11, *env);
  Status inserted = insert->Run();
  if (!inserted.ok() && (db->LastErrorCode() & 0xff) == SQLITE_CONSTRAINT)
    return FailedPrecondition(job + " is stored already");
  PP_RETURN_IF_ERROR(inserted);
  std::string detail = "by " + record.user + " (uid " + std::to_string(record.uid) +
                       "), in array " + std::to_string(record.array.array_id);
  PP_RETURN_IF_ERROR(
      InsertEvent(db, JobEvent{record.id, record.submit_ms, kSubmitEventKind, detail}));
  return txn->Commit();
}

Result<std::optional<JobRecord>> JobStore::FindArrayRest(JobId id) const {
  Result<Statement> below = impl_->db.Prepare(std::string("SELECT ") + kJobColumns +
                                              " FROM jobs WHERE id <= ?1 ORDER BY id DESC LIMIT 1");
  if (!below.ok()) return below.status();
  below->Bind(1, id);
  Result<bool> row = below->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<JobRecord>();
  Result<JobRecord> near = DecodeJobRow(*below);
  if (!near.ok()) return near.status();
  const ArrayTask& a = near->array;
  if (a.array_id == 0 || id >= a.array_id + a.count) return std::optional<JobRecord>();
  if (!a.pending.empty()) return std::optional<JobRecord>(std::move(near).value());
  Result<Statement> rest = impl_->db.Prepare(std::string("SELECT ") + kJobColumns +
                                             " FROM jobs WHERE id BETWEEN ?1 AND ?2 AND "
                                             "json_extract(record, '$.array.pending') IS NOT NULL "
                                             "ORDER BY id DESC LIMIT 1");
  if (!rest.ok()) return rest.status();
  rest->Bind(1, a.array_id).Bind(2, id);
  row = rest->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<JobRecord>();
  Result<JobRecord> found = DecodeJobRow(*rest);
  if (!found.ok()) return found.status();
  return std::optional<JobRecord>(std::move(found).value());
}

Status JobStore::Update(const JobRecord& record, const std::optional<JobEvent>& event) {
  PP_RETURN_IF_ERROR(CheckWritable());
  // The environment stays the stored one (its own row, schema v9): it is fixed at submit, and
  // writing it again at every change cost the loop MiBs for a large one.
  Result<std::string> json = EncodeRecordWithoutEnv(record);
  if (!json.ok()) return json.status();
  Db* db = &impl_->db;
  Result<Transaction> txn = Transaction::Begin(db);
  if (!txn.ok()) return txn.status();
  Result<Statement> stmt = db->Prepare(
      "UPDATE jobs SET uid = ?1, user = ?2, state = ?3, reason = ?4, priority = ?5, "
      "submit_ms = ?6, start_ms = ?7, end_ms = ?8, "
      "record = ?9 WHERE id = ?10");
  if (!stmt.ok()) return stmt.status();
  BindJobColumns(&*stmt, record, *json);
  stmt->Bind(10, record.id);
  PP_RETURN_IF_ERROR(stmt->Run());
  if (db->Changes() == 0) return NotFound("no job " + std::to_string(record.id));
  if (event) PP_RETURN_IF_ERROR(InsertEvent(db, *event));
  return txn->Commit();
}

Result<JobRecord> JobStore::Get(JobId id, bool with_env) const {
  Result<Statement> stmt =
      impl_->db.Prepare(std::string("SELECT ") + (with_env ? kJobColumns : kJobColumnsWithoutEnv) +
                        " FROM jobs WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, id);
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("no job " + std::to_string(id));
  return DecodeJobRow(*stmt);
}

Result<std::vector<JobId>> JobStore::ListIds(const ListFilter& filter) const {
  if (filter.limit < 0 || filter.offset < 0)
    return InvalidArgument("list limit and offset must not be negative");
  Result<Statement> stmt = impl_->db.Prepare(ListQuery(filter));
  if (!stmt.ok()) return stmt.status();
  BindListQuery(&*stmt, filter);
  Result<std::vector<JobId>> ids = CollectIds(&*stmt);
  // The query runs newest first so LIMIT keeps the newest.
  if (ids.ok()) std::reverse(ids->begin(), ids->end());
  return ids;
}

Result<std::vector<JobRecord>> JobStore::List(const ListFilter& filter) const {
  Result<std::vector<JobId>> ids = ListIds(filter);
  if (!ids.ok()) return ids.status();
  std::vector<JobRecord> jobs;
  jobs.reserve(ids->size());
  for (JobId id : *ids) {
    Result<JobRecord> job = Get(id, !filter.omit_env);
    if (!job.ok()) return job.status();  // gone in between cannot happen: one owner, one thread
    jobs.push_back(std::move(job).value());
  }
  return jobs;
}

Result<std::optional<JobState>> JobStore::FirstStateOtherThan(JobId first, JobId end,
                                                              JobState state) const {
  Result<Statement> stmt = impl_->db.Prepare(
      "SELECT state FROM jobs WHERE id >= ?1 AND id < ?2 AND state != ?3 ORDER BY id LIMIT 1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, first);
  stmt->Bind(2, end);
  stmt->Bind(3, StoredStateName(state));
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<JobState>();
  std::string name = stmt->ColumnText(0);
  for (JobState s : {JobState::kPending, JobState::kRunning, JobState::kCompleted,
                     JobState::kFailed, JobState::kCancelled}) {
    if (name == StoredStateName(s)) return std::optional<JobState>(s);
  }
  return IoError("job store: a job in " + std::to_string(first) + ".." + std::to_string(end) +
                 " has an unknown state '" + name + "'");
}

Result<int64_t> JobStore::Count(const ListFilter& filter) const {
  Result<Statement> stmt = impl_->db.Prepare(ListQuery(filter, "COUNT(*)", /*count=*/true));
  if (!stmt.ok()) return stmt.status();
  BindListQuery(&*stmt, filter, /*count=*/true);
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  return *row ? stmt->ColumnInt64(0) : int64_t{0};
}

Result<std::optional<JobRecord>> JobStore::FindByIdempotencyKey(const IdempotencyKey& key) const {
  Result<Statement> stmt = impl_->db.Prepare(std::string("SELECT ") + kJobColumns +
                                             " FROM jobs WHERE submit_uid = ?1 AND "
                                             "idempotency_key = ?2");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, static_cast<int64_t>(key.submit_uid)).Bind(2, key.key);
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<JobRecord>();
  Result<JobRecord> job = DecodeJobRow(*stmt);
  if (!job.ok()) return job.status();
  return std::optional<JobRecord>(std::move(job).value());
}

Status JobStore::AppendEvent(const JobEvent& event) {
  PP_RETURN_IF_ERROR(CheckWritable());
  return InsertEvent(&impl_->db, event);
}

Result<std::vector<JobEvent>> JobStore::Events(JobId id) const {
  Result<Statement> stmt = impl_->db.Prepare(
      "SELECT job_id, time_ms, kind, detail FROM job_events WHERE job_id = ?1 ORDER BY rowid");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, id);
  std::vector<JobEvent> events;
  for (;;) {
    Result<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    events.push_back(JobEvent{stmt->ColumnInt64(0), stmt->ColumnInt64(1), stmt->ColumnText(2),
                              stmt->ColumnText(3)});
  }
  if (events.empty()) {
    Result<bool> exists = JobExists(&impl_->db, id);
    if (!exists.ok()) return exists.status();
    if (!*exists) return NotFound("no job " + std::to_string(id));
  }
  return events;
}

}  // namespace pinpoint::store
