// JobStore's queries for retention (daemon/setup/retention.h): the bytes of each user's ended jobs,
// who is over a bound, their oldest ended jobs, and deleting ended jobs with their histories.
#include <algorithm>
#include <cstdint>

#include "store/job_store.h"
#include "store/job_store_impl.h"

namespace pinpoint::store {

Result<int64_t> JobStore::DeleteEnded(const std::vector<JobId>& ids) {
  PP_RETURN_IF_ERROR(CheckWritable());
  Db* db = &impl_->db;
  Result<Transaction> txn = Transaction::Begin(db);
  if (!txn.ok()) return txn.status();
  // AUTOINCREMENT keeps the largest id used in sqlite_sequence, and the id mark file is never
  // lowered: deleting the newest job frees no id.
  int64_t deleted = 0;
  for (JobId id : ids) {
    // Only a job in a final state goes, with its history.
    Result<Statement> events = db->Prepare(
        "DELETE FROM job_events WHERE job_id = ?1 AND EXISTS "
        "(SELECT 1 FROM jobs WHERE id = ?1 AND state NOT IN ('pending', 'running'))");
    if (!events.ok()) return events.status();
    events->Bind(1, id);
    PP_RETURN_IF_ERROR(events->Run());
    Result<Statement> job =
        db->Prepare("DELETE FROM jobs WHERE id = ?1 AND state NOT IN ('pending', 'running')");
    if (!job.ok()) return job.status();
    job->Bind(1, id);
    PP_RETURN_IF_ERROR(job->Run());
    deleted += db->Changes();
  }
  PP_RETURN_IF_ERROR(txn->Commit());
  return deleted;
}

Result<EndedBytes> JobStore::EndedBytesOf(uint32_t uid) const {
  Result<Statement> stmt =
      impl_->db.Prepare("SELECT ended_jobs, ended_bytes FROM user_bytes WHERE uid = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, static_cast<int64_t>(uid));
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return EndedBytes{};
  return EndedBytes{stmt->ColumnInt64(0),
                    static_cast<uint64_t>(std::max<int64_t>(0, stmt->ColumnInt64(1)))};
}

Result<std::vector<std::pair<uint32_t, EndedBytes>>> JobStore::UsersOver(uint64_t max_bytes,
                                                                         int limit) const {
  Result<Statement> stmt = impl_->db.Prepare(
      "SELECT uid, ended_jobs, ended_bytes FROM user_bytes WHERE ended_bytes > ?1 "
      "ORDER BY ended_bytes DESC LIMIT ?2");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, static_cast<int64_t>(std::min<uint64_t>(max_bytes, INT64_MAX)));
  stmt->Bind(2, static_cast<int64_t>(limit));
  std::vector<std::pair<uint32_t, EndedBytes>> users;
  for (;;) {
    Result<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    users.push_back(
        {static_cast<uint32_t>(stmt->ColumnInt64(0)),
         EndedBytes{stmt->ColumnInt64(1), static_cast<uint64_t>(stmt->ColumnInt64(2))}});
  }
  return users;
}

Result<std::vector<JobId>> JobStore::OldestEnded(uint32_t uid, int limit) const {
  // The user's jobs in id order from the index; active ones (at most max_jobs_per_user) are
  // skipped there without reading a record.
  Result<Statement> stmt = impl_->db.Prepare(
      "SELECT id FROM jobs INDEXED BY jobs_by_uid WHERE uid = ?1 AND "
      "state NOT IN ('pending', 'running') ORDER BY id LIMIT ?2");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, static_cast<int64_t>(uid));
  stmt->Bind(2, static_cast<int64_t>(limit));
  return CollectIds(&*stmt);
}

}  // namespace pinpoint::store
