// How many jobs the node and each user may hold (config max_jobs, max_jobs_per_user): the check a
// submit, an array and a lease pass before anything of them is stored.
#pragma once

#include <cstddef>
#include <map>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

// Whether `jobs` more jobs of `job`'s user fit beside those of `active` not yet ended: at most
// `node_max` in all and `user_max` of that user (0: no limit; the caller passes 0 for root).
// `active` may hold jobs that have ended (not yet reported); they do not count. The O(active)
// count is made only where a limit could be reached (active.size() + jobs above it).
// Errors: kUnavailable, one line naming the setting ("alice has 20000 jobs not yet ended and a
// user may have at most 20000 (max_jobs_per_user); 1 more must wait until some have ended").
Status CheckJobRoom(const std::map<JobId, JobRecord>& active, const JobRecord& job, size_t jobs,
                    size_t node_max, size_t user_max);

}  // namespace pinpoint::daemon
