// The sharing modes a pinpointd runs: one registration per mode (docs/design.md, "Adding a
// sharing mode"). Node asks the result for each device's rules and each allocation's backend.
#pragma once

#include <memory>

#include "mps/mps_backend.h"
#include "mps/mps_control.h"
#include "sharing/backends.h"
#include "sharing/placement_rules.h"

namespace pinpoint::daemon {

struct SharingSetup {
  // The MPS control daemons (not owned); null: no MPS backend, so mps devices take whole-GPU
  // jobs only and say why (sharing::Backends::For).
  mps::MpsControl* mps = nullptr;
  sharing::PlacementRules mps_rules = mps::MpsRules();  // daemon: MpsRulesOf(config, plan)
};

std::unique_ptr<sharing::Backends> MakeBackends(const SharingSetup& setup);

}  // namespace pinpoint::daemon
