#include "gpu/mig_report.h"

#include <fmt/format.h>

namespace pinpoint::gpu {

Result<std::string> MigReport(GpuBackend& backend) {
  auto gpus = backend.Inventory();
  if (!gpus.ok()) return gpus.status();
  std::string out;
  for (const GpuInfo& g : *gpus) {
    out +=
        fmt::format("GPU {} {}: MIG {}\n", g.index, g.name, g.mig_enabled ? "enabled" : "disabled");
    auto profiles = backend.MigProfiles(g.index);
    if (!profiles.ok()) {
      out += "  profiles: " + profiles.status().message() + "\n";
      continue;
    }
    if (profiles->empty()) out += "  no GPU instance profiles (no MIG on this GPU)\n";
    for (const MigProfileInfo& p : *profiles) {
      std::string placements;
      for (const auto& pl : p.placements)
        placements += fmt::format("{}{}:{}", placements.empty() ? "" : " ", pl.start, pl.size);
      out += fmt::format("  {:<16} id {:>2}  {}g  {:>6} MiB  {:>3} SMs  x{}  placements {}\n",
                         p.name, p.profile_id, p.compute_slices, p.mem_bytes >> 20, p.sm_count,
                         p.instance_count, placements.empty() ? "none" : placements);
    }
  }
  return out;
}

}  // namespace pinpoint::gpu
