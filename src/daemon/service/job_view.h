// What a client sees of a job: the daemon's record (JobRecord) as the public JobView of
// include/pinpoint/api.h that replies carry.
#pragma once

#include "api/caller.h"
#include "common/job_record.h"
#include "pinpoint/api.h"
#include "pinpoint/job.h"

namespace pinpoint::daemon {

// The view of `record` with its environment as `env_shown` says: kFull keeps it, kHidden and
// kOmitted leave request.env empty; with its enforcement list (daemon/jobs/enforcement.h) unless
// `enforcement` is false (a listing of many jobs that did not ask for it).
JobView ToView(const JobRecord& record, EnvShown env_shown, bool enforcement = true);

// The view `caller` may have (docs/api.md, "Who may do what"): the environment, which may hold
// secrets, for the job's owner and root; hidden for everyone else.
JobView ViewFor(const api::Caller& caller, const JobRecord& record);

}  // namespace pinpoint::daemon
