// Node's cancels (node.h): who may, and what is recorded (one batch for a request); a running
// job's safe stop is the runner's (JobRunner::SafeStop).
#include "common/log.h"
#include "daemon/jobs/job_room.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/sched_view.h"
#include "daemon/node/node.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::daemon {

Result<JobRecord*> Node::ControlledJob(const api::Caller& caller, JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    auto stored = arrays_.Job(id);
    if (!stored.ok()) return NotFound("no job " + std::to_string(id));
    if (!api::MayControlJob(caller, stored->uid))
      return PermissionDenied("job " + std::to_string(id) + " belongs to " + stored->user);
    return FailedPrecondition("job " + std::to_string(id) + " already ended (" +
                              JobStateName(stored->state) + ")");
  }
  JobRecord& job = it->second;
  if (!api::MayControlJob(caller, job.uid))
    return PermissionDenied("job " + std::to_string(id) + " belongs to " + job.user);
  if (IsFinal(job.state))
    return FailedPrecondition("job " + std::to_string(id) + " already ended (" +
                              JobStateName(job.state) + ")");
  return &job;
}

std::vector<Status> Node::Cancel(const api::Caller& caller, const std::vector<JobId>& ids,
                                 uint64_t max_rewrite_bytes, bool rests_whole) {
  // Tasks named alone leave their array's rest first, in their own transaction.
  std::vector<Status> out =
      TakeOutTasks(jobs_, *deps_.store, ids, &caller, max_rewrite_bytes, rests_whole);
  RewriteBudget budget(max_rewrite_bytes);
  std::string by = NameOrUid(*users_, caller.uid);
  // One batch for every cancel: the thousand tasks of a job array cost one fsync, not a thousand.
  // Without a batch (the store refused one) each is its own transaction: slower, as safe.
  auto batch = deps_.store->BeginBatch();
  struct Change {
    size_t at;
    JobRecord* job;
    JobRecord before;
  };
  std::vector<Change> changes;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (IsNotReached(out[i])) break;
    if (!out[i].ok()) continue;
    auto found = ControlledJob(caller, ids[i]);
    if (!found.ok()) {
      out[i] = found.status();
      continue;
    }
    JobRecord& job = **found;
    // Ok again; a job being preempted is cancelled instead (its requeue would outlive the cancel).
    if (job.cancel_requested && job.stop_reason != Reason::kPreempted) continue;
    if (!budget.Spend(RecordBytes(job))) {
      for (size_t k = i; k < ids.size(); ++k) out[k] = NotReached();
      break;
    }
    JobRecord before = job;
    lifecycle::Cancel(job, by, deps_.clock->NowMs());
    // A pending job ends at once; a running one is stopped once its cancel is recorded.
    Status s = IsFinal(job.state) ? jobs_.Persist(job, "end", job.detail)
                                  : jobs_.Persist(job, "cancel-request", "by " + by);
    if (!s.ok()) {
      job = std::move(before);  // not recorded: nothing changed, a later cancel tries again
      out[i] = s;
      continue;
    }
    changes.push_back({i, &job, std::move(before)});
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  for (Change& change : changes) {
    JobRecord& job = *change.job;
    if (!committed.ok()) {
      // A pending job stays pending rather than come back after a restart.
      job = std::move(change.before);
      out[change.at] = committed;
    } else if (IsFinal(job.state)) {
      dirty_ = true;  // stays in jobs_ until the next Step reports it ended, for its waiters
    } else {
      runner_.SafeStop(job);
    }
  }
  return out;
}

}  // namespace pinpoint::daemon
