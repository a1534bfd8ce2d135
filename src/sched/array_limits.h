// Internal to sched/: the %K limit of job arrays (`submit --array 1-100%K`) within one pass.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "sched/placement.h"

namespace pinpoint::sched {

// Counts the running tasks of each job array, starting from the snapshot's running jobs and
// adding each task the pass starts. Cost: O(log arrays) per call.
class ArrayLimits {
 public:
  explicit ArrayLimits(const std::vector<RunningJob>& running);

  // The wait of `demand` when its array already runs `demand.array_limit` tasks: reason
  // "array-limit", detail "array 12 runs 2 tasks, its limit (%2)". nullopt when it may start
  // (no array, no limit, or fewer running).
  std::optional<Wait> Check(const Demand& demand) const;
  // How many more tasks of `demand`'s array may start now (its limit less those running);
  // INT_MAX for a demand of no array or no limit.
  int Room(const Demand& demand) const;
  // `demand` was started in this pass: one more task of its array runs.
  void Started(const Demand& demand);

 private:
  std::map<JobId, int> running_;  // array id -> tasks running
};

}  // namespace pinpoint::sched
