// Internal to sched/: one pass over all devices for one demand, which both picks the devices to
// start on and counts what is needed to explain a wait.
#pragma once

#include <vector>

#include "sched/node_state.h"
#include "sched/placement.h"

namespace pinpoint::sched {

struct DeviceScan {
  int fits = 0;              // devices that take it now
  int reserved = 0;          // devices that would, but are held for the reservation
  int other_uid = 0;         // devices that would, but serve another uid's MPS clients
  int first_other_uid = -1;  // lowest index among those
  std::vector<int> chosen;   // when fits >= demand.gpus: the distinct devices to start on
};

// Tests the devices against `demand` (gpus > 0). When `pick`, `chosen` names the devices to
// start on: for whole GPUs the lowest-index empty devices, for slices the first `gpus` devices in
// SliceRank order (RankSlice's for kPack, else RankSpread's, keeping empty GPUs last when
// `keep_empty`). Without `pick` (the caller only needs to know whether the devices suffice)
// `chosen` stays empty. Whenever fits >= gpus the counts may be partial: the scan stops as soon
// as the answer is known. `ranks` is scratch storage reused between calls.
// With `no_empty`, an empty whole GPU (no job, not MIG) does not take the slice (kAuto: it is
// kept for another user's slices).
DeviceScan ScanDevices(const NodeState& state, const Demand& demand, bool pick,
                       std::vector<SliceRank>* ranks,
                       SlicePlacement placement = SlicePlacement::kPack, bool keep_empty = false,
                       bool no_empty = false);

}  // namespace pinpoint::sched
