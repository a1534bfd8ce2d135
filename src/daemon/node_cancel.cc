// Node's cancels and stops (node.h): who may, what is recorded (one batch for a request), and
// the safe stop of a running job (MPS terminate_client, SIGTERM, SIGKILL after the grace).
#include <signal.h>

#include "common/log.h"
#include "daemon/job_room.h"
#include "daemon/lifecycle.h"
#include "daemon/node.h"
#include "daemon/sched_view.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::daemon {

Result<JobRecord*> Node::ControlledJob(const api::Caller& caller, JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    auto stored = deps_.store->Get(id);
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
    return FailedPrecondition("job " + std::to_string(id) + " already ended (" + JobStateName(job.state) + ")");
  return &job;
}

std::vector<Status> Node::Cancel(const api::Caller& caller, const std::vector<JobId>& ids,
                                 uint64_t max_rewrite_bytes) {
  std::vector<Status> out(ids.size());
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
    auto found = ControlledJob(caller, ids[i]);
    if (!found.ok()) {
      out[i] = found.status();
      continue;
    }
    JobRecord& job = **found;
    if (job.cancel_requested) continue;  // ok again
    if (!budget.Spend(RecordBytes(job))) {
      for (size_t k = i; k < ids.size(); ++k) out[k] = NotReached();
      break;
    }
    JobRecord before = job;
    lifecycle::Cancel(job, by, deps_.clock->NowMs());
    // A pending job ends at once; a running one is stopped once its cancel is recorded.
    Status s = IsFinal(job.state) ? jobs_.Persist(job, "end", job.detail) : jobs_.Persist(job, "cancel-request", "by " + by);
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
      SafeStop(job);
    }
  }
  return out;
}

void Node::SafeStop(JobRecord& job) {
  // The backends let go of the job's processes before any signal reaches them (the MPS server
  // terminates its clients), so the neighbours on the device are never left in an undefined state.
  std::optional<std::vector<int64_t>> pids;
  auto processes = [&] {
    if (!pids) pids = OccupantOf(job).Processes(job);
    return *pids;
  };
  for (const auto& a : job.allocations) {
    Status t = sharing_->For(a.mode).StopClients(SliceOf(job, a), processes);
    if (!t.ok()) log::Warn("job {}: stopping its clients: {}", job.id, t.message());
  }
  kill_at_ms_[job.id] = deps_.clock->NowMs() + options_.cancel_grace_ms;
  // The server's answer comes later (never waited on): Step sends SIGTERM once it has come, or
  // once it is overdue; the SIGKILL deadline holds either way.
  if (sharing_->Stopping(static_cast<uint64_t>(job.id))) {
    term_pending_.insert(job.id);
    return;
  }
  Status s = OccupantOf(job).Signal(job, SIGTERM);
  if (s.code() == Code::kUnavailable) term_pending_.insert(job.id);  // not started yet: Step sends it
  else if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
}

void Node::StopJob(JobRecord& job, Reason stop_reason, std::string detail) {
  if (!lifecycle::Stop(job, stop_reason, std::move(detail))) return;
  Status s = jobs_.Persist(job, "stop", job.stop_detail);
  if (!s.ok()) log::Error("job {}: cannot record stop: {}", job.id, s.ToString());
  log::Warn("job {}: {}: stopping it", job.id, job.stop_detail);
  SafeStop(job);
}

}  // namespace pinpoint::daemon
