// Turns what the GPU backend reports and the configuration into the scheduler's inventory:
// every non-MIG GPU is one device; a MIG-enabled GPU contributes its MIG instances instead.
#pragma once

#include <vector>

#include "daemon/config.h"
#include "gpu/gpu_backend.h"
#include "sched/inventory.h"

namespace pinpoint::daemon {

// Errors: kInvalidArgument when gpu_modes names a GPU that does not exist (a typo must not
// silently leave a GPU in the wrong mode), or gives kMigDynamicMode to a MIG instance, to a GPU
// whose MIG is disabled (pinpoint never turns it on) or, in this release, to any GPU (making and
// destroying instances is not built yet, issue 26): one line each, naming the GPU.
Result<sched::Inventory> BuildInventory(const std::vector<gpu::GpuInfo>& gpus, const Config& config);

// Online CPUs and MemTotal of this host.
sched::HostResources DetectHost();

}  // namespace pinpoint::daemon
