// Node's hold and release (daemon/hold.h has the policy) and the note on dropped variables.

#include "common/log.h"
#include "daemon/hold.h"
#include "daemon/job_room.h"
#include "daemon/node.h"
#include "pinpoint/escape.h"
#include "pinpoint/rewrite_budget.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

namespace {

// The change that sets a job's hold to what `decide` says for `caller` (RewriteJobs's).
std::function<Result<bool>(JobRecord&)> SetHold(const api::Caller& caller,
                                                Result<Hold> (*decide)(const JobRecord&, bool)) {
  return [root = caller.IsRoot(), decide](JobRecord& job) -> Result<bool> {
    Result<Hold> hold = decide(job, root);
    if (!hold.ok()) return hold.status();
    if (job.hold == *hold) return false;  // a repeated id finds it done: ok again
    job.hold = *hold;
    if (job.hold == Hold::kNone) lifecycle::Waiting(job, Reason::kNone, "");  // the next pass says why it waits
    else lifecycle::Waiting(job, Reason::kHeld, sched::HeldDetail(job.id, job.hold));
    return true;
  };
}

}  // namespace

std::vector<Status> Node::HoldJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                   uint64_t max_rewrite_bytes) {
  return RewriteJobs(caller, ids, "hold", max_rewrite_bytes, SetHold(caller, DecideHold));
}

std::vector<Status> Node::ReleaseJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                      uint64_t max_rewrite_bytes) {
  return RewriteJobs(caller, ids, "release", max_rewrite_bytes, SetHold(caller, DecideRelease));
}

std::vector<Status> Node::SetArrayLimit(const api::Caller& caller, const std::vector<JobId>& ids, int limit,
                                        uint64_t max_rewrite_bytes) {
  return RewriteJobs(caller, ids, "array-limit", max_rewrite_bytes, [&](JobRecord& job) -> Result<bool> {
    if (job.array.array_id == 0) return InvalidArgument("job " + std::to_string(job.id) + " is no task of a job array");
    if (job.array.limit == limit) return false;
    job.array.limit = limit;
    if (job.reason == Reason::kArrayLimit) lifecycle::Waiting(job, Reason::kNone, "");  // the next pass says
    return true;
  });
}

std::vector<Status> Node::RewriteJobs(const api::Caller& caller, const std::vector<JobId>& ids, const char* event,
                                      uint64_t max_rewrite_bytes,
                                      const std::function<Result<bool>(JobRecord&)>& change) {
  std::vector<Status> out(ids.size());
  std::string by = NameOrUid(*users_, caller.uid);
  // One batch for the whole request, as cancel: 10000 ids cost one fsync, not 10000, so no
  // request of one user holds the loop for long. Without a batch each is its own transaction.
  auto batch = deps_.store->BeginBatch();
  std::vector<std::pair<size_t, JobRecord>> changed;  // where, and the job as it was before
  RewriteBudget budget(max_rewrite_bytes);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto found = ControlledJob(caller, ids[i]);
    if (!found.ok()) {
      out[i] = found.status();
      continue;
    }
    JobRecord& job = **found;
    JobRecord before = job;
    Result<bool> did = change(job);
    if (!did.ok() || !*did) {  // refused, or already so: no rewrite, no budget spent
      out[i] = did.status();
      job = std::move(before);
      continue;
    }
    if (!budget.Spend(RecordBytes(job))) {
      job = std::move(before);
      for (size_t k = i; k < ids.size(); ++k) out[k] = NotReached();
      break;
    }
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

}  // namespace pinpoint::daemon
