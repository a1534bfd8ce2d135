// Internal to sched/: what is free on the node during one Schedule pass. Running jobs and jobs
// placed earlier in the same pass are kept as per-device and host sums, so asking whether a
// demand fits one device costs O(1) whatever the number of jobs on it.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/inventory.h"
#include "sched/placement.h"

namespace pinpoint::sched {

// What is left of `capacity` after `used`, 0 when overcommitted.
inline uint64_t FreeOf(uint64_t capacity, uint64_t used) {
  return used >= capacity ? 0 : capacity - used;
}

// One device: its fixed properties from the inventory and the sums of what jobs hold on it.
struct DeviceState {
  uint64_t mem_bytes = 0;
  // The device's sharing::PlacementRules (whole_device, one_user, max_jobs: -1 none, 0 no slices).
  bool whole_device = false;
  bool one_user = true;
  int max_jobs = -1;
  bool drained = false;
  int busy_pct = -1;                    // Device::busy_pct
  partition::Partition partition = {};  // Device::partition

  uint64_t used_mem_bytes = 0;  // sum of slice memory (whole-device slots add nothing here)
  int used_share_pct = 0;
  int jobs = 0;           // slots held, one per job on this device
  uint32_t uid = 0;       // uid of the first job that took it; meaningful when jobs > 0
  bool full = false;      // holds a whole-device slot, or any job on a whole_device device
  bool reserved = false;  // held for the reservation: takes no later job
};

// What one slot holds on a device, for estimating what must drain before a job fits.
struct SlotUse {
  uint64_t mem_bytes = 0;  // the device's memory for a whole-device slot
  int share_pct = 0;
};

// How a device relates to one demand right now.
//   kFits      takes it now
//   kReserved  would take it, but is held for the reservation
//   kOtherUid  would take it, but its MPS server belongs to another uid (and it is not held)
//   kNoRoom    anything else: drained, too small, full, client limit, share, MIG for whole
enum class DeviceFit { kFits, kReserved, kOtherUid, kNoRoom };

// How the host relates to one demand right now.
//   kFits      enough CPUs and memory beyond what running, placed and held-back jobs use
//   kReserved  would fit, but not without what is held back for the reservation
//   kShort     does not fit even counting held-back resources as free
enum class HostFit { kFits, kReserved, kShort };

// The order among devices that can take a slice now; smaller is better.
// Best fit (RankSlice, for packing): devices that already hold jobs come first, the one left with
// the least free memory first; then empty MIG instances, smallest (tightest) first; then empty
// whole GPUs, smallest first, shareable before exclusive (a slice on an exclusive device wastes
// the rest of it). Ties go to the lower index. The spread fields are 0.
// Least loaded (RankSpread): with `keep_empty`, empty whole GPUs last (kAuto while waiting jobs
// need them); shareable before exclusive; then the least SM share reserved by the slices there,
// the fewest jobs, the least busy (Device::busy_pct), the most memory left.
struct SliceRank {
  int not_mig_slot = 0;  // the slots of mig-dynamic GPUs come first, best fit (RankMigSlot)
  int spread_empty_last = 0;
  int spread_exclusive = 0;
  int spread_share_pct = 0;
  int spread_jobs = 0;
  int spread_busy_pct = 0;
  int group = 0;
  uint64_t bytes = 0;
  int exclusive = 0;
  int index = 0;
  auto operator<=>(const SliceRank&) const = default;  // NOLINT(modernize-use-nullptr)
};
// A slot of a mig-dynamic GPU, under any slice_placement: before every other device, the one
// with the least memory left first (docs/scheduling.md "Dynamic MIG": an instance is sized for
// its slices, and a small slice on a large instance would make the planner reshape the GPU).
SliceRank RankMigSlot(const DeviceState& device, int index, uint64_t slice_mem_bytes);
SliceRank RankSlice(const DeviceState& device, int index, uint64_t slice_mem_bytes);
SliceRank RankSpread(const DeviceState& device, int index, uint64_t slice_mem_bytes,
                     bool keep_empty);

class NodeState {
 public:
  // Sums the running jobs of `snapshot`. Slots naming a device index outside the inventory are
  // ignored. Sums may exceed capacity (e.g. after the inventory shrank); nothing then fits there.
  explicit NodeState(const Snapshot& snapshot);

  const std::vector<DeviceState>& devices() const { return devices_; }
  const std::vector<SlotUse>& uses(int device) const { return uses_[device]; }

  // Fit of one slice of `demand` (gpu_mem_bytes > 0) on device `i`.
  DeviceFit FitSlice(int i, const Demand& demand) const;
  // Fit of one whole device on device `i`: empty, not MIG, not drained.
  DeviceFit FitWhole(int i) const;
  // Devices that FitWhole reports as kFits / kReserved, kept as running counts.
  int empty_whole_free() const { return empty_whole_free_; }
  int empty_whole_reserved() const { return empty_whole_reserved_; }
  // Whether a slice of `demand` fits on device `i` once every job there has gone.
  bool SliceFitsEmpty(int i, const Demand& demand) const;

  HostFit FitHost(const Demand& demand) const;
  // Free host CPUs and memory beyond running and placed jobs and, when `after_held`, beyond what
  // is held back for the reservation. CPUs may be negative when overcommitted; memory is then 0.
  int64_t FreeCpus(bool after_held) const;
  uint64_t FreeMemBytes(bool after_held) const;

  // Records `demand` as started on `slots` (host resources too).
  void Place(const Demand& demand, const std::vector<Slot>& slots);
  // Marks devices as held and holds back host resources for the reservation.
  void Reserve(const std::vector<int>& devices, int cpus, uint64_t mem_bytes);

 private:
  void AddSlot(uint32_t uid, const Slot& slot);

  std::vector<DeviceState> devices_;
  std::vector<std::vector<SlotUse>> uses_;
  int64_t host_cpus_ = 0;
  uint64_t host_mem_bytes_ = 0;
  int64_t used_cpus_ = 0;
  uint64_t used_mem_bytes_ = 0;
  int64_t held_cpus_ = 0;
  uint64_t held_mem_bytes_ = 0;
  int empty_whole_free_ = 0;
  int empty_whole_reserved_ = 0;
};

// Inline: called once per device per pending job, the innermost loop of a pass.
inline DeviceFit NodeState::FitSlice(int i, const Demand& demand) const {
  const DeviceState& d = devices_[i];
  if (d.drained || d.full || (demand.isolated && d.jobs > 0)) {
    return DeviceFit::kNoRoom;
  }
  if (!d.partition.Offers(demand.mig_profile)) {
    return DeviceFit::kNoRoom;  // --mig: an instance of that profile only
  }
  if (demand.gpu_mem_bytes > FreeOf(d.mem_bytes, d.used_mem_bytes)) {
    return DeviceFit::kNoRoom;
  }
  if (demand.gpu_share_pct > 100 - d.used_share_pct) {
    return DeviceFit::kNoRoom;
  }
  bool other_uid = false;
  if (d.max_jobs >= 0 && d.jobs >= d.max_jobs) {
    return DeviceFit::kNoRoom;
  }
  if (d.one_user) {
    other_uid = d.jobs > 0 && d.uid != demand.uid;
  }
  if (other_uid) {
    return d.reserved ? DeviceFit::kNoRoom : DeviceFit::kOtherUid;
  }
  return d.reserved ? DeviceFit::kReserved : DeviceFit::kFits;
}

inline DeviceFit NodeState::FitWhole(int i) const {
  const DeviceState& d = devices_[i];
  if (d.drained || d.partition.is_mig() || d.jobs > 0) {
    return DeviceFit::kNoRoom;
  }
  return d.reserved ? DeviceFit::kReserved : DeviceFit::kFits;
}

}  // namespace pinpoint::sched
