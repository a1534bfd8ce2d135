// Internal to sched/: the one-sentence details of Wait, for people.
#pragma once

#include <string>
#include <vector>

#include "sched/device_scan.h"
#include "sched/inventory.h"
#include "sched/node_state.h"
#include "sched/placement.h"

namespace pinpoint::sched {

// "GPU 3" for a whole GPU, "MIG device 5 on GPU 1" for a MIG instance (pinpoint device indices,
// NVML index of the parent GPU).
std::string DeviceLabel(const Inventory& inventory, int index);
// "GPU 0, GPU 1"
std::string DeviceLabels(const Inventory& inventory, const std::vector<int>& indices);

// Why the devices do not suffice, from a scan where fits + reserved < gpus:
// "needs 2 empty GPUs, 1 free" or "needs 10GiB of device memory and 30% SM share on each of
// 2 devices, 1 can take it now".
std::string DeviceShortage(const Demand& demand, const DeviceScan& scan);

// "GPU 0 MPS server belongs to uid 1001"
std::string OtherUidDetail(const Inventory& inventory, const NodeState& state, int index);

// Why the host does not suffice, counting held-back resources as free:
// "needs 8 CPUs, 4 free" or "needs 16GiB of host memory, 8GiB free".
std::string HostShortage(const Demand& demand, const NodeState& state);

}  // namespace pinpoint::sched
