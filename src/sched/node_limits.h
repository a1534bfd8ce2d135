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
  Status CheckMigProfile(
      const Demand& demand) const;  // Demand::mig_profile, against Inventory::mig_profiles
  Status CheckHost(const Demand& demand) const;
  // "; 2 of its devices take no slices: <reason>" when devices whose rules take no slices were
  // left out of slice_mem_bytes_ and their rules say why; "" otherwise.
  std::string NoSlicesNote() const;

  std::vector<uint64_t> slice_mem_bytes_;  // ascending: devices in service that can take a slice
  int whole_devices_ = 0;                  // non-MIG devices in service
  int drained_devices_ = 0;
  uint64_t mig_max_bytes_ = 0;    // the largest instance a mig-dynamic GPU could make
  int without_slices_ = 0;        // devices in service left out: their rules take no slices
  std::string no_slices_reason_;  // the first one's PlacementRules::no_slices_reason
  HostResources host_;
  const Inventory& inventory_;  // for demands pinned to their devices
};

}  // namespace pinpoint::sched
