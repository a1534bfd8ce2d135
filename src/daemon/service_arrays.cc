// Service's requests on many jobs at once (service.h): cancel, hold, release, update and
// update_array, their ids answered at once and their job arrays worked through from the main
// loop (ArrayWork), one request's budget a pass.
#include <algorithm>

#include "api/protocol.h"
#include "common/root_reserve.h"
#include "daemon/service.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::daemon {

namespace {

// One result per id, as "cancel", "hold", "release" and "update" answer.
std::vector<CancelResult> Results(const std::vector<JobId>& ids, const std::vector<Status>& statuses) {
  std::vector<CancelResult> results;
  for (size_t i = 0; i < ids.size(); ++i) results.push_back({ids[i], statuses[i], 0});
  return results;
}

}  // namespace

Result<CancelReply> Service::Cancel(Call& call, CancelRequest request) {
  CancelReply reply{Results(request.ids, node_->Cancel(call.caller, request.ids, kRewriteBytesPerRequest))};
  return StartArrayWork(call, ArrayTasks::Change::kCancel, std::move(reply.results), request.arrays, reply);
}

Result<HoldReply> Service::Hold(Call& call, HoldRequest request) {
  HoldReply reply{Results(request.ids, node_->HoldJobs(call.caller, request.ids))};
  return StartArrayWork(call, ArrayTasks::Change::kHold, std::move(reply.results), request.arrays, reply);
}

Result<ReleaseReply> Service::Release(Call& call, ReleaseRequest request) {
  ReleaseReply reply{Results(request.ids, node_->ReleaseJobs(call.caller, request.ids))};
  return StartArrayWork(call, ArrayTasks::Change::kRelease, std::move(reply.results), request.arrays, reply);
}

Result<UpdateReply> Service::Update(Call& call, UpdateRequest request) {
  UpdateReply reply{Results(request.ids, node_->UpdateJobs(call.caller, request.ids, request.edit))};
  return StartArrayWork(call, ArrayTasks::Change::kUpdate, std::move(reply.results), request.arrays, reply,
                        request.edit);
}

Result<UpdateArrayReply> Service::UpdateArray(Call& call, UpdateArrayRequest request) {
  UpdateArrayReply reply;
  JobEdit edit;
  edit.array_limit = request.limit;
  return StartArrayWork(call, ArrayTasks::Change::kUpdate, {}, request.arrays, reply, edit);
}

template <typename Reply>
Result<Reply> Service::StartArrayWork(Call& call, ArrayTasks::Change change, std::vector<CancelResult> results,
                                      const std::vector<JobId>& arrays, Reply& reply, const JobEdit& edit) {
  if (arrays.empty()) {
    reply.results = std::move(results);
    return reply;
  }
  size_t mine = std::count_if(array_work_.begin(), array_work_.end(),
                              [&](const ArrayWork& w) { return w.caller.uid == call.caller.uid; });
  if (array_work_.size() >= CapFor(kArrayWorkMax, call.caller.IsRoot()) ||
      (!call.caller.IsRoot() && mine >= kArrayWorkMaxPerUid))
    return Unavailable("pinpointd is already working through " + std::to_string(array_work_.size()) +
                       " requests on job arrays (" + std::to_string(mine) + " of yours); try again later");
  ArrayWork work{call.conn, call.caller, change, std::move(results), arrays};
  work.edit = edit;
  work.current.id = arrays.front();
  if (AdvanceArrayWork(work)) {  // one budget's worth now: a small array is answered at once
    reply.results = std::move(work.results);
    return reply;
  }
  call.deferred = true;
  array_work_.push_back(std::move(work));
  return reply;
}

std::vector<Status> Service::ApplyToTasks(const ArrayWork& work, const std::vector<JobId>& ids, uint64_t budget) {
  switch (work.change) {
    case ArrayTasks::Change::kCancel: return node_->Cancel(work.caller, ids, budget);
    case ArrayTasks::Change::kHold: return node_->HoldJobs(work.caller, ids, budget);
    case ArrayTasks::Change::kUpdate: return node_->UpdateJobs(work.caller, ids, work.edit, budget);
    case ArrayTasks::Change::kRelease: return node_->ReleaseJobs(work.caller, ids, budget);
    case ArrayTasks::Change::kPending: break;  // a filter, never a request's change
  }
  return std::vector<Status>(ids.size(), Internal("no change to apply"));
}

std::optional<std::vector<JobId>> Service::TasksLeft(const ArrayWork& work, JobId id) const {
  auto tasks = node_->arrays().For(id, work.change, work.caller.IsRoot(), work.edit);
  // A task the change refused is not tried again: the work always ends.
  if (tasks) std::erase_if(*tasks, [&](JobId task) { return work.refused.count(task) > 0; });
  return tasks;
}

bool Service::AdvanceArrayWork(ArrayWork& work) {
  bool applied = false;  // one budget's worth a call: a second rewrite waits for the next pass
  while (work.next < work.arrays.size()) {
    JobId id = work.arrays[work.next];
    CancelResult& current = work.current;
    auto tasks = TasksLeft(work, id);
    if (!tasks) {
      // No array's id: a job, as in `ids`. A run of them goes in one call under one budget; the
      // ones it did not reach, at the next pass.
      if (applied) return false;
      std::vector<JobId> run = {id};
      for (size_t i = work.next + 1; i < work.arrays.size() && run.size() < kCancelMaxIds; ++i) {
        if (TasksLeft(work, work.arrays[i])) break;
        run.push_back(work.arrays[i]);
      }
      std::vector<Status> statuses = ApplyToTasks(work, run, kRewriteBytesPerRequest);
      applied = true;
      for (size_t i = 0; i < run.size() && !IsNotReached(statuses[i]); ++i) {
        work.results.push_back({run[i], statuses[i], 0});
        ++work.next;
      }
      if (work.next < work.arrays.size()) work.current = {work.arrays[work.next], Status::Ok(), 0};
      continue;
    }
    if (!tasks->empty() && current.status.ok()) {
      if (applied) return false;
      // As a request of ids: at most kCancelMaxIds jobs and one rewrite budget (small records
      // cost per record, large ones per byte).
      bool more = tasks->size() > kCancelMaxIds;
      if (more) tasks->resize(kCancelMaxIds);
      std::vector<Status> statuses = ApplyToTasks(work, *tasks, kRewriteBytesPerRequest);
      for (size_t i = 0; i < tasks->size(); ++i) {
        const Status& s = statuses[i];
        if (s.ok()) {
          ++current.array_tasks;
        } else if (IsNotReached(s)) {
          more = true;
        } else {
          work.refused.insert((*tasks)[i]);
          if (s.code() != Code::kFailedPrecondition && current.status.ok()) current.status = s;
          else if (work.first_refusal.ok()) work.first_refusal = s;
        }
      }
      applied = true;
      if (more && current.status.ok()) return false;
      continue;  // listed again: nothing should be left
    }
    if (current.status.ok() && current.array_tasks == 0) current.status = ArrayNoneLeft(work, id);
    if (!current.status.ok()) current.array_tasks = 0;
    work.results.push_back(current);
    work.refused.clear();
    work.first_refusal = Status::Ok();
    if (++work.next < work.arrays.size()) work.current = {work.arrays[work.next], Status::Ok(), 0};
  }
  return true;
}

// An array the request reached no task of: who may see it decides the error, then a task's
// refusal, else it has none left (held ones count as done for hold, as a held job does).
Status Service::ArrayNoneLeft(const ArrayWork& work, JobId id) {
  // cancel and update reach every unfinished task; hold and release the pending ones.
  bool cancel = work.change == ArrayTasks::Change::kCancel || work.change == ArrayTasks::Change::kUpdate;
  auto unfinished = node_->arrays().For(id, ArrayTasks::Change::kPending, work.caller.IsRoot());
  Status first = ApplyToTasks(work, {id}, 0).front();  // the first task: who may see it
  if (!first.ok() && first.code() != Code::kFailedPrecondition) return first;
  if (!work.first_refusal.ok()) return work.first_refusal;
  if (unfinished && !unfinished->empty() && !cancel) return Status::Ok();  // all already as asked
  if (cancel && node_->arrays().Unfinished(id).value_or(std::vector<JobId>{}).size() > 0) return Status::Ok();
  return FailedPrecondition("array " + std::to_string(id) +
                            (cancel ? " already ended (all its tasks)" : " has no pending task"));
}

void Service::ContinueArrayWork() {
  if (array_work_.empty()) return;
  ArrayWork& work = array_work_.front();
  if (!AdvanceArrayWork(work)) {
    std::rotate(array_work_.begin(), array_work_.begin() + 1, array_work_.end());  // the next one's turn
    return;
  }
  if (reply_ && !work.client_gone) {
    nlohmann::json results = ToJson(CancelReply{std::move(work.results)});
    reply_(work.conn, api::OkReply(std::move(results)));
  }
  array_work_.pop_front();
}

}  // namespace pinpoint::daemon
