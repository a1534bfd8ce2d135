// How long a MIG drain has held for the slice it drains for (docs/scheduling.md "Dynamic MIG",
// mig_drain_after_s). The clock is the waiting slice's, not the drain's shape: the planner makes
// its plan again each pass and the drained placement may move (another placement, another GPU) as
// small jobs come and go; a clock that restarted at each move never reached the hold (a 3g.40gb
// slice waited over 180 s behind 1 s jobs, the drain moved 52 times). Pure: no clock of its own.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "pinpoint/job.h"

namespace pinpoint::daemon {

class DrainClock {
 public:
  // The pass at now_ms drains for `for_job` (0: nothing drains), the slices in `waiting` still
  // waiting. Returns since when a drain has held for `for_job` (now_ms the first time); the clocks
  // of slices no longer waiting are forgotten. Cost: O(waiting + jobs drained for before).
  int64_t Drains(JobId for_job, const std::vector<JobId>& waiting, int64_t now_ms);

 private:
  std::map<JobId, int64_t> since_ms_;  // slices drained for, still waiting: since when
};

}  // namespace pinpoint::daemon
