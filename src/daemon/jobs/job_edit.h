// What `pinpoint update` may change in a job (docs/cli.md "update", api.h JobEdit): pure, no store,
// no clock. The rules a submit applies to the changed request (time limits, priority, fits) are
// Admission's (admission.h, CheckEdit); these are update's own: which job, which field, when.
#pragma once

#include "common/job_record.h"
#include "pinpoint/api.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

// Whether `edit` would still change `job`, and may: a pending job not being cancelled whose fields
// differ, or (array_limit) any task not ended whose %K differs. What an update of a job array's
// id still has to reach (ArrayTasks::For).
bool EditChanges(const JobRecord& job, const JobEdit& edit);

// Applies `edit` to `job` as `root` (the caller is root) may: true when something changed, false
// when it already was so. A pending job takes every field; a running one its time limit (raised
// only by root) and a task's %K; a lease, running or starting, its time limit alone, as a running
// job. A changed pending job that is not held waits with no reason until the next pass says why.
// Errors (nothing changed): kFailedPrecondition (a lease and a field other than the time limit,
// ended, being cancelled, running and a field other than the time limit or %K),
// kPermissionDenied (a running job's or lease's time limit raised, or lifted, by a user),
// kInvalidArgument (array_limit for a job of no array).
Result<bool> ApplyEdit(JobRecord& job, const JobEdit& edit, bool root);

}  // namespace pinpoint::daemon
