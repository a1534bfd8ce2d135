#include "sched/device_scan.h"

#include <algorithm>

namespace pinpoint::sched {

namespace {

// Whole devices for a demand pinned to its devices: each either fits now or it does not.
DeviceScan ScanPinnedWhole(const NodeState& state, const Demand& demand, bool pick) {
  DeviceScan scan;
  for (int i : demand.devices) {
    switch (state.FitWhole(i)) {
      case DeviceFit::kFits:
        ++scan.fits;
        break;
      case DeviceFit::kReserved:
        ++scan.reserved;
        break;
      default:
        break;
    }
  }
  if (pick && scan.fits == demand.gpus) scan.chosen = demand.devices;
  return scan;
}

DeviceScan ScanWhole(const NodeState& state, const Demand& demand, bool pick) {
  DeviceScan scan;
  if (state.empty_whole_free() < demand.gpus || !pick) {
    // The running counts answer without looking at a device.
    scan.fits = state.empty_whole_free();
    scan.reserved = state.empty_whole_reserved();
    return scan;
  }
  const int count = static_cast<int>(state.devices().size());
  for (int i = 0; i < count && static_cast<int>(scan.chosen.size()) < demand.gpus; ++i) {
    if (state.FitWhole(i) == DeviceFit::kFits) {
      scan.chosen.push_back(i);
    }
  }
  scan.fits = static_cast<int>(scan.chosen.size());
  return scan;
}

// 0, 1, ..., count - 1, as a range for ScanSlices.
struct AllDevices {
  struct Iterator {
    int i;
    int operator*() const { return i; }
    Iterator& operator++() {
      ++i;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return i != other.i; }
  };
  int count;
  Iterator begin() const { return {0}; }
  Iterator end() const { return {count}; }
};

// The slice scan over `indices` (every device, or the demand's own): a template, so that the scan
// over every device stays the plain counted loop it is inlined as.
template <typename Indices>
DeviceScan ScanSlices(const NodeState& state, const Demand& demand, bool pick,
                      std::vector<SliceRank>* ranks, const Indices& indices,
                      SlicePlacement placement, bool keep_empty, bool no_empty) {
  DeviceScan scan;
  ranks->clear();
  for (int i : indices) {
    DeviceFit fit = state.FitSlice(i, demand);
    if (no_empty && fit != DeviceFit::kNoRoom) {
      const DeviceState& d = state.devices()[i];
      if (d.jobs == 0 && !d.partition.is_mig()) fit = DeviceFit::kNoRoom;
    }
    switch (fit) {
      case DeviceFit::kFits:
        ++scan.fits;
        if (!pick) {
          if (scan.fits >= demand.gpus) {
            return scan;
          }
        } else {
          const DeviceState& d = state.devices()[i];
          ranks->push_back(placement == SlicePlacement::kPack
                               ? RankSlice(d, i, demand.gpu_mem_bytes)
                               : RankSpread(d, i, demand.gpu_mem_bytes, keep_empty));
        }
        break;
      case DeviceFit::kReserved:
        ++scan.reserved;
        break;
      case DeviceFit::kOtherUid:
        if (scan.first_other_uid < 0) {
          scan.first_other_uid = i;
        }
        ++scan.other_uid;
        break;
      case DeviceFit::kNoRoom:
        break;
    }
  }
  if (pick && scan.fits >= demand.gpus) {
    std::partial_sort(ranks->begin(), ranks->begin() + demand.gpus, ranks->end());
    for (int k = 0; k < demand.gpus; ++k) {
      scan.chosen.push_back((*ranks)[k].index);
    }
  }
  return scan;
}

}  // namespace

DeviceScan ScanDevices(const NodeState& state, const Demand& demand, bool pick,
                       std::vector<SliceRank>* ranks, SlicePlacement placement, bool keep_empty,
                       bool no_empty) {
  const int count = static_cast<int>(state.devices().size());
  if (!demand.devices.empty()) {
    // A device the inventory no longer has (CheckFits refuses such a demand): nothing fits.
    for (int i : demand.devices) {
      if (i < 0 || i >= count) return DeviceScan{};
    }
    if (demand.gpu_mem_bytes == 0) return ScanPinnedWhole(state, demand, pick);
    return ScanSlices(state, demand, pick, ranks, demand.devices, placement, keep_empty, no_empty);
  }
  if (demand.gpu_mem_bytes == 0) {
    return ScanWhole(state, demand, pick);
  }
  return ScanSlices(state, demand, pick, ranks, AllDevices{count}, placement, keep_empty, no_empty);
}

}  // namespace pinpoint::sched
