// JobStore's record of MIG layout changes on mig-dynamic GPUs (schema v7;
// daemon/mig/mig_dynamic.h).
#include "store/job_store.h"
#include "store/job_store_impl.h"

namespace pinpoint::store {

Status JobStore::AppendMigChanges(const std::vector<MigChange>& changes) {
  if (changes.empty()) return Status::Ok();
  PP_RETURN_IF_ERROR(CheckWritable());
  Db* db = &impl_->db;
  Result<Transaction> txn = Transaction::Begin(db);
  if (!txn.ok()) return txn.status();
  for (const MigChange& c : changes) {
    Result<Statement> insert = db->Prepare(
        "INSERT INTO mig_changes (at_ms, gpu, action, profile, start, instance_id, uuid, for_job, "
        "result) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!insert.ok()) return insert.status();
    insert->Bind(1, c.at_ms)
        .Bind(2, int64_t{c.gpu})
        .Bind(3, std::string_view(partition::MigActionName(c.action)))
        .Bind(4, c.profile)
        .Bind(5, int64_t{c.start});
    insert->Bind(6, int64_t{c.instance_id}).Bind(7, c.uuid).Bind(8, c.for_job).Bind(9, c.result);
    PP_RETURN_IF_ERROR(insert->Run());
  }
  Result<Statement> trim =
      db->Prepare("DELETE FROM mig_changes WHERE seq <= (SELECT MAX(seq) FROM mig_changes) - ?1");
  if (!trim.ok()) return trim.status();
  trim->Bind(1, kMigChangesKept);
  PP_RETURN_IF_ERROR(trim->Run());
  return txn->Commit();
}

Result<std::vector<MigChange>> JobStore::RecentMigChanges(int limit) const {
  Result<Statement> stmt = impl_->db.Prepare(
      "SELECT at_ms, gpu, action, profile, start, instance_id, uuid, for_job, result FROM "
      "(SELECT * FROM mig_changes ORDER BY seq DESC LIMIT ?1) ORDER BY seq");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, int64_t{limit});
  std::vector<MigChange> out;
  for (;;) {
    Result<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    MigChange c;
    std::optional<partition::MigAction> action = partition::MigActionFromName(stmt->ColumnText(2));
    if (!action) continue;  // a change this version does not know: history, not replayed
    c.action = *action;
    c.at_ms = stmt->ColumnInt64(0);
    c.gpu = static_cast<int>(stmt->ColumnInt64(1));
    c.profile = stmt->ColumnText(3);
    c.start = static_cast<int>(stmt->ColumnInt64(4));
    c.instance_id = static_cast<uint32_t>(stmt->ColumnInt64(5));
    c.uuid = stmt->ColumnText(6);
    c.for_job = stmt->ColumnInt64(7);
    c.result = stmt->ColumnText(8);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace pinpoint::store
