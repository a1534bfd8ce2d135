#include "sched/node_state.h"

namespace pinpoint::sched {

namespace {

bool WholeCapable(const DeviceState& d) { return !d.drained && !d.partition.is_mig(); }

bool HostFitsWith(const Demand& demand, int64_t free_cpus, uint64_t free_mem_bytes) {
  int64_t cpus = demand.cpus > 0 ? demand.cpus : 0;
  return cpus <= free_cpus && demand.mem_bytes <= free_mem_bytes;
}

}  // namespace

SliceRank RankMigSlot(const DeviceState& device, int index, uint64_t slice_mem_bytes) {
  SliceRank rank;
  rank.index = index;
  rank.bytes = FreeOf(device.mem_bytes, device.used_mem_bytes + slice_mem_bytes);
  return rank;
}

SliceRank RankSlice(const DeviceState& device, int index, uint64_t slice_mem_bytes) {
  if (device.partition.is_slot()) return RankMigSlot(device, index, slice_mem_bytes);
  SliceRank rank;
  rank.not_mig_slot = 1;
  rank.index = index;
  rank.exclusive = device.whole_device ? 1 : 0;
  if (device.jobs > 0) {
    rank.group = 0;
    rank.bytes = FreeOf(device.mem_bytes, device.used_mem_bytes + slice_mem_bytes);
  } else {
    rank.group = device.partition.is_mig() ? 1 : 2;
    rank.bytes = device.mem_bytes;
  }
  return rank;
}

SliceRank RankSpread(const DeviceState& device, int index, uint64_t slice_mem_bytes,
                     bool keep_empty) {
  if (device.partition.is_slot()) return RankMigSlot(device, index, slice_mem_bytes);
  SliceRank rank;
  rank.not_mig_slot = 1;
  rank.index = index;
  rank.spread_empty_last = keep_empty && device.jobs == 0 && !device.partition.is_mig() ? 1 : 0;
  rank.spread_exclusive = device.whole_device ? 1 : 0;
  rank.spread_share_pct = device.used_share_pct;
  rank.spread_jobs = device.jobs;
  rank.spread_busy_pct = device.busy_pct > 0 ? device.busy_pct : 0;
  rank.bytes =
      ~FreeOf(device.mem_bytes, device.used_mem_bytes + slice_mem_bytes);  // most left first
  return rank;
}

NodeState::NodeState(const Snapshot& snapshot)
    : host_cpus_(snapshot.inventory.host.cpus), host_mem_bytes_(snapshot.inventory.host.mem_bytes) {
  const auto& inventory_devices = snapshot.inventory.devices;
  devices_.resize(inventory_devices.size());
  uses_.resize(inventory_devices.size());
  for (size_t i = 0; i < inventory_devices.size(); ++i) {
    const Device& d = inventory_devices[i];
    devices_[i].mem_bytes = d.mem_bytes;
    devices_[i].whole_device = d.rules.whole_device;
    devices_[i].one_user = d.rules.one_user;
    devices_[i].max_jobs = d.rules.max_jobs;
    devices_[i].partition = d.partition;
    // A vacant MIG slot takes nothing until its instance is made.
    devices_[i].drained = d.drained || !d.partition.usable();
    devices_[i].busy_pct = d.busy_pct;
  }
  for (const DeviceState& d : devices_) {
    empty_whole_free_ += WholeCapable(d) ? 1 : 0;
  }
  for (const RunningJob& job : snapshot.running) {
    used_cpus_ += job.cpus > 0 ? job.cpus : 0;
    used_mem_bytes_ += job.mem_bytes;
    for (const Slot& slot : job.slots) {
      AddSlot(job.uid, slot);
    }
  }
}

void NodeState::AddSlot(uint32_t uid, const Slot& slot) {
  if (slot.device_index < 0 || static_cast<size_t>(slot.device_index) >= devices_.size()) {
    return;
  }
  DeviceState& d = devices_[slot.device_index];
  if (d.jobs == 0) {
    d.uid = uid;
    if (WholeCapable(d)) {
      --(d.reserved ? empty_whole_reserved_ : empty_whole_free_);
    }
  }
  ++d.jobs;
  if (slot.gpu_mem_bytes == 0) {
    d.full = true;
  } else {
    d.used_mem_bytes += slot.gpu_mem_bytes;
    d.used_share_pct += slot.gpu_share_pct > 0 ? slot.gpu_share_pct : 0;
  }
  if (d.whole_device || slot.isolated) {
    d.full = true;
  }
  uint64_t held_bytes = slot.gpu_mem_bytes == 0 ? d.mem_bytes : slot.gpu_mem_bytes;
  uses_[slot.device_index].push_back({held_bytes, slot.gpu_share_pct});
}

bool NodeState::SliceFitsEmpty(int i, const Demand& demand) const {
  const DeviceState& d = devices_[i];
  if (d.drained || demand.gpu_mem_bytes > d.mem_bytes || demand.gpu_share_pct > 100) {
    return false;
  }
  if (!d.partition.Offers(demand.mig_profile)) return false;
  return d.max_jobs != 0;
}

int64_t NodeState::FreeCpus(bool after_held) const {
  return host_cpus_ - used_cpus_ - (after_held ? held_cpus_ : 0);
}

uint64_t NodeState::FreeMemBytes(bool after_held) const {
  uint64_t free = FreeOf(host_mem_bytes_, used_mem_bytes_);
  return after_held ? FreeOf(free, held_mem_bytes_) : free;
}

HostFit NodeState::FitHost(const Demand& demand) const {
  if (HostFitsWith(demand, FreeCpus(true), FreeMemBytes(true))) {
    return HostFit::kFits;
  }
  if (HostFitsWith(demand, FreeCpus(false), FreeMemBytes(false))) {
    return HostFit::kReserved;
  }
  return HostFit::kShort;
}

void NodeState::Place(const Demand& demand, const std::vector<Slot>& slots) {
  used_cpus_ += demand.cpus > 0 ? demand.cpus : 0;
  used_mem_bytes_ += demand.mem_bytes;
  for (const Slot& slot : slots) {
    AddSlot(demand.uid, slot);
  }
}

void NodeState::Reserve(const std::vector<int>& devices, int cpus, uint64_t mem_bytes) {
  for (int i : devices) {
    DeviceState& d = devices_[i];
    if (d.reserved) {
      continue;
    }
    d.reserved = true;
    if (WholeCapable(d) && d.jobs == 0) {
      --empty_whole_free_;
      ++empty_whole_reserved_;
    }
  }
  held_cpus_ += cpus > 0 ? cpus : 0;
  held_mem_bytes_ += mem_bytes;
}

}  // namespace pinpoint::sched
