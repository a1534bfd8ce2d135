#include "store/schema.h"

#include <sqlite3.h>

#include <array>
#include <string>

#include "store/array_migration.h"

namespace pinpoint::store {
namespace {

// Version 1: the jobs table. The queryable fields are columns; `record` holds the whole
// JobRecord as JSON so that fields added later need no migration.
// application_id 1347439187 is kApplicationId ("PPJS"); a test checks that they agree.
constexpr char kV1[] = R"sql(
CREATE TABLE jobs (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  uid       INTEGER NOT NULL,
  user      TEXT    NOT NULL,
  state     TEXT    NOT NULL,
  reason    TEXT    NOT NULL,
  priority  INTEGER NOT NULL,
  submit_ms INTEGER NOT NULL,
  start_ms  INTEGER NOT NULL,
  end_ms    INTEGER NOT NULL,
  record    TEXT    NOT NULL
);
CREATE INDEX jobs_by_state ON jobs(state);
PRAGMA application_id = 1347439187;
)sql";

// Version 2: job history. Jobs stored before it get a submit event so that every job's history
// starts with one.
constexpr char kV2[] = R"sql(
CREATE TABLE job_events (
  job_id  INTEGER NOT NULL REFERENCES jobs(id),
  time_ms INTEGER NOT NULL,
  kind    TEXT    NOT NULL,
  detail  TEXT    NOT NULL
);
CREATE INDEX job_events_by_job ON job_events(job_id);
INSERT INTO job_events (job_id, time_ms, kind, detail)
  SELECT id, submit_ms, 'submit', 'recorded by the schema version 2 migration' FROM jobs
  ORDER BY id;
)sql";

// Version 3: submit idempotency keys. A key is scoped to the uid that submitted (not the job's
// as_user), and unique there, so a retried submit finds its first job even across restarts.
// Jobs stored before it have neither (NULL: no key; NULLs never collide in a UNIQUE index).
constexpr char kV3[] = R"sql(
ALTER TABLE jobs ADD COLUMN submit_uid INTEGER;
ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX jobs_by_idempotency_key ON jobs(submit_uid, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
)sql";

// Version 4: an index that holds what a listing filters on, in id order. A page of a listing
// (newest first, at an offset) walks this index, a few bytes a job, rather than the rows that
// hold whole records: a deep page of a large store costs about what the first one does.
constexpr char kV4[] = R"sql(
CREATE INDEX jobs_listing ON jobs(id, uid, state, end_ms);
)sql";

// Version 5: what each user's ended jobs take in the store, kept by triggers as records enter,
// change and leave a final state (a record's bytes are its JSON's), so that the daemon bounds it
// (max_user_stored_bytes) by reading a row, never by summing a table; and the index that finds a
// user's oldest ended jobs. The tally starts from the jobs already stored.
constexpr char kV5[] = R"sql(
CREATE TABLE user_bytes (
  uid         INTEGER PRIMARY KEY,
  ended_jobs  INTEGER NOT NULL,
  ended_bytes INTEGER NOT NULL
);
INSERT INTO user_bytes (uid, ended_jobs, ended_bytes)
  SELECT uid, COUNT(*), SUM(length(CAST(record AS BLOB))) FROM jobs
  WHERE state NOT IN ('pending', 'running') GROUP BY uid;
CREATE TRIGGER user_bytes_insert AFTER INSERT ON jobs
  WHEN new.state NOT IN ('pending', 'running')
BEGIN
  INSERT INTO user_bytes (uid, ended_jobs, ended_bytes)
    VALUES (new.uid, 1, length(CAST(new.record AS BLOB)))
    ON CONFLICT (uid) DO UPDATE SET ended_jobs = ended_jobs + 1,
                                    ended_bytes = ended_bytes + excluded.ended_bytes;
END;
CREATE TRIGGER user_bytes_update_from AFTER UPDATE ON jobs
  WHEN old.state NOT IN ('pending', 'running')
BEGIN
  UPDATE user_bytes SET ended_jobs = ended_jobs - 1,
                        ended_bytes = ended_bytes - length(CAST(old.record AS BLOB))
    WHERE uid = old.uid;
END;
CREATE TRIGGER user_bytes_update_to AFTER UPDATE ON jobs
  WHEN new.state NOT IN ('pending', 'running')
BEGIN
  INSERT INTO user_bytes (uid, ended_jobs, ended_bytes)
    VALUES (new.uid, 1, length(CAST(new.record AS BLOB)))
    ON CONFLICT (uid) DO UPDATE SET ended_jobs = ended_jobs + 1,
                                    ended_bytes = ended_bytes + excluded.ended_bytes;
END;
CREATE TRIGGER user_bytes_delete AFTER DELETE ON jobs
  WHEN old.state NOT IN ('pending', 'running')
BEGIN
  UPDATE user_bytes SET ended_jobs = ended_jobs - 1,
                        ended_bytes = ended_bytes - length(CAST(old.record AS BLOB))
    WHERE uid = old.uid;
END;
CREATE INDEX jobs_by_uid ON jobs(uid, id, state);
)sql";

// Version 6: a job array's pending tasks are one record, its rest (ArrayTask::pending; the
// record format is unchanged, the field is new and sparse). The step folds the unstarted tasks
// of arrays stored before it (array_migration.h); its SQL is only this note.
constexpr char kV6[] = "SELECT 6";

// Version 7: the MIG layout changes pinpoint made on mig-dynamic GPUs (issue 26), one row each,
// so that a restart knows when each instance it finds was made; the daemon keeps the newest
// kMigChangesKept.
constexpr char kV7[] = R"sql(
CREATE TABLE mig_changes (
  seq         INTEGER PRIMARY KEY,
  at_ms       INTEGER NOT NULL,
  gpu         INTEGER NOT NULL,
  action      TEXT NOT NULL,
  profile     TEXT NOT NULL,
  start       INTEGER NOT NULL,
  instance_id INTEGER NOT NULL,
  uuid        TEXT NOT NULL,
  for_job     INTEGER NOT NULL,
  result      TEXT NOT NULL
);
)sql";

// Version 8: the GPUs an ended job's processes still hold (a process of its user, in no job, on
// its GPUs: docs/security.md), one row per ended job while they do, so that a restart keeps its
// slots taken and its deadline running from when the job ended. The slots are the job's record's.
constexpr char kV8[] = R"sql(
CREATE TABLE gpu_holds (
  job_id   INTEGER PRIMARY KEY,
  since_ms INTEGER NOT NULL
);
)sql";

// Version 9: a job's environment is a row of its own, shared by the tasks of an array (issue 43).
// A job's record is rewritten at each start, pid, end and hold: with its environment inside
// (up to max_request_bytes), every one of those rewrote it, and an array's tasks each held a
// copy. The record keeps `"env":{}`; env_id names the environment's row (NULL: none), env_bytes
// its length, which a job counts as its own in user_bytes as before (each task counts its
// array's environment: the tally is what the jobs would take apart, a bound, not the file's
// size). An environment goes with the last job that names it. The step moves the environments
// of the jobs stored before it, one row each, and counts user_bytes again.
constexpr char kV9[] = R"sql(
CREATE TABLE envs (
  id   INTEGER PRIMARY KEY,
  text TEXT NOT NULL
);
ALTER TABLE jobs ADD COLUMN env_id INTEGER;
ALTER TABLE jobs ADD COLUMN env_bytes INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_env ON jobs(env_id) WHERE env_id IS NOT NULL;
INSERT INTO envs (id, text)
  SELECT id, json_extract(record, '$.request.env') FROM jobs
  WHERE json_valid(record) AND json_type(record, '$.request.env') = 'object'
    AND json_extract(record, '$.request.env') != '{}';
UPDATE jobs SET env_id = id,
                env_bytes = (SELECT length(CAST(text AS BLOB)) FROM envs WHERE envs.id = jobs.id),
                record = json_set(record, '$.request.env', json('{}'))
  WHERE id IN (SELECT id FROM envs);
DROP TRIGGER user_bytes_insert;
DROP TRIGGER user_bytes_update_from;
DROP TRIGGER user_bytes_update_to;
DROP TRIGGER user_bytes_delete;
DELETE FROM user_bytes;
INSERT INTO user_bytes (uid, ended_jobs, ended_bytes)
  SELECT uid, COUNT(*), SUM(length(CAST(record AS BLOB)) + env_bytes) FROM jobs
  WHERE state NOT IN ('pending', 'running') GROUP BY uid;
CREATE TRIGGER user_bytes_insert AFTER INSERT ON jobs
  WHEN new.state NOT IN ('pending', 'running')
BEGIN
  INSERT INTO user_bytes (uid, ended_jobs, ended_bytes)
    VALUES (new.uid, 1, length(CAST(new.record AS BLOB)) + new.env_bytes)
    ON CONFLICT (uid) DO UPDATE SET ended_jobs = ended_jobs + 1,
                                    ended_bytes = ended_bytes + excluded.ended_bytes;
END;
CREATE TRIGGER user_bytes_update_from AFTER UPDATE ON jobs
  WHEN old.state NOT IN ('pending', 'running')
BEGIN
  UPDATE user_bytes SET ended_jobs = ended_jobs - 1,
                        ended_bytes = ended_bytes - length(CAST(old.record AS BLOB)) - old.env_bytes
    WHERE uid = old.uid;
END;
CREATE TRIGGER user_bytes_update_to AFTER UPDATE ON jobs
  WHEN new.state NOT IN ('pending', 'running')
BEGIN
  INSERT INTO user_bytes (uid, ended_jobs, ended_bytes)
    VALUES (new.uid, 1, length(CAST(new.record AS BLOB)) + new.env_bytes)
    ON CONFLICT (uid) DO UPDATE SET ended_jobs = ended_jobs + 1,
                                    ended_bytes = ended_bytes + excluded.ended_bytes;
END;
CREATE TRIGGER user_bytes_delete AFTER DELETE ON jobs
  WHEN old.state NOT IN ('pending', 'running')
BEGIN
  UPDATE user_bytes SET ended_jobs = ended_jobs - 1,
                        ended_bytes = ended_bytes - length(CAST(old.record AS BLOB)) - old.env_bytes
    WHERE uid = old.uid;
END;
CREATE TRIGGER envs_unused AFTER DELETE ON jobs
  WHEN old.env_id IS NOT NULL
BEGIN
  DELETE FROM envs WHERE id = old.env_id
    AND NOT EXISTS (SELECT 1 FROM jobs WHERE env_id = old.env_id);
END;
)sql";

constexpr std::array<Migration, 9> kMigrations = {{
    {1, kV1},
    {2, kV2},
    {3, kV3},
    {4, kV4},
    {5, kV5},
    {6, kV6, FoldPendingArrayTasks},
    {7, kV7},
    {8, kV8},
    {9, kV9},
}};

constexpr bool StepsAreInOrder() {
  for (size_t i = 0; i < kMigrations.size(); ++i) {
    if (kMigrations[i].to_version != static_cast<int>(i) + 1) return false;
  }
  return true;
}
static_assert(StepsAreInOrder(), "step i must lead to version i + 1");
static_assert(kMigrations.size() == kCurrentSchemaVersion, "every version needs its step");

std::string SupportedRange() {
  return std::to_string(kOldestSupportedSchemaVersion) + " to " +
         std::to_string(kCurrentSchemaVersion);
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

Result<int> ReadSchemaVersion(Db* db) {
  Result<int64_t> version = db->QueryInt64("PRAGMA user_version");
  if (!version.ok()) {
    if (db->LastErrorCode() == SQLITE_NOTADB) {
      return FailedPrecondition(db->path() + " is not a SQLite database; refusing to open it");
    }
    return version.status();
  }
  return static_cast<int>(*version);
}

Status CheckSchemaVersion(Db* db, int version) {
  const std::string& path = db->path();
  if (version == 0) {
    Result<int64_t> objects = db->QueryInt64("SELECT count(*) FROM sqlite_master");
    if (!objects.ok()) return objects.status();
    if (*objects == 0) return Status::Ok();
    return FailedPrecondition(path + " is a SQLite database but not a pinpoint job store " +
                              "(it has tables and no schema version)");
  }
  if (version > kCurrentSchemaVersion) {
    return FailedPrecondition(path + " has job store schema version " + std::to_string(version) +
                              ", newer than this pinpoint supports (" + SupportedRange() +
                              "); run a newer pinpoint or restore a backup");
  }
  if (version < kOldestSupportedSchemaVersion) {
    return FailedPrecondition(path + " has job store schema version " + std::to_string(version) +
                              ", older than this pinpoint supports (" + SupportedRange() +
                              "); migrate it with an older pinpoint release first");
  }
  Result<int64_t> app_id = db->QueryInt64("PRAGMA application_id");
  if (!app_id.ok()) return app_id.status();
  if (*app_id != kApplicationId) {
    return FailedPrecondition(path + " is a SQLite database but not a pinpoint job store " +
                              "(application_id " + std::to_string(*app_id) + ")");
  }
  return Status::Ok();
}

Status MigrateTo(Db* db, int target_version) {
  if (target_version < 1 || target_version > kCurrentSchemaVersion) {
    return InvalidArgument("no schema version " + std::to_string(target_version));
  }
  Result<Transaction> txn = Transaction::Begin(db);
  if (!txn.ok()) return txn.status();
  Result<int> version = ReadSchemaVersion(db);
  if (!version.ok()) return version.status();
  if (*version > target_version) {
    return FailedPrecondition(db->path() + " is at schema version " + std::to_string(*version) +
                              ", past the requested " + std::to_string(target_version));
  }
  if (*version == target_version) return Status::Ok();
  for (const Migration& step : kMigrations) {
    if (step.to_version <= *version || step.to_version > target_version) continue;
    Status s = db->Exec(step.sql);
    if (s.ok() && step.rewrite != nullptr) s = step.rewrite(db);
    if (!s.ok()) {
      return IoError("migrating " + db->path() + " to schema version " +
                     std::to_string(step.to_version) + ": " + s.message());
    }
  }
  // PRAGMA takes no bound parameters; the value is our own constant-bounded integer.
  PP_RETURN_IF_ERROR(db->Exec(("PRAGMA user_version = " + std::to_string(target_version)).c_str()));
  return txn->Commit();
}

}  // namespace pinpoint::store
