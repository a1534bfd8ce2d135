#include "watch/watched_job.h"

#include <algorithm>
#include <map>

namespace pinpoint::watch {

namespace {

// SMs of each physical GPU: a whole-GPU device's own count, or the sum over its MIG instances.
std::map<int, int> GpuSmCounts(const sched::Inventory& inventory) {
  std::map<int, int> whole, mig;
  for (const auto& d : inventory.devices)
    (d.partition.is_mig() ? mig : whole)[d.gpu_index] += d.sm_count;
  for (const auto& [gpu, sms] : mig) whole.try_emplace(gpu, sms);
  return whole;
}

}  // namespace

WatchedJob WatchedJobOf(const JobRecord& job, const sched::Inventory& inventory,
                        const std::string& cgroup_path) {
  WatchedJob w;
  w.id = job.id;
  w.uid = job.uid;
  w.session_id = job.pid;
  w.cgroup_path = cgroup_path;
  w.lease_cgroup = job.lease_cgroup;
  w.prior = job.usage;
  w.suspended = job.suspend.phase == SuspendPhase::kSuspended;
  std::map<int, int> gpu_sms = GpuSmCounts(inventory);
  // A slice's memory has a budget where its hold says something short of the device holds it
  // (the driver's limit, the watcher's); one held by the device itself cannot be exceeded.
  bool budgeted = false;
  for (const AppliedLimit& limit : job.readback.limits) {
    if (limit.resource == "gpu_mem" && limit.strength != LimitStrength::kHardware) budgeted = true;
    if (!limit.variable.empty() &&
        std::find(w.env_vars.begin(), w.env_vars.end(), limit.variable) == w.env_vars.end())
      w.env_vars.push_back(limit.variable);
  }
  for (const Allocation& a : job.allocations) {
    if (a.device_index < 0 || static_cast<size_t>(a.device_index) >= inventory.devices.size())
      continue;
    const sched::Device& d = inventory.devices[static_cast<size_t>(a.device_index)];
    double fraction = 1.0;
    if (d.partition.is_mig() && d.sm_count > 0 && gpu_sms[d.gpu_index] > 0)
      fraction = static_cast<double>(d.sm_count) / gpu_sms[d.gpu_index];
    bool whole = a.gpu_mem_bytes == 0 || !budgeted;
    auto slot = std::find_if(w.slots.begin(), w.slots.end(),
                             [&](const WatchedSlot& s) { return s.gpu_index == d.gpu_index; });
    if (slot == w.slots.end()) {
      w.slots.push_back({d.gpu_index, 0, 0, 0.0, true});
      slot = w.slots.end() - 1;
    }
    // A device held entirely has no budget of its own: it cannot be exceeded.
    if (!whole) slot->budget_bytes += a.gpu_mem_bytes;
    slot->whole = slot->whole && whole;
    slot->share_pct += whole ? 0 : a.gpu_share_pct;
    slot->device_fraction += fraction;
  }
  for (auto& s : w.slots) {
    s.device_fraction = std::min(1.0, s.device_fraction);
    if (!s.whole && s.budget_bytes == 0) s.whole = true;
  }
  return w;
}

std::vector<int> PhysicalGpus(const sched::Inventory& inventory) {
  std::vector<int> out;
  for (const auto& d : inventory.devices) out.push_back(d.gpu_index);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace pinpoint::watch
