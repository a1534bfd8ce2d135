// JobStore's record of GPUs held after their job ended (schema v8; daemon/node/watch_feedback.h).
#include "store/job_store.h"
#include "store/job_store_impl.h"

namespace pinpoint::store {

Status JobStore::PutGpuHold(JobId id, int64_t since_ms) {
  PP_RETURN_IF_ERROR(CheckWritable());
  Result<Statement> put =
      impl_->db.Prepare("INSERT OR IGNORE INTO gpu_holds (job_id, since_ms) VALUES (?1, ?2)");
  if (!put.ok()) return put.status();
  put->Bind(1, id).Bind(2, since_ms);
  return put->Run();
}

Status JobStore::DeleteGpuHold(JobId id) {
  PP_RETURN_IF_ERROR(CheckWritable());
  Result<Statement> del = impl_->db.Prepare("DELETE FROM gpu_holds WHERE job_id = ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, id);
  return del->Run();
}

Result<std::vector<std::pair<JobId, int64_t>>> JobStore::GpuHolds() const {
  Result<Statement> stmt =
      impl_->db.Prepare("SELECT job_id, since_ms FROM gpu_holds ORDER BY job_id");
  if (!stmt.ok()) return stmt.status();
  std::vector<std::pair<JobId, int64_t>> out;
  for (;;) {
    Result<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace_back(stmt->ColumnInt64(0), stmt->ColumnInt64(1));
  }
  return out;
}

}  // namespace pinpoint::store
