// Node's hold and release (daemon/hold.h has the policy) and the note on dropped variables.
#include <spdlog/spdlog.h>

#include "daemon/hold.h"
#include "daemon/job_room.h"
#include "daemon/node.h"
#include "pinpoint/escape.h"
#include "pinpoint/rewrite_budget.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

std::vector<Status> Node::HoldJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                   uint64_t max_rewrite_bytes) {
  return SetHolds(caller, ids, "hold", DecideHold, max_rewrite_bytes);
}

std::vector<Status> Node::ReleaseJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                      uint64_t max_rewrite_bytes) {
  return SetHolds(caller, ids, "release", DecideRelease, max_rewrite_bytes);
}

std::vector<Status> Node::SetHolds(const api::Caller& caller, const std::vector<JobId>& ids,
                                   const char* event, Result<Hold> (*decide)(const JobRecord&, bool),
                                   uint64_t max_rewrite_bytes) {
  std::vector<Status> out(ids.size());
  std::string by = NameOrUid(*users_, caller.uid);
  // One batch for the whole request, as cancel: 10000 ids cost one fsync, not 10000, so no
  // request of one user holds the loop for long. Without a batch each is its own transaction.
  auto batch = deps_.store->BeginBatch();
  std::vector<std::pair<size_t, JobRecord>> changed;  // where, and the job as it was before
  RewriteBudget budget(max_rewrite_bytes);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto found = ControlledJob(caller, ids[i]);
    Result<Hold> hold = found.ok() ? decide(**found, caller.IsRoot()) : Result<Hold>(found.status());
    if (!hold.ok() || (*found)->hold == *hold) {  // a repeated id finds it done: ok again
      out[i] = hold.status();
      continue;
    }
    JobRecord& job = **found;
    if (!budget.Spend(RecordBytes(job))) {
      for (size_t k = i; k < ids.size(); ++k) out[k] = NotReached();
      break;
    }
    JobRecord before = job;
    job.hold = *hold;
    if (job.hold == Hold::kNone) lifecycle::Waiting(job, "", "");  // the next pass says why it waits
    else lifecycle::Waiting(job, reason::kHeld, sched::HeldDetail(job.id, job.hold));
    out[i] = jobs_.Persist(job, event, "by " + by);
    if (!out[i].ok()) {
      job = std::move(before);  // not recorded: nothing changed
      continue;
    }
    changed.emplace_back(i, std::move(before));
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  // Undone newest first: an id named twice is back as it was before the first.
  for (auto it = changed.rbegin(); !committed.ok() && it != changed.rend(); ++it) {
    jobs_.at(it->second.id) = std::move(it->second);
    out[it->first] = committed;
  }
  if (!changed.empty()) dirty_ = true;
  return out;
}

void Node::NoteDroppedEnv(JobId id, const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + EscapeForTerminal(n);
  store::JobEvent e{id, deps_.clock->NowMs(), "env-dropped",
                    "not stored (they match the node's env_deny): " + list};
  Status s = deps_.store->AppendEvent(e);
  if (!s.ok()) spdlog::warn("job {}: {}", id, s.ToString());
}

}  // namespace pinpoint::daemon
