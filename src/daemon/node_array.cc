// Node's job arrays (daemon/job_array.h has the pure parts): one submit stores every task in one
// transaction; a cancel of the array's id reaches every task that has not ended (service.cc).
#include "daemon/job_array.h"
#include "daemon/lifecycle.h"
#include "daemon/node.h"
#include "pinpoint/api_codec.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

Result<Node::SubmittedArray> Node::SubmitArray(const api::Caller& caller, JobRequest request,
                                               const ArraySpec& spec,
                                               const std::optional<std::string>& idempotency_key,
                                               bool hold) {
  // As Submit: the store never holds what env_deny names, the checks and the time limit come
  // before the key, and every task has the same request (its time limit and dependencies too).
  std::vector<std::string> dropped = DropDenied(request.env, options_.env_deny);
  PP_RETURN_IF_ERROR(ValidateRequest(request));
  // Before the key's comparison: a retry is compared with the request as it was stored.
  PP_RETURN_IF_ERROR(ApplyTimeLimit(request));
  if (spec.indices.empty()) return InvalidArgument("an array needs at least one task");
  PP_RETURN_IF_ERROR(CheckArraySize(spec, request, options_.max_array_tasks));
  auto keyed = LookUpKey(caller, idempotency_key);
  if (!keyed.ok()) return keyed.status();
  if (const std::optional<JobRecord>& found = keyed->first) {
    if (!IsFirstTaskOf(*found, spec) || ToJson(found->request) != ToJson(request))
      return FailedPrecondition("idempotency key already used for job " + std::to_string(found->id) +
                                ", which asked for something else; use a new key for a new job");
    auto active = active_.find(found->id);
    return SubmittedArray{active != active_.end() ? active->second : *found, found->array.count};
  }
  auto job = NewPendingJob(caller, std::move(request), hold, spec.indices.size());
  if (!job.ok()) return job.status();
  std::vector<JobRecord> tasks = ArrayTaskRecords(*job, spec);
  auto ids = deps_.store->InsertArray(tasks, keyed->key);
  if (!ids.ok()) return ids.status();
  for (size_t i = 0; i < tasks.size(); ++i) {
    JobRecord& task = tasks[i];
    task.id = (*ids)[i];
    task.array.array_id = ids->front();
    if (task.hold != Hold::kNone) lifecycle::Waiting(task, reason::kHeld, sched::HeldDetail(task.id, task.hold));
    held_bytes_.Add(task);
    active_[task.id] = std::move(task);
  }
  // Once for the array, on its first task: the same names were dropped from every task.
  if (!dropped.empty()) NoteDroppedEnv(ids->front(), dropped);
  dirty_ = true;
  ++generation_;
  return SubmittedArray{active_[ids->front()], static_cast<int>(tasks.size())};
}

std::optional<std::vector<JobId>> Node::UnfinishedArrayTasks(JobId id) const {
  std::vector<JobId> ids;
  // The tasks have the ids id, id + 1, ... and no other job has an id among them: the active
  // ones are one run of active_ from `id` on, even when the first task has ended (or was purged).
  for (auto it = active_.lower_bound(id); it != active_.end() && it->second.array.array_id == id; ++it) {
    if (!IsFinal(it->second.state)) ids.push_back(it->first);
  }
  if (!ids.empty()) return ids;
  auto first = Get(id);  // none left: is `id` an array whose tasks have all ended?
  if (first.ok() && first->array.array_id == id) return ids;
  return std::nullopt;
}

}  // namespace pinpoint::daemon
