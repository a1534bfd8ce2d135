// Internal to sched/: which devices the first blocked job of a pass holds while they drain.
#pragma once

#include <optional>
#include <vector>

#include "sched/node_state.h"
#include "sched/placement.h"

namespace pinpoint::sched {

// Chooses the devices `demand` would take once enough jobs have left them, given `state`
// (running jobs plus those placed earlier in the pass; no reservation yet).
//  - Whole GPUs: the N non-MIG devices in service that are cheapest to drain: fewest jobs, then
//    least device memory held, then lowest index. Empty ones cost nothing and come first.
//  - Slices: among devices in service large enough for the slice, the N needing least to drain.
//    A device of another uid's MPS server, a full device and an exclusive one must drain entirely;
//    elsewhere the estimate drains the largest slices first until memory, share and client
//    limit allow the slice. Devices of the job's own uid (or no uid) come before devices of
//    another uid's MPS server; devices that take the slice now come first, in best-fit order.
// Returns one distinct device index per requested GPU (empty for gpus == 0), or nullopt when
// fewer than N devices could ever take it (CheckFits would have refused it).
std::optional<std::vector<int>> ChooseReservedDevices(const Demand& demand, const NodeState& state);

}  // namespace pinpoint::sched
