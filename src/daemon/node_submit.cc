// Node's ways in for jobs (node.h): submit and job arrays. Admission (admission.h) checks the
// request; here the idempotency key is looked up, dependencies are checked and the records are
// stored, an array's tasks in one transaction.
#include <algorithm>

#include "daemon/job_array.h"
#include "daemon/lifecycle.h"
#include "daemon/node.h"
#include "pinpoint/api_codec.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

namespace {

// Keys come from clients and are echoed in errors and stored: short printable ASCII only.
Status ValidateIdempotencyKey(const std::string& key) {
  constexpr size_t kMaxKeyBytes = 128;
  if (key.empty() || key.size() > kMaxKeyBytes ||
      !std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    return InvalidArgument("\"idempotency_key\" must be 1 to 128 printable ASCII characters "
                           "without spaces");
  }
  return Status::Ok();
}

}  // namespace

Result<JobRecord> Node::Submit(const api::Caller& caller, JobRequest request,
                               const std::optional<std::string>& idempotency_key, bool hold) {
  auto dropped = admission_.Prepare(request);
  if (!dropped.ok()) return dropped.status();
  auto keyed = LookUpKey(caller, idempotency_key);
  if (!keyed.ok()) return keyed.status();
  std::optional<store::IdempotencyKey> key = keyed->key;
  if (keyed->first) return ResubmittedJob(*keyed->first, request);
  auto pending = NewPendingJob(caller, std::move(request), hold);
  if (!pending.ok()) return pending.status();
  JobRecord r = std::move(pending).value();
  auto id = deps_.store->Insert(r, key);
  if (!id.ok()) return id.status();
  r.id = *id;
  if (r.hold != Hold::kNone) lifecycle::Waiting(r, Reason::kHeld, sched::HeldDetail(r.id, r.hold));
  if (!dropped->empty()) NoteDroppedEnv(r.id, *dropped);
  jobs_.Add(r);
  dirty_ = true;
  return r;
}

Result<Node::KeyedSubmit> Node::LookUpKey(const api::Caller& caller,
                                          const std::optional<std::string>& idempotency_key) const {
  KeyedSubmit keyed;
  if (!idempotency_key) return keyed;
  PP_RETURN_IF_ERROR(ValidateIdempotencyKey(*idempotency_key));
  keyed.key = store::IdempotencyKey{caller.uid, *idempotency_key};
  auto first = deps_.store->FindByIdempotencyKey(*keyed.key);
  if (!first.ok()) return first.status();
  keyed.first = std::move(first).value();
  return keyed;
}

Result<JobRecord> Node::NewPendingJob(const api::Caller& caller, JobRequest request, bool hold,
                                      size_t jobs) {
  auto admitted = admission_.Admit(caller, std::move(request), jobs_, jobs);
  if (!admitted.ok()) return admitted.status();
  JobRecord r = std::move(admitted).value();
  PP_RETURN_IF_ERROR(CheckDependencies(caller, r.request));
  lifecycle::Submitted(r, deps_.clock->NowMs());
  if (hold) r.hold = caller.IsRoot() ? Hold::kRoot : Hold::kUser;
  return r;
}

Result<JobRecord> Node::ResubmittedJob(const JobRecord& first, const JobRequest& request) const {
  if (first.array.array_id != 0 || ToJson(first.request) != ToJson(request)) {
    return FailedPrecondition("idempotency key already used for job " + std::to_string(first.id) +
                              ", which asked for something else; use a new key for a new job");
  }
  auto active = jobs_.find(first.id);
  return active != jobs_.end() ? active->second : first;
}

Result<Node::SubmittedArray> Node::SubmitArray(const api::Caller& caller, JobRequest request,
                                               const ArraySpec& spec,
                                               const std::optional<std::string>& idempotency_key,
                                               bool hold) {
  // As Submit; every task has the same request (its time limit and dependencies too).
  auto dropped = admission_.PrepareArray(request, spec);
  if (!dropped.ok()) return dropped.status();
  auto keyed = LookUpKey(caller, idempotency_key);
  if (!keyed.ok()) return keyed.status();
  if (const std::optional<JobRecord>& found = keyed->first) {
    if (!IsFirstTaskOf(*found, spec) || ToJson(found->request) != ToJson(request))
      return FailedPrecondition("idempotency key already used for job " + std::to_string(found->id) +
                                ", which asked for something else; use a new key for a new job");
    auto active = jobs_.find(found->id);
    return SubmittedArray{active != jobs_.end() ? active->second : *found, found->array.count};
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
    if (task.hold != Hold::kNone) lifecycle::Waiting(task, Reason::kHeld, sched::HeldDetail(task.id, task.hold));
    jobs_.Add(std::move(task));
  }
  // Once for the array, on its first task: the same names were dropped from every task.
  if (!dropped->empty()) NoteDroppedEnv(ids->front(), *dropped);
  dirty_ = true;
  return SubmittedArray{jobs_.at(ids->front()), static_cast<int>(tasks.size())};
}

std::optional<std::vector<JobId>> Node::UnfinishedArrayTasks(JobId id) const {
  std::vector<JobId> ids;
  // The tasks have the ids id, id + 1, ... and no other job has an id among them: the active
  // ones are one run of jobs_ from `id` on, even when the first task has ended (or was purged).
  for (auto it = jobs_.lower_bound(id); it != jobs_.end() && it->second.array.array_id == id; ++it) {
    if (!IsFinal(it->second.state)) ids.push_back(it->first);
  }
  if (!ids.empty()) return ids;
  auto first = Get(id);  // none left: is `id` an array whose tasks have all ended?
  if (first.ok() && first->array.array_id == id) return ids;
  return std::nullopt;
}

std::optional<std::vector<JobId>> Node::ArrayTasksFor(JobId id, ArrayChange change, bool root, int limit) const {
  std::optional<std::vector<JobId>> tasks = UnfinishedArrayTasks(id);
  if (!tasks) return tasks;
  Hold wanted = root ? Hold::kRoot : Hold::kUser;
  std::erase_if(*tasks, [&](JobId task) {
    const JobRecord& job = jobs_.at(task);
    bool pending = job.state == JobState::kPending && !job.cancel_requested;
    switch (change) {
      case ArrayChange::kCancel: return job.cancel_requested;
      case ArrayChange::kHold: return !pending || job.hold == wanted || (job.hold == Hold::kRoot && !root);
      case ArrayChange::kRelease: return !pending || job.hold == Hold::kNone;
      case ArrayChange::kPending: return !pending;
      case ArrayChange::kLimit: return job.array.limit == limit;
    }
    return true;
  });
  return tasks;
}

}  // namespace pinpoint::daemon
