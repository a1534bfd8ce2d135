// Holding pending jobs back from the scheduler (`pinpoint hold`, `release`, `submit --hold`):
// the decisions, as pure functions over a job and who asks. Node applies them (node_hold.cc).
//
// Policy (docs/cli.md "hold and release"): only a pending job can be held or released; its owner
// or root may hold it. A hold by its owner is a user hold, which the owner or root releases; a
// hold by root is an admin hold (Slurm's), which only root releases and which replaces a user
// hold. Holding a held job again, or releasing one that is not held, changes nothing and is Ok.
#pragma once

#include <string>

#include "common/job_record.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

// Whether the caller may act on the job at all is checked before (api::MayControlJob).
// The hold the job has after `hold` by a caller who is root or not. Errors: kFailedPrecondition
// for a job that is running or ended.
Result<Hold> DecideHold(const JobRecord& job, bool caller_is_root);
// The hold the job has after `release`. Errors: kFailedPrecondition for a job that is running
// or ended; kPermissionDenied for an admin hold and a caller who is not root.
Result<Hold> DecideRelease(const JobRecord& job, bool caller_is_root);

}  // namespace pinpoint::daemon
