// Node's hold, release and update (daemon/jobs/hold.h and daemon/jobs/job_edit.h have the
// policies): rewrites of pending jobs' records, one store batch a request.

#include "common/log.h"
#include "daemon/jobs/hold.h"
#include "daemon/jobs/job_edit.h"
#include "daemon/jobs/job_room.h"
#include "daemon/node/node.h"
#include "pinpoint/escape.h"
#include "pinpoint/rewrite_budget.h"
#include "pinpoint/time_limit.h"
#include "pinpoint/units.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

namespace {

// The change that sets a job's hold to what `decide` says for `caller` (RewriteJobs's).
std::function<Result<bool>(JobRecord&, const JobRecord&)> SetHold(
    const api::Caller& caller, Result<Hold> (*decide)(const JobRecord&, bool)) {
  return [root = caller.IsRoot(), decide](JobRecord& job, const JobRecord&) -> Result<bool> {
    Result<Hold> hold = decide(job, root);
    if (!hold.ok()) return hold.status();
    if (job.hold == *hold) return false;  // a repeated id finds it done: ok again
    job.hold = *hold;
    if (job.hold == Hold::kNone)
      lifecycle::Waiting(job, Reason::kNone, "");  // the next pass says why it waits
    else
      lifecycle::Waiting(job, Reason::kHeld, sched::HeldDetail(job.id, job.hold));
    return true;
  };
}

// What an update changes, for its event: "time limit 2h, gpu-mem 4GiB, name \"a\"".
std::string DescribeEdit(const JobEdit& e) {
  std::vector<std::string> parts;
  if (e.time_limit_s)
    parts.push_back("time limit " + (*e.time_limit_s == 0 ? std::string("none")
                                                          : FormatTimeLimit(*e.time_limit_s)));
  if (e.gpu_mem_bytes) parts.push_back("gpu-mem " + FormatSize(*e.gpu_mem_bytes));
  if (e.gpu_share_pct) parts.push_back("gpu-share " + std::to_string(*e.gpu_share_pct) + "%");
  if (e.priority) parts.push_back("priority " + std::to_string(*e.priority));
  if (e.name) parts.push_back("name \"" + *e.name + "\"");
  if (e.array_limit) parts.push_back("array limit " + std::to_string(*e.array_limit));
  if (e.gpus) parts.push_back("gpus " + std::to_string(*e.gpus));
  if (e.cpus) parts.push_back("cpus " + std::to_string(*e.cpus));
  if (e.mem_bytes)
    parts.push_back("mem " +
                    (*e.mem_bytes == 0 ? std::string("no limit") : FormatSize(*e.mem_bytes)));
  if (e.mig_profile)
    parts.push_back("mig " + (e.mig_profile->empty() ? std::string("none") : *e.mig_profile));
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

}  // namespace

std::vector<Status> Node::HoldJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                   uint64_t max_rewrite_bytes, bool rests_whole) {
  return RewriteJobs(caller, ids, "hold", max_rewrite_bytes, rests_whole,
                     SetHold(caller, DecideHold));
}

std::vector<Status> Node::ReleaseJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                      uint64_t max_rewrite_bytes, bool rests_whole) {
  return RewriteJobs(caller, ids, "release", max_rewrite_bytes, rests_whole,
                     SetHold(caller, DecideRelease));
}

std::vector<Status> Node::UpdateJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                     JobEdit edit, uint64_t max_rewrite_bytes, bool rests_whole) {
  Status prepared = admission_.PrepareEdit(edit);
  if (!prepared.ok()) return std::vector<Status>(ids.size(), prepared);
  return RewriteJobs(
      caller, ids, "update", max_rewrite_bytes, rests_whole,
      [&](JobRecord& job, const JobRecord& before) -> Result<bool> {
        Result<bool> changed = ApplyEdit(job, edit, caller.IsRoot());
        if (!changed.ok() || !*changed) return changed;
        PP_RETURN_IF_ERROR(admission_.CheckEdit(caller, before, job, jobs_));
        return true;
      },
      DescribeEdit(edit));
}

std::vector<Status> Node::RewriteJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                      const char* event, uint64_t max_rewrite_bytes,
                                      bool rests_whole, const JobChange& change,
                                      const std::string& detail) {
  // Tasks named alone leave their array's rest first, in their own transaction.
  std::vector<Status> out =
      TakeOutTasks(jobs_, *deps_.store, ids, &caller, max_rewrite_bytes, rests_whole);
  std::string by = "by " + NameOrUid(*users_, caller.uid) + (detail.empty() ? "" : ": " + detail);
  // One batch for the whole request, as cancel: 10000 ids cost one fsync, not 10000, so no
  // request of one user holds the loop for long. Without a batch each is its own transaction.
  auto batch = deps_.store->BeginBatch();
  std::vector<std::pair<size_t, JobRecord>> changed;  // where, and the job as it was before
  RewriteBudget budget(max_rewrite_bytes);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (IsNotReached(out[i])) break;
    if (!out[i].ok()) continue;
    auto found = ControlledJob(caller, ids[i]);
    if (!found.ok()) {
      out[i] = found.status();
      continue;
    }
    JobRecord& job = **found;
    JobRecord before = job;
    Result<bool> did = change(job, before);
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
    jobs_.RequestChanged(before, job);
    out[i] = jobs_.Persist(job, event, by);
    if (!out[i].ok()) {
      jobs_.RequestChanged(job, before);
      job = std::move(before);  // not recorded: nothing changed
      continue;
    }
    changed.emplace_back(i, std::move(before));
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  // Undone newest first: an id named twice is back as it was before the first.
  for (auto it = changed.rbegin(); !committed.ok() && it != changed.rend(); ++it) {
    jobs_.RequestChanged(jobs_.at(it->second.id), it->second);
    jobs_.at(it->second.id) = std::move(it->second);
    out[it->first] = committed;
  }
  if (!changed.empty()) dirty_ = true;
  return out;
}

}  // namespace pinpoint::daemon
