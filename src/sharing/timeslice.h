// The timeslice mode: several jobs at once, of any users, time-sliced by the driver. The
// scheduler keeps the sums of their memory and SM shares within the device; nothing enforces
// them on the device (docs/design.md, "Sharing modes").
#pragma once

#include "sharing/backend.h"

namespace pinpoint::sharing {

inline PlacementRules TimesliceRules() { return PlacementRules{}; }

class TimesliceBackend : public Backend {
 public:
  SharingMode mode() const override { return SharingMode::kTimeslice; }
  PlacementRules Rules() const override { return TimesliceRules(); }
  Result<std::map<std::string, std::string>> Prepare(const Slice&) override {
    return std::map<std::string, std::string>{};
  }
  void Adopt(const Slice&) override {}
  void Release(const Slice&) override {}
};

}  // namespace pinpoint::sharing
