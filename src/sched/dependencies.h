// Dependencies between jobs (submit --after, --afterok): pure. Decides, for the pending demands
// of one Schedule pass, which may be considered, which wait for a job to end, and which can never
// start because a job they need to complete did not.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pinpoint/job.h"
#include "sched/placement.h"

namespace pinpoint::sched {

// What one pending demand's dependencies allow in this pass.
struct DependencyVerdict {
  enum class Kind {
    kMet,      // every job in after has ended and every job in afterok has completed
    kWaiting,  // a job it depends on has not ended yet; detail names it
    kNever,    // a job in afterok ended without completing (or will never run); detail says which
  };
  Kind kind = Kind::kMet;
  std::string detail;  // "" for kMet
};

// The verdict of every demand in `pending` that has dependencies (Demand::after, afterok), by id.
// A dependency's state is, in this order: a pending demand's own verdict (kNever counts as an end
// that is not a completion, as the daemon cancels it in this pass; otherwise it has not ended);
// else `states` (pending and running: not ended; completed: completed; failed and cancelled: ended
// otherwise); else, absent from both, a job the store no longer has: retention purges only jobs
// that ended, so it has ended, and counts as completed (as Slurm counts a purged job).
// Demands are judged in ascending id order, so a chain of afterok dependencies on jobs that were
// submitted before their dependents (the daemon admits no other) is decided in one call.
// Cost: O(pending log pending + dependencies x log states).
std::map<JobId, DependencyVerdict> JudgeDependencies(const std::vector<Demand>& pending,
                                                     const std::map<JobId, JobState>& states);

}  // namespace pinpoint::sched
