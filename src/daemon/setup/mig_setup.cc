#include "daemon/setup/mig_setup.h"

#include "common/log.h"
#include "daemon/mig/mig_slots.h"
#include "daemon/setup/inventory_builder.h"
#include "gpu/nvml_backend.h"

namespace pinpoint::daemon {

Result<std::map<int, std::vector<gpu::MigProfileInfo>>> MigDynamicProfiles(
    gpu::GpuBackend& backend, const std::vector<gpu::GpuInfo>& gpus, const Config& config) {
  std::map<int, std::vector<gpu::MigProfileInfo>> out;
  for (const gpu::GpuInfo& g : gpus) {
    if (!g.mig_enabled || !IsMigDynamicGpu(g, config)) continue;
    Result<std::vector<gpu::MigProfileInfo>> profiles = backend.MigProfiles(g.index);
    if (!profiles.ok())
      return Status(profiles.status().code(),
                    "GPU " + std::to_string(g.index) +
                        " (mig-dynamic): its MIG profiles: " + profiles.status().message());
    out[g.index] = std::move(profiles).value();
  }
  return out;
}

Result<int> ReplayMigChanges(gpu::GpuBackend& backend, const store::JobStore& store) {
  auto changes = store.RecentMigChanges(static_cast<int>(store::kMigChangesKept));
  if (!changes.ok()) return changes.status();
  int made = 0;
  for (const store::MigChange& c : *changes) {
    if (c.result != "ok") continue;
    Status s = Status::Ok();
    if (c.action == partition::MigAction::kCreate) {
      s = backend.CreateMigInstance(c.gpu, c.profile, c.start).status();
    } else {
      auto gpus = backend.Inventory();
      if (!gpus.ok()) return gpus.status();
      s = NotFound("no instance at memory slice " + std::to_string(c.start));
      for (const gpu::GpuInfo& g : *gpus) {
        if (g.index != c.gpu) continue;
        for (const gpu::MigInfo& m : g.migs)
          if (m.placement_start == c.start)
            s = backend.DestroyMigInstance(c.gpu, m.gpu_instance_id);
      }
    }
    if (s.ok()) {
      ++made;
    } else {
      log::Warn("MIG: GPU {}: the stored {} of {} at memory slice {} cannot be made again: {}",
                c.gpu, partition::MigActionName(c.action), c.profile, c.start, s.message());
    }
  }
  return made;
}

Result<MigSetup> StartMigDynamic(gpu::GpuBackend& backend, const std::vector<gpu::GpuInfo>& gpus,
                                 const std::map<int, std::vector<gpu::MigProfileInfo>>& profiles,
                                 const Config& config, store::JobStore* store,
                                 sched::Inventory& inventory, int64_t now_ms) {
  MigSetup setup;
  std::vector<MigDynamic::Gpu> dynamic;
  for (const gpu::GpuInfo& g : gpus) {
    auto listed = profiles.find(g.index);
    if (listed == profiles.end()) continue;
    dynamic.push_back({g.index, MigModelOf(g.name, listed->second)});
  }
  if (dynamic.empty()) return setup;
  // The reconfiguration thread's backend: NVML's own handle, or the simulated node itself.
  gpu::GpuBackend* worker = &backend;
  switch (backend.source()) {
    case gpu::GpuBackend::Source::kNvml: {
      Result<std::unique_ptr<gpu::GpuBackend>> own = gpu::NvmlBackend::Create();
      if (!own.ok()) return own.status();
      setup.backend = std::move(own).value();
      worker = setup.backend.get();
      break;
    }
    case gpu::GpuBackend::Source::kSimulated:
      break;
  }
  MigDynamic::Options options;
  options.plan.min_idle_ms = config.mig_min_idle_s * 1000;
  options.plan.min_lifetime_ms = config.mig_min_lifetime_s * 1000;
  options.drain_after_ms = config.mig_drain_after_s * 1000;
  options.mem_reserve.bytes = config.gpu_mem_reserve_bytes;
  setup.mig = std::make_unique<MigDynamic>(std::move(dynamic), worker, store, options);
  PP_RETURN_IF_ERROR(setup.mig->Resume(gpus, inventory, now_ms));
  for (const MigDynamic::Gpu& g : setup.mig->gpus())
    log::Info(
        "MIG: GPU {} is mig-dynamic: pinpoint makes and destroys its instances ({} profiles; an "
        "instance idle "
        "{} s and {} s old may go for a waiting slice)",
        g.index, g.model.profiles.size(), config.mig_min_idle_s, config.mig_min_lifetime_s);
  return setup;
}

}  // namespace pinpoint::daemon
