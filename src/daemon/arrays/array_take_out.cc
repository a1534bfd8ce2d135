#include "daemon/arrays/array_take_out.h"

#include <algorithm>
#include <map>

#include "common/log.h"
#include "daemon/jobs/array_rest.h"
#include "daemon/jobs/job_room.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::daemon {

std::vector<Status> TakeOutTasks(JobTable& jobs, store::JobStore& store,
                                 const std::vector<JobId>& ids, const api::Caller* caller,
                                 uint64_t max_rewrite_bytes, bool rests_whole) {
  std::vector<Status> out(ids.size());
  // The tasks to take out of each rest, by the rest's id, and where each was named.
  struct Taking {
    std::vector<JobId> tasks;
    std::vector<size_t> at;
  };
  std::map<JobId, Taking> by_rest;
  RewriteBudget budget(max_rewrite_bytes);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto active = jobs.find(ids[i]);
    if (active != jobs.end() && (!IsArrayRest(active->second) || rests_whole)) continue;
    const JobRecord* rest = active != jobs.end() ? &active->second : jobs.RestHolding(ids[i]);
    // Another user's rest, or one that ended or is being cancelled: the request's own checks
    // answer for the task (ControlledJob).
    if (rest == nullptr || rest->state != JobState::kPending || rest->cancel_requested ||
        (caller != nullptr && !api::MayControlJob(*caller, rest->uid)))
      continue;
    Taking& taking = by_rest[rest->id];
    if (std::find(taking.tasks.begin(), taking.tasks.end(), ids[i]) != taking.tasks.end()) continue;
    if (!budget.Spend(RecordBytes(*rest) * (taking.tasks.empty() ? 2 : 1))) {
      for (size_t k = i; k < ids.size(); ++k) out[k] = NotReached();
      break;
    }
    taking.tasks.push_back(ids[i]);
    taking.at.push_back(i);
  }
  if (by_rest.empty()) return out;
  // Each rest's new records, written in one batch: the tasks under their reserved ids, the rest
  // under its new first task's (or rewritten where it stays).
  std::vector<std::pair<JobId, RestTasks::TakenOut>> taken;
  // One transaction or none: a task stored beside a rest that still holds it would run twice.
  auto batch = store.BeginBatch();
  Status written = batch.ok() ? Status::Ok() : batch.status();
  for (auto& [rest_id, taking] : by_rest) {
    if (!written.ok()) break;
    const JobRecord& rest = jobs.at(rest_id);
    const RestTasks* tasks = jobs.TasksOfRest(rest_id);
    if (tasks == nullptr) {
      written =
          Internal("job " + std::to_string(rest_id) + ": its array's pending tasks do not read");
      break;
    }
    RestTasks::TakenOut split = tasks->TakeOut(rest, taking.tasks);
    for (const JobRecord& task : split.tasks) {
      written = task.id == rest_id ? store.Update(task) : store.InsertAt(task, /*env_of=*/rest_id);
      if (!written.ok()) break;
    }
    if (written.ok() && split.rest)
      written = split.rest->id == rest_id ? store.Update(*split.rest)
                                          : store.InsertAt(*split.rest, rest_id);
    if (!written.ok()) break;
    taken.emplace_back(rest_id, std::move(split));
  }
  if (written.ok()) written = batch->Commit();
  if (!written.ok()) {
    log::Warn("array tasks not taken out of their rest: {}", written.message());
    for (auto& [rest_id, taking] : by_rest)
      for (size_t at : taking.at) out[at] = written;
    return out;
  }
  for (auto& [rest_id, split] : taken) {
    jobs.Erase(rest_id);
    for (JobRecord& task : split.tasks) jobs.Add(std::move(task));
    if (split.rest) jobs.Add(std::move(*split.rest));
  }
  return out;
}

}  // namespace pinpoint::daemon
