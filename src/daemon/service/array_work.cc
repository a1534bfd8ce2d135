#include "daemon/service/array_work.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/root_reserve.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::daemon {

Status ArrayWorkQueue::MayStart(const api::Caller& caller) const {
  size_t mine = std::count_if(queue_.begin(), queue_.end(),
                              [&](const ArrayWork& w) { return w.caller.uid == caller.uid; });
  if (queue_.size() >= CapFor(kArrayWorkMax, caller.IsRoot()) ||
      (!caller.IsRoot() && mine >= kArrayWorkMaxPerUid))
    return Unavailable("pinpointd is already working through " + std::to_string(queue_.size()) +
                       " requests on job arrays (" + std::to_string(mine) +
                       " of yours); try again later");
  return Status::Ok();
}

std::optional<ArrayWork> ArrayWorkQueue::Continue() {
  if (queue_.empty()) return std::nullopt;
  ArrayWork& work = queue_.front();
  if (!Advance(work)) {
    std::rotate(queue_.begin(), queue_.begin() + 1, queue_.end());  // the next one's turn
    return std::nullopt;
  }
  ArrayWork done = std::move(work);
  queue_.pop_front();
  return done;
}

void ArrayWorkQueue::Closed(api::ConnId conn) {
  for (ArrayWork& work : queue_) work.client_gone = work.client_gone || work.conn == conn;
}

std::vector<Status> ApplyChange(Node& node, const api::Caller& caller, ArrayTasks::Change change,
                                const JobEdit& edit, const std::vector<JobId>& ids, uint64_t budget,
                                bool rests_whole) {
  switch (change) {
    case ArrayTasks::Change::kCancel:
      return node.Cancel(caller, ids, budget, rests_whole);
    case ArrayTasks::Change::kHold:
      return node.HoldJobs(caller, ids, budget, rests_whole);
    case ArrayTasks::Change::kUpdate:
      return node.UpdateJobs(caller, ids, edit, budget, rests_whole);
    case ArrayTasks::Change::kRelease:
      return node.ReleaseJobs(caller, ids, budget, rests_whole);
    case ArrayTasks::Change::kPending:
      break;  // a filter, never a request's change
  }
  return std::vector<Status>(ids.size(), Internal("no change to apply"));
}

std::optional<std::vector<JobId>> ArrayWorkQueue::TasksLeft(const ArrayWork& work, JobId id) const {
  auto tasks = node_->arrays().For(id, work.change, work.caller.IsRoot(), work.edit);
  // A task the change refused is not tried again: the work always ends.
  if (tasks) std::erase_if(*tasks, [&](JobId task) { return work.refused.count(task) > 0; });
  return tasks;
}

bool ArrayWorkQueue::Advance(ArrayWork& work) {
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
      std::vector<Status> statuses = ApplyToTasks(work, run, kRewriteBytesPerRequest, false);
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
      std::vector<size_t> weights;  // the tasks each id stands for: a rest, all of its
      for (JobId task : *tasks) weights.push_back(node_->arrays().TasksOf(task));
      std::vector<Status> statuses = ApplyToTasks(work, *tasks, kRewriteBytesPerRequest, true);
      for (size_t i = 0; i < tasks->size(); ++i) {
        const Status& s = statuses[i];
        if (s.ok()) {
          current.array_tasks += static_cast<int>(weights[i]);
        } else if (IsNotReached(s)) {
          more = true;
        } else {
          work.refused.insert((*tasks)[i]);
          if (s.code() != Code::kFailedPrecondition && current.status.ok())
            current.status = s;
          else if (work.first_refusal.ok())
            work.first_refusal = s;
        }
      }
      applied = true;
      if (more && current.status.ok()) return false;
      continue;  // listed again: nothing should be left
    }
    if (current.status.ok() && current.array_tasks == 0) current.status = NoneLeft(work, id);
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
Status ArrayWorkQueue::NoneLeft(const ArrayWork& work, JobId id) {
  // cancel and update reach every unfinished task; hold and release the pending ones.
  bool cancel =
      work.change == ArrayTasks::Change::kCancel || work.change == ArrayTasks::Change::kUpdate;
  auto unfinished = node_->arrays().For(id, ArrayTasks::Change::kPending, work.caller.IsRoot());
  Status first = ApplyToTasks(work, {id}, 0, true).front();  // the first task: who may see it
  if (!first.ok() && first.code() != Code::kFailedPrecondition) return first;
  if (!work.first_refusal.ok()) return work.first_refusal;
  if (unfinished && !unfinished->empty() && !cancel) return Status::Ok();  // all already as asked
  if (cancel && node_->arrays().Unfinished(id).value_or(std::vector<JobId>{}).size() > 0)
    return Status::Ok();
  return FailedPrecondition("array " + std::to_string(id) +
                            (cancel ? " already ended (all its tasks)" : " has no pending task"));
}

}  // namespace pinpoint::daemon
