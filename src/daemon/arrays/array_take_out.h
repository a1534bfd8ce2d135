// Tasks taken out of their job array's rest (array_rest.h) to be records of their own, under
// their reserved ids: when a scheduling pass starts them, or when a request names them alone.
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstdint>
#include <vector>

#include "api/caller.h"
#include "daemon/jobs/job_table.h"
#include "pinpoint/status.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

// Takes each task `ids` names out of the rest in `jobs` that stands for it, all in one `store`
// transaction (none when it fails: a task stored beside a rest that still holds it would run
// twice). With `caller`, only from rests it may control; with `rests_whole`, a rest's own id is
// left as the rest. Ids that are no such task are left alone. One Status per id: ok, kIo
// (nothing was taken out), NotReached() past `max_rewrite_bytes` (0: none).
std::vector<Status> TakeOutTasks(JobTable& jobs, store::JobStore& store,
                                 const std::vector<JobId>& ids, const api::Caller* caller,
                                 uint64_t max_rewrite_bytes, bool rests_whole);

}  // namespace pinpoint::daemon
