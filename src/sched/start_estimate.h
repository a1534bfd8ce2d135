// When pending jobs would start (`pinpoint queue --start`, Slurm's squeue --start): pure. Plays
// the node forward with the scheduler's own policy (Schedule): running jobs end at their time
// limits, each started job runs for its own, and at each end the pass is made again. An estimate,
// not a promise: jobs end early, new ones come, and a job without a time limit ends no one knows
// when.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/placement.h"

namespace pinpoint::sched {

struct StartEstimate {
  JobId id = 0;
  std::optional<int64_t>
      start_ms;  // when it would start (now_ms: at the next pass); nullopt: unknown
  // Why there is none: "held", "waits for a job without a time limit to end", "beyond the
  // estimate's horizon", "does not start even once the running jobs end" (a user limit, say);
  // empty with a start.
  std::string why;
};

// For every demand of `snapshot.pending` (in the snapshot's order): its start, from `now_ms`.
// `ends_ms`: when each running job ends (its time limit; absent: unknown, it never ends here).
// `runs_ms`: how long each pending job runs once started (its time limit; absent: unknown). A
// demand's dependencies are met once no job they name (nor a task of an array they name) is among
// the running or pending ones; snapshot.dependencies is not read. At most `max_passes` passes
// are played (each costs one Schedule): demands not started by then are beyond the horizon.
// Cost: O(max_passes x Schedule).
std::vector<StartEstimate> EstimateStarts(Snapshot snapshot,
                                          const std::map<JobId, int64_t>& ends_ms,
                                          const std::map<JobId, int64_t>& runs_ms, int64_t now_ms,
                                          int max_passes);

}  // namespace pinpoint::sched
