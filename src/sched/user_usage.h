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
uint64_t GpuMemOf(const Demand& demand, const Inventory& inventory,
                  const std::vector<int>* devices);

class UserUsage {
 public:
  // Sums the snapshot's running jobs per uid. `snapshot` must outlive this object.
  explicit UserUsage(const Snapshot& snapshot);

  // Why `demand` may not start now: one sentence naming the limit ("its user runs 2 jobs, the
  // most user_limits allows (running_jobs 2)"), or nullopt when its user's limits allow it. With
  // `devices` null, before it is placed, the least it could hold counts (GpuMemOf). O(1) without
  // limits; else O(log users + gpus).
  std::optional<std::string> Exceeds(const Demand& demand, const std::vector<int>* devices) const;
  // `demand` starts on `devices`.
  void Add(const Demand& demand, const std::vector<int>& devices);

 private:
  struct Use {
    int64_t jobs = 0;
    uint64_t gpu_mem_bytes = 0;
  };
  uint64_t GpuMem(const Demand& demand, const std::vector<int>* devices) const;

  const Snapshot& snapshot_;
  bool any_limit_ = false;
  uint64_t smallest_whole_bytes_ = 0;  // the smallest whole GPU in service
  std::map<uint32_t, Use> use_;
};

}  // namespace pinpoint::sched
