// The daemon's start for GPUs in mig-dynamic mode (mig_dynamic.h): their profiles, the backend
// the reconfiguration thread uses, and the MigDynamic that resumes their layout.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "daemon/mig/mig_dynamic.h"
#include "daemon/setup/config.h"
#include "gpu/gpu_backend.h"
#include "sched/inventory.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

// The MIG profiles of each GPU gpu_modes gives mig-dynamic and whose MIG is enabled, by NVML
// index (BuildInventory refuses the others with its own line). Errors: the backend's, naming the
// GPU.
Result<std::map<int, std::vector<gpu::MigProfileInfo>>> MigDynamicProfiles(
    gpu::GpuBackend& backend, const std::vector<gpu::GpuInfo>& gpus, const Config& config);

struct MigSetup {
  std::unique_ptr<gpu::GpuBackend> backend;  // the thread's own NVML, when the node's is NVML
  std::unique_ptr<MigDynamic> mig;           // null when no GPU is in mig-dynamic mode
};
// Starts MigDynamic over `inventory` (BuildInventory's) when a GPU is in mig-dynamic mode: with a
// second NvmlBackend for its thread (the watcher's thread has `backend`), or `backend` itself when
// it is a simulated one (safe across threads). Errors: kFailedPrecondition for another backend;
// NvmlBackend::Create's; Resume's.
Result<MigSetup> StartMigDynamic(gpu::GpuBackend& backend, const std::vector<gpu::GpuInfo>& gpus,
                                 const std::map<int, std::vector<gpu::MigProfileInfo>>& profiles,
                                 const Config& config, store::JobStore* store,
                                 sched::Inventory& inventory, int64_t now_ms);

// A simulated node keeps no MIG layout of its own across a restart (each start builds its preset):
// the layout changes the store holds (mig_changes, the newest kMigChangesKept) are made again on
// `backend`, oldest first, so the node comes back as it was. Only changes that succeeded are made;
// a destroy finds its instance by its GPU and memory slice. Returns how many were made again (one
// that fails now is logged and skipped). Errors: the store's.
Result<int> ReplayMigChanges(gpu::GpuBackend& backend, const store::JobStore& store);

}  // namespace pinpoint::daemon
