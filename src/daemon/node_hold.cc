// Node's hold and release (daemon/hold.h has the policy) and the note on dropped variables.
#include <spdlog/spdlog.h>

#include "daemon/hold.h"
#include "daemon/node.h"
#include "pinpoint/escape.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

std::vector<Status> Node::HoldJobs(const api::Caller& caller, const std::vector<JobId>& ids) {
  return SetHolds(caller, ids, "hold", DecideHold);
}

std::vector<Status> Node::ReleaseJobs(const api::Caller& caller, const std::vector<JobId>& ids) {
  return SetHolds(caller, ids, "release", DecideRelease);
}

std::vector<Status> Node::SetHolds(const api::Caller& caller, const std::vector<JobId>& ids,
                                   const char* event,
                                   Result<Hold> (*decide)(const JobRecord&, bool)) {
  std::vector<Status> out;
  std::string by = NameOrUid(*users_, caller.uid);
  for (JobId id : ids) {
    auto found = ControlledJob(caller, id);
    Result<Hold> hold = found.ok() ? decide(**found, caller.IsRoot()) : Result<Hold>(found.status());
    if (!hold.ok() || (*found)->hold == *hold) {
      out.push_back(hold.status());
      continue;
    }
    JobRecord& job = **found;
    JobRecord before = job;
    job.hold = *hold;
    if (job.hold == Hold::kNone) lifecycle::Waiting(job, "", "");  // the next pass says why it waits
    else lifecycle::Waiting(job, reason::kHeld, sched::HeldDetail(id, job.hold));
    Status s = Persist(job, event, "by " + by);
    if (!s.ok()) job = std::move(before);  // not recorded: nothing changed
    out.push_back(s);
    dirty_ = true;
  }
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
