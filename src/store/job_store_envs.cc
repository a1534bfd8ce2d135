// JobStore's environments (schema v9): a job's environment is a row of the envs table, shared by
// the tasks of an array, apart from its record (docs/store.md, "Version 9").
#include <string>

#include "store/job_store_impl.h"
#include "store/record_codec.h"

namespace pinpoint::store {

Result<StoredEnv> InsertEnv(Db* db, const std::map<std::string, std::string>& env) {
  if (env.empty()) return StoredEnv{};
  Result<std::string> text = EncodeEnv(env);
  if (!text.ok()) return text.status();
  Result<Statement> stmt = db->Prepare("INSERT INTO envs (text) VALUES (?1)");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, *text);
  PP_RETURN_IF_ERROR(stmt->Run());
  return StoredEnv{db->LastInsertRowId(), static_cast<int64_t>(text->size())};
}

Result<StoredEnv> EnvOf(Db* db, JobId id) {
  Result<Statement> stmt =
      db->Prepare("SELECT coalesce(env_id, 0), env_bytes FROM jobs WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, id);
  Result<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row)
    return FailedPrecondition("job " + std::to_string(id) +
                              ", whose environment a task shares, is not stored");
  return StoredEnv{stmt->ColumnInt64(0), stmt->ColumnInt64(1)};
}

void BindEnv(Statement* stmt, int index, const StoredEnv& env) {
  if (env.id == 0) {
    stmt->BindNull(index);
  } else {
    stmt->Bind(index, env.id);
  }
  stmt->Bind(index + 1, env.bytes);
}

}  // namespace pinpoint::store
