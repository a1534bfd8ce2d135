#include "sched/device_scan.h"

#include <algorithm>

namespace pinpoint::sched {

namespace {

bool Allowed(const Demand& demand, int index) {
  return demand.devices.empty() ||
         std::find(demand.devices.begin(), demand.devices.end(), index) != demand.devices.end();
}

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

DeviceScan ScanSlices(const NodeState& state, const Demand& demand, bool pick,
                      std::vector<SliceRank>* ranks) {
  DeviceScan scan;
  const int count = static_cast<int>(state.devices().size());
  ranks->clear();
  for (int i = 0; i < count; ++i) {
    if (!Allowed(demand, i)) continue;
    switch (state.FitSlice(i, demand)) {
      case DeviceFit::kFits:
        ++scan.fits;
        if (!pick) {
          if (scan.fits >= demand.gpus) {
            return scan;
          }
        } else {
          ranks->push_back(RankSlice(state.devices()[i], i, demand.gpu_mem_bytes));
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
                       std::vector<SliceRank>* ranks) {
  if (demand.gpu_mem_bytes == 0) {
    if (!demand.devices.empty()) return ScanPinnedWhole(state, demand, pick);
    return ScanWhole(state, demand, pick);
  }
  return ScanSlices(state, demand, pick, ranks);
}

}  // namespace pinpoint::sched
