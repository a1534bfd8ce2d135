// Internal to SimulatedBackend (simulated_mig.cc): the MIG rules of its simulated GPUs.
#pragma once

#include <vector>

#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

// The GPU instance profiles `gpu` offers: an A100 80GB's (mig_profiles.h), none for another GPU.
std::vector<MigProfileInfo> SimulatedMigProfiles(const GpuInfo& gpu);

// Gives `gpu`'s MIG instances the placements a driver would have given that layout (their
// placement_start), larger profiles first; an instance no placement is left for keeps -1.
void PlaceMigs(GpuInfo& gpu);

}  // namespace pinpoint::gpu
