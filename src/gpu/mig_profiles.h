// MIG instance profiles of the A100 80GB, as its driver reports them: used to fill in simulated
// machines. Plain data, no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

// The MigInfo of one instance of `profile` ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
// "7g.80gb"): profile, mem_total_bytes and sm_count set, ids and uuid left empty. nullopt for any
// other profile.
std::optional<MigInfo> A100MigProfile(const std::string& profile);

// The names above, in that order.
std::vector<std::string> A100MigProfileNames();

// The A100 80GB's GPU instance profiles as NVML lists them (`nvidia-smi mig -lgipp`): ids, slices,
// how many fit and their possible placements on its 8 memory slices, in the order above.
std::vector<MigProfileInfo> A100MigProfileInfos();

}  // namespace pinpoint::gpu
