// Turns what the GPU backend reports and the configuration into the scheduler's inventory:
// every non-MIG GPU is one device; a MIG-enabled GPU contributes its MIG instances instead, and
// one in mig-dynamic mode its slots (daemon/mig/mig_slots.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/cpu_list.h"
#include "daemon/setup/config.h"
#include "gpu/gpu_backend.h"
#include "sched/inventory.h"

namespace pinpoint::daemon {

// A GPU in mig-dynamic mode gets one device per slot, shared as default_mode says;
// `mig_profiles` holds the MIG profiles its driver lists (GpuBackend::MigProfiles) by NVML index.
// Errors: kInvalidArgument when gpu_modes names a GPU that does not exist (a typo must not
// silently leave a GPU in the wrong mode), or gives kMigDynamicMode to a MIG instance, to a GPU
// whose MIG is disabled (pinpoint never turns it on), to one whose profiles are not in
// `mig_profiles` or one with an instance no slot takes (MigSlots): one line each, naming the GPU.
Result<sched::Inventory> BuildInventory(
    const std::vector<gpu::GpuInfo>& gpus, const Config& config,
    const std::map<int, std::vector<gpu::MigProfileInfo>>& mig_profiles = {});

// Whether gpu_modes gives `gpu` kMigDynamicMode (by its index or UUID).
bool IsMigDynamicGpu(const gpu::GpuInfo& gpu, const Config& config);

// Online CPUs and MemTotal of this host.
sched::HostResources DetectHost();
// The host memory the kernel has free now (/proc/meminfo MemAvailable); nullopt where unread.
std::optional<uint64_t> ReadMemAvailable();
// The CPUs jobs may get (config system_cpus): every online CPU but those, whatever pinpointd's
// own affinity (a site pins it to its system CPUs); without system_cpus, the CPUs pinpointd may
// use (ReadCpuTopology).
CpuTopology JobCpus(const Config& config);

}  // namespace pinpoint::daemon
