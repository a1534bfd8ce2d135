// Internal to sched/: what each user's running jobs hold during one Schedule pass, against the
// snapshot's user limits (user_limits.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/inventory.h"
#include "sched/placement.h"

namespace pinpoint::sched {

// Device memory `demand` holds on `devices` (a slice its memory on each, a whole GPU its
// memory), saturating. With `devices` null, before it is placed: exact for slices and pinned
// demands, and for whole GPUs the least any choice could hold (its count of the smallest GPUs
// in service).
uint64_t GpuMemOf(const Demand& demand, const Inventory& inventory, const std::vector<int>* devices);

class UserUsage {
 public:
  // Sums the snapshot's running jobs per uid. `snapshot` must outlive this object.
  explicit UserUsage(const Snapshot& snapshot);

  // Why `demand` may not start now holding `gpu_mem_bytes` more: one sentence naming the limit
  // ("its user runs 2 jobs, the most user_limits allows (running_jobs)"), or nullopt when its
  // user's limits allow it. O(log users).
  std::optional<std::string> Exceeds(const Demand& demand, uint64_t gpu_mem_bytes) const;
  // A job of `uid` starts holding `gpu_mem_bytes`.
  void Add(uint32_t uid, uint64_t gpu_mem_bytes);

 private:
  struct Use {
    int64_t jobs = 0;
    uint64_t gpu_mem_bytes = 0;
  };
  const UserLimits& limits_;
  bool any_limit_ = false;
  std::map<uint32_t, Use> use_;
};

}  // namespace pinpoint::sched
