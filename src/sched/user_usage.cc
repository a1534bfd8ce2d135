#include "sched/user_usage.h"

#include <limits>

#include "pinpoint/units.h"

namespace pinpoint::sched {

namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

uint64_t SaturatingTimes(uint64_t a, int n) {
  uint64_t out = 0;
  if (n <= 0) return 0;
  if (__builtin_mul_overflow(a, static_cast<uint64_t>(n), &out))
    return std::numeric_limits<uint64_t>::max();
  return out;
}

bool HasCap(const UserLimit& l) { return l.running_jobs || l.gpu_mem_bytes; }

uint64_t DeviceMem(const Inventory& inventory, int index) {
  if (index < 0 || index >= static_cast<int>(inventory.devices.size())) return 0;
  return inventory.devices[static_cast<size_t>(index)].mem_bytes;
}

// The smallest whole GPU in service, 0 when there is none.
uint64_t SmallestWholeGpu(const Inventory& inventory) {
  uint64_t smallest = 0;
  for (const Device& d : inventory.devices) {
    if (d.partition.is_mig() || d.drained) continue;
    if (smallest == 0 || d.mem_bytes < smallest) smallest = d.mem_bytes;
  }
  return smallest;
}

uint64_t GpuMemOn(const Demand& demand, const Inventory& inventory, const std::vector<int>* devices,
                  uint64_t smallest_whole_bytes) {
  if (demand.gpus <= 0) return 0;
  if (demand.gpu_mem_bytes > 0) return SaturatingTimes(demand.gpu_mem_bytes, demand.gpus);
  if (devices == nullptr && !demand.devices.empty()) devices = &demand.devices;
  if (devices == nullptr) return SaturatingTimes(smallest_whole_bytes, demand.gpus);
  uint64_t sum = 0;
  for (int i : *devices) sum = SaturatingAdd(sum, DeviceMem(inventory, i));
  return sum;
}

}  // namespace

uint64_t GpuMemOf(const Demand& demand, const Inventory& inventory,
                  const std::vector<int>* devices) {
  return GpuMemOn(demand, inventory, devices, devices == nullptr ? SmallestWholeGpu(inventory) : 0);
}

UserUsage::UserUsage(const Snapshot& snapshot) : snapshot_(snapshot) {
  const UserLimits& limits = snapshot.user_limits;
  any_limit_ = HasCap(limits.defaults);
  for (const auto& [uid, limit] : limits.by_uid) any_limit_ = any_limit_ || HasCap(limit);
  if (!any_limit_) return;
  smallest_whole_bytes_ = SmallestWholeGpu(snapshot.inventory);
  for (const RunningJob& job : snapshot.running) {
    Use& use = use_[job.uid];
    ++use.jobs;
    for (const Slot& slot : job.slots) {
      uint64_t mem = slot.gpu_mem_bytes > 0 ? slot.gpu_mem_bytes
                                            : DeviceMem(snapshot.inventory, slot.device_index);
      use.gpu_mem_bytes = SaturatingAdd(use.gpu_mem_bytes, mem);
    }
  }
}

uint64_t UserUsage::GpuMem(const Demand& demand, const std::vector<int>* devices) const {
  return GpuMemOn(demand, snapshot_.inventory, devices, smallest_whole_bytes_);
}

std::optional<std::string> UserUsage::Exceeds(const Demand& demand,
                                              const std::vector<int>* devices) const {
  if (!any_limit_) return std::nullopt;
  const UserLimit& limit = snapshot_.user_limits.For(demand.uid);
  auto it = use_.find(demand.uid);
  Use use = it == use_.end() ? Use{} : it->second;
  if (limit.running_jobs && use.jobs + 1 > *limit.running_jobs) {
    return "its user runs " + std::to_string(use.jobs) + (use.jobs == 1 ? " job" : " jobs") +
           ", the most user_limits allows (running_jobs " + std::to_string(*limit.running_jobs) +
           ")";
  }
  uint64_t more = limit.gpu_mem_bytes ? GpuMem(demand, devices) : 0;
  if (limit.gpu_mem_bytes && SaturatingAdd(use.gpu_mem_bytes, more) > *limit.gpu_mem_bytes) {
    return "its user's jobs hold " + FormatSize(use.gpu_mem_bytes) + " of device memory; " +
           FormatSize(more) + " more would pass the " + FormatSize(*limit.gpu_mem_bytes) +
           " user_limits allows (gpu_mem)";
  }
  return std::nullopt;
}

void UserUsage::Add(const Demand& demand, const std::vector<int>& devices) {
  if (!any_limit_) return;
  Use& use = use_[demand.uid];
  ++use.jobs;
  use.gpu_mem_bytes = SaturatingAdd(use.gpu_mem_bytes, GpuMem(demand, &devices));
}

Status CheckUserLimit(const Demand& demand, const UserLimit& limit, const Inventory& inventory) {
  if (!limit.gpu_mem_bytes) return Status::Ok();
  uint64_t need = GpuMemOf(demand, inventory, nullptr);
  if (need <= *limit.gpu_mem_bytes) return Status::Ok();
  return FailedPrecondition(
      "needs " + FormatSize(need) + " of device memory in all, more than the " +
      FormatSize(*limit.gpu_mem_bytes) + " its user may hold at once (user_limits gpu_mem)");
}

}  // namespace pinpoint::sched
