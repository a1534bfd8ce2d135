// The sharing modes a pinpointd runs: one registration per mode (docs/design.md, "Adding a
// sharing mode"). Node asks the result for each device's rules and each allocation's backend.
#pragma once

#include <memory>

#include "sharing/backend.h"
#include "sharing/backends.h"

namespace pinpoint::daemon {

struct SharingSetup {
  // The MPS mode (mps/mps_backend.h: MpsDaemons, EnvOnlyMps; FakeMps in tests), with its rules;
  // not owned, it must outlive the result. Null: no MPS backend, so mps devices take whole-GPU
  // jobs only and say why (sharing::Backends::For).
  sharing::Backend* mps = nullptr;
};

std::unique_ptr<sharing::Backends> MakeBackends(const SharingSetup& setup);

}  // namespace pinpoint::daemon
