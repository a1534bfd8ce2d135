#include "daemon/arrays/array_tasks.h"

#include <algorithm>

#include "common/log.h"
#include "daemon/jobs/array_rest.h"
#include "daemon/jobs/job_edit.h"

namespace pinpoint::daemon {

Result<JobRecord> ArrayTasks::Job(JobId id, bool with_env) const {
  auto shown = [with_env](JobRecord job) {
    if (!with_env) job.request.env.clear();
    return job;
  };
  // A rest of the table was read when it entered it; a stored one is read here.
  auto task = [this, id](const JobRecord& rest) -> std::optional<JobRecord> {
    std::optional<RestTasks> read;
    const RestTasks* tasks =
        jobs_->find(rest.id) != jobs_->end() ? jobs_->TasksOfRest(rest.id) : nullptr;
    if (tasks == nullptr && (read = RestTasks::Of(rest))) tasks = &*read;
    if (tasks == nullptr || !tasks->PendingIndexOf(id)) return std::nullopt;
    return tasks->Task(rest, id);
  };
  auto active = jobs_->find(id);
  if (active != jobs_->end() && !IsArrayRest(active->second)) return shown(active->second);
  const JobRecord* rest = active != jobs_->end() ? &active->second : jobs_->RestHolding(id);
  if (rest != nullptr) {
    if (auto found = task(*rest)) return shown(std::move(*found));
  }
  auto stored = store_->Get(id, with_env);
  if (stored.ok() && IsArrayRest(*stored)) {
    if (auto found = task(*stored)) return *found;
  }
  if (stored.ok() || stored.status().code() != Code::kNotFound) return stored;
  auto stored_rest = store_->FindArrayRest(id);
  if (!stored_rest.ok()) return stored_rest.status();
  if (*stored_rest) {
    if (auto found = task(**stored_rest)) return shown(std::move(*found));
  }
  return NotFound("no job " + std::to_string(id));
}

std::optional<std::vector<JobId>> ArrayTasks::Unfinished(JobId id) const {
  std::vector<JobId> ids;
  // The tasks have the ids id, id + 1, ... and no other job has an id among them: the active
  // ones are one run of the table from `id` on, even when the first task has ended (or was purged).
  for (auto it = jobs_->lower_bound(id); it != jobs_->end() && it->second.array.array_id == id;
       ++it) {
    if (!IsFinal(it->second.state)) ids.push_back(it->first);
  }
  if (!ids.empty()) return ids;
  // None left: is `id` an array whose tasks have all ended?
  auto active = jobs_->find(id);
  if (active != jobs_->end())
    return active->second.array.array_id == id ? std::optional(ids) : std::nullopt;
  auto stored = store_->Get(id);
  if (stored.ok() && stored->array.array_id == id) return ids;
  return std::nullopt;
}

std::optional<std::vector<JobId>> ArrayTasks::For(JobId id, Change change, bool root,
                                                  const JobEdit& edit) const {
  std::optional<std::vector<JobId>> tasks = Unfinished(id);
  if (!tasks) return tasks;
  Hold wanted = root ? Hold::kRoot : Hold::kUser;
  std::erase_if(*tasks, [&](JobId task) {
    const JobRecord& job = jobs_->at(task);
    bool pending = job.state == JobState::kPending && !job.cancel_requested;
    switch (change) {
      case Change::kCancel:
        return job.cancel_requested;
      case Change::kHold:
        return !pending || job.hold == wanted || (job.hold == Hold::kRoot && !root);
      case Change::kRelease:
        return !pending || job.hold == Hold::kNone;
      case Change::kPending:
        return !pending;
      case Change::kUpdate:
        return !EditChanges(job, edit);
    }
    return true;
  });
  return tasks;
}

JobState ArrayTasks::State(const JobRecord& first) const {
  std::optional<std::vector<JobId>> unfinished = Unfinished(first.id);
  if (unfinished && !unfinished->empty()) {
    bool running = std::any_of(unfinished->begin(), unfinished->end(), [&](JobId task) {
      return jobs_->at(task).state == JobState::kRunning;
    });
    return running ? JobState::kRunning : JobState::kPending;
  }
  auto other =
      store_->FirstStateOtherThan(first.id, first.id + first.array.count, JobState::kCompleted);
  if (!other.ok()) {
    log::Warn("array {}: its tasks' outcome is unknown for now: {}", first.id,
              other.status().message());
    return JobState::kPending;
  }
  return other->value_or(JobState::kCompleted);
}

}  // namespace pinpoint::daemon
