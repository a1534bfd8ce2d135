// Job arrays (`submit --array`, docs/api.md "submit"): the pure parts. Node stores and runs the
// tasks (node_submit.cc); the scheduler applies their %K limit (sched/array_limits.h).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/job_record.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

// The most bytes the records of one array may hold in all: its request's JSON times its tasks
// (a waiting array is one record, but each task gets its own once it starts, and the ended ones
// stay in the store until purged). 10000 tasks of a 6 KiB environment fit.
inline constexpr size_t kMaxArrayBytes = 64 << 20;

// Whether an array of `spec` over `request` may be stored on a node that takes at most
// `max_tasks` in one array. Errors: kInvalidArgument, one line naming the bound
// ("... at most 500 tasks in one array (max_array_tasks)", "... 80MiB ... at most 64MiB ...").
Status CheckArraySize(const ArraySpec& spec, const JobRequest& request, int max_tasks);

// Whether `first`, a stored job, is the first task of an array of `spec` (the check of a retried
// submit: the key's job must be this very array).
bool IsFirstTaskOf(const JobRecord& first, const ArraySpec& spec);

// The job's environment as an array task sees it: PINPOINT_ARRAY_JOB_ID, PINPOINT_ARRAY_TASK_ID,
// PINPOINT_ARRAY_TASK_COUNT, PINPOINT_ARRAY_TASK_MIN and PINPOINT_ARRAY_TASK_MAX set for a task;
// for any job, those names that came with the submitted environment (a job submitted from inside
// a task inherits them) are removed first, so a job never sees another array's values.
void SetArrayEnvironment(const ArrayTask& array, std::map<std::string, std::string>& env);

}  // namespace pinpoint::daemon
