#include "store/array_migration.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pinpoint/array_spec.h"
#include "store/job_row.h"

namespace pinpoint::store {

namespace {

// A pending task that never started, as the rest would hold it: its record less its id, index and
// wait. Tasks whose keys are equal differ only in their index and may share one rest.
std::optional<std::string> RestKey(const JobRecord& task) {
  if (task.state != JobState::kPending || task.array.array_id == 0 || !task.array.pending.empty() ||
      task.cancel_requested || !task.allocations.empty() || task.start_ms != 0 ||
      task.kind != JobKind::kJob)
    return std::nullopt;
  JobRecord key = task;
  key.id = 0;
  key.array.index = 0;
  key.reason = Reason::kNone;
  key.detail.clear();
  auto json = EncodeRecord(key);
  if (!json.ok()) return std::nullopt;
  return *json;
}

Result<std::vector<JobRecord>> Select(Db* db, const std::string& where, JobId first = 0,
                                      JobId end = 0) {
  Result<Statement> stmt = db->Prepare(std::string("SELECT ") + kJobColumnsBeforeV9 +
                                       " FROM jobs WHERE " + where + " ORDER BY id");
  if (!stmt.ok()) return stmt.status();
  if (end > 0) stmt->Bind(1, first).Bind(2, end);
  std::vector<JobRecord> out;
  for (;;) {
    Result<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<JobRecord> job = DecodeJobRow(*stmt);
    if (!job.ok()) return job.status();
    out.push_back(std::move(job).value());
  }
}

Status Run(Db* db, const char* sql, JobId id) {
  Result<Statement> stmt = db->Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, id);
  return stmt->Run();
}

// Folds the pending tasks of the array whose first task is `array_id` (count tasks).
Status FoldArray(Db* db, JobId array_id, int count) {
  auto tasks = Select(db, "id >= ?1 AND id < ?2", array_id, array_id + count);
  if (!tasks.ok()) return tasks.status();
  if (tasks->size() != static_cast<size_t>(count))
    return Status::Ok();  // purged tasks: left as they are
  std::vector<int> all;
  const JobRecord* first = nullptr;
  std::optional<std::string> first_key;
  std::vector<int> pending;
  std::vector<JobId> folded;  // the tasks after the first that join its rest
  for (const JobRecord& task : *tasks) {
    if (task.array.array_id != array_id || !task.array.pending.empty()) return Status::Ok();
    all.push_back(task.array.index);
    std::optional<std::string> key = RestKey(task);
    if (!key) continue;
    if (first == nullptr) {
      first = &task;
      first_key = key;
    } else if (*key != *first_key) {
      continue;
    } else {
      folded.push_back(task.id);
    }
    pending.push_back(task.array.index);
  }
  if (folded.empty()) return Status::Ok();
  auto spec = [](const std::vector<int>& indices) {
    return FormatArraySpec(ArraySpec{indices, 0});
  };
  JobRecord rest = *first;
  rest.array.pending = spec(pending);
  rest.array.indices = spec(all);
  Result<std::string> json = EncodeRecord(rest);
  if (!json.ok()) return json.status();
  Result<Statement> update = db->Prepare("UPDATE jobs SET record = ?1 WHERE id = ?2");
  if (!update.ok()) return update.status();
  update->Bind(1, *json).Bind(2, rest.id);
  PP_RETURN_IF_ERROR(update->Run());
  for (JobId id : folded) {
    PP_RETURN_IF_ERROR(Run(db, "DELETE FROM job_events WHERE job_id = ?1", id));
    PP_RETURN_IF_ERROR(Run(db, "DELETE FROM jobs WHERE id = ?1", id));
  }
  return Status::Ok();
}

}  // namespace

Status FoldPendingArrayTasks(Db* db) {
  // The arrays with a pending task: each one's first task id and size, read from a pending task.
  auto pending = Select(db, "state = 'pending'");
  if (!pending.ok()) return pending.status();
  std::map<JobId, int> arrays;
  for (const JobRecord& task : *pending)
    if (task.array.array_id != 0 && task.array.count > 1)
      arrays[task.array.array_id] = task.array.count;
  pending->clear();
  for (const auto& [id, count] : arrays) PP_RETURN_IF_ERROR(FoldArray(db, id, count));
  return Status::Ok();
}

}  // namespace pinpoint::store
