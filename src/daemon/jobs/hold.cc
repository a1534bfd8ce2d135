#include "daemon/jobs/hold.h"

namespace pinpoint::daemon {

namespace {

Status MustBePending(const JobRecord& job, const char* verb) {
  if (job.state == JobState::kPending) return Status::Ok();
  std::string id = std::to_string(job.id);
  if (job.state == JobState::kRunning)
    return FailedPrecondition("job " + id + " is running: only a pending job can be " + verb +
                              (std::string(verb) == "held" ? " (cancel it to stop it)" : ""));
  return FailedPrecondition("job " + id + " already ended (" + JobStateName(job.state) + ")");
}

}  // namespace

Result<Hold> DecideHold(const JobRecord& job, bool caller_is_root) {
  PP_RETURN_IF_ERROR(MustBePending(job, "held"));
  if (caller_is_root) return Hold::kRoot;
  return job.hold == Hold::kNone ? Hold::kUser : job.hold;
}

Result<Hold> DecideRelease(const JobRecord& job, bool caller_is_root) {
  PP_RETURN_IF_ERROR(MustBePending(job, "released"));
  if (job.hold == Hold::kRoot && !caller_is_root)
    return PermissionDenied("job " + std::to_string(job.id) +
                            " is held by root: only root can release it");
  return Hold::kNone;
}

}  // namespace pinpoint::daemon
