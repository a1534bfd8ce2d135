// `pinpointd --mig-profiles`: what the driver says about MIG on each GPU, read-only (issue 26:
// the facts dynamic MIG will plan with, proven on a GPU whose MIG layout must not change).
#pragma once

#include <string>

#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

// One block per GPU: "GPU <i> <name>: MIG enabled|disabled", then one line per GPU instance
// profile: its name, NVML profile id, compute slices, memory, SMs, how many fit, and its
// placements as start:size. A GPU whose profiles cannot be read gets one line saying why.
// Errors: the backend's Inventory errors.
Result<std::string> MigReport(GpuBackend& backend);

}  // namespace pinpoint::gpu
