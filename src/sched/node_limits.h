// Internal to sched/: the node's fixed limits, summarised once per inventory so that CheckFits
// costs O(log devices) per demand inside a Schedule pass.
#pragma once

#include <cstdint>
#include <vector>

#include "pinpoint/status.h"
#include "sched/inventory.h"
#include "sched/placement.h"

namespace pinpoint::sched {

class NodeLimits {
 public:
  // `inventory` must outlive this object (demands pinned to devices are checked against it).
  explicit NodeLimits(const Inventory& inventory);

  // Same contract as CheckFits (placement.h).
  Status Check(const Demand& demand) const;

 private:
  Status CheckDevices(const Demand& demand) const;
  Status CheckPinned(const Demand& demand) const;
  Status CheckHost(const Demand& demand) const;
  // "; its 2 MPS devices take no slices: <reason>" when kMps devices were left out of
  // slice_mem_bytes_ and the inventory says why; "" otherwise.
  std::string NoMpsSlicesNote() const;

  std::vector<uint64_t> slice_mem_bytes_;  // ascending: devices in service that can take a slice
  int whole_devices_ = 0;                  // non-MIG devices in service
  int drained_devices_ = 0;
  int mps_without_slices_ = 0;             // kMps devices in service left out: no MPS clients
  HostResources host_;
  const Inventory& inventory_;  // for demands pinned to their devices
};

}  // namespace pinpoint::sched
