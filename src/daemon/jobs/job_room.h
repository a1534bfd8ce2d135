// How many jobs the node and each user may hold (config max_jobs, max_jobs_per_user): the check a
// submit, an array and a lease pass before anything of them is stored.
#pragma once

#include <cstddef>
#include <map>

#include "common/job_record.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

// Whether `jobs` more jobs of `job`'s user fit beside those of `active` not yet ended: at most
// `node_cap` in all, of which users other than root fill CapFor(node_cap, false)
// (common/root_reserve.h), and `user_max` of that user (0: no limit; the caller passes 0 for root).
// `active` may hold jobs that have ended (not yet reported); they do not count. A job array's
// rest counts each task it stands for (array_rest.h); `active_tasks` is their count over
// `active`, ended ones included. The O(active) count is made only where a limit could be reached
// (active_tasks + jobs above it).
// Errors: kUnavailable, one line naming the setting ("alice has 20000 jobs not yet ended and a
// user may have at most 20000 (max_jobs_per_user); 1 more must wait until some have ended").
Status CheckJobRoom(const std::map<JobId, JobRecord>& active, size_t active_tasks,
                    const JobRecord& job, size_t jobs, size_t node_cap, size_t user_max, bool root);

// About the bytes of a job's stored record: its request's text (RequestBytes) and a kilobyte for
// the rest. What a rewrite of the record costs (pinpoint/rewrite_budget.h).
inline uint64_t RecordBytes(const JobRecord& job) { return RequestBytes(job.request) + 1024; }

// The bytes of the requests of the jobs a node holds (RequestBytes), by uid: kept as jobs enter
// and leave the node's active jobs, so that a submit's check costs a lookup, not a pass over all
// jobs. A job array's rest counts its request once per task it stands for (`tasks`, TasksIn):
// each task becomes a record of that size when it is taken out, so an array of 200 tasks holds
// what 200 jobs hold, as its submit was checked. Not thread-safe.
class HeldBytes {
 public:
  void Add(const JobRecord& job, size_t tasks = 1);
  void Remove(const JobRecord& job, size_t tasks = 1);
  uint64_t Of(uint32_t uid) const;

 private:
  std::map<uint32_t, uint64_t> by_uid_;
};

// Budgets in bytes (config max_request_bytes, max_user_request_bytes; 0: none): whether `jobs`
// more jobs of `job`'s request fit. One request takes at most request_max bytes (else
// kInvalidArgument: it never fits; one line naming the setting and the bytes); one user's jobs not
// yet ended take at most user_max together, `held` of them already (else kUnavailable; the caller
// passes user_max 0 for root).
Status CheckRequestBytes(const JobRecord& job, size_t jobs, uint64_t held, uint64_t request_max,
                         uint64_t user_max);

}  // namespace pinpoint::daemon
