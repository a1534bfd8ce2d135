#include "daemon/mig/mig_slots.h"

#include <algorithm>
#include <set>

namespace pinpoint::daemon {

sched::mig::Model MigModelOf(const std::string& gpu_name,
                             const std::vector<gpu::MigProfileInfo>& profiles) {
  sched::mig::Model model;
  model.name = gpu_name;
  model.memory_slices = 0;
  for (const gpu::MigProfileInfo& p : profiles) {
    if (p.placements.empty() || p.name.find('+') != std::string::npos) continue;
    sched::mig::Profile profile;
    profile.name = p.name;
    profile.compute_slices = p.compute_slices;
    profile.mem_bytes = p.mem_bytes;
    profile.size = p.placements.front().size;
    for (const auto& at : p.placements) {
      profile.starts.push_back(at.start);
      model.memory_slices = std::max(model.memory_slices, at.start + at.size);
    }
    std::sort(profile.starts.begin(), profile.starts.end());
    model.profiles.push_back(std::move(profile));
  }
  return model;
}

Result<std::vector<sched::Device>> MigSlots(const gpu::GpuInfo& gpu, const sched::mig::Model& model,
                                            SharingMode mode, partition::MemoryReserve reserve) {
  std::set<int> starts;
  for (const sched::mig::Profile& p : model.profiles)
    starts.insert(p.starts.begin(), p.starts.end());
  for (const gpu::MigInfo& m : gpu.migs) {
    if (!starts.count(m.placement_start))
      return InvalidArgument(
          "GPU " + std::to_string(gpu.index) + " (" + gpu.name + "): MIG instance " + m.uuid +
          (m.placement_start < 0 ? " has no placement NVML reports"
                                 : " starts at memory slice " + std::to_string(m.placement_start) +
                                       ", where no profile pinpoint plans with starts") +
          ": mig-dynamic cannot tell which slot it fills (destroy it, or give the GPU another "
          "mode)");
  }
  std::vector<sched::Device> slots;
  for (int start : starts) {
    sched::Device d;
    d.gpu_index = gpu.index;
    d.partition = partition::Partition::Slot(start, "");
    d.mode = mode;
    d.numa_node = gpu.numa_node;
    auto m = std::find_if(gpu.migs.begin(), gpu.migs.end(),
                          [&](const gpu::MigInfo& i) { return i.placement_start == start; });
    if (m != gpu.migs.end()) {
      d.uuid = m->uuid;
      // An instance whose profile NVML does not name still fills its slot.
      d.partition.profile = m->profile;
      d.partition.vacant = false;
      d.name = gpu.name + " MIG " + (m->profile.empty() ? "instance" : m->profile);
      d.mem_bytes = reserve.Offered(m->mem_total_bytes);
      d.sm_count = m->sm_count;
    } else {
      d.name = gpu.name + " MIG slot " + std::to_string(start) + " (vacant)";
      for (const sched::mig::Profile& p :
           model.profiles)  // the largest instance that could start here
        if (std::count(p.starts.begin(), p.starts.end(), start))
          d.mem_bytes = std::max(d.mem_bytes, reserve.Offered(p.mem_bytes));
    }
    slots.push_back(std::move(d));
  }
  return slots;
}

Status RefillMigSlots(sched::Inventory& inventory, const gpu::GpuInfo& gpu,
                      const sched::mig::Model& model, partition::MemoryReserve reserve) {
  // The slots keep the sharing mode they were built with; only what the GPU holds is new.
  SharingMode mode = SharingMode::kMps;
  for (const sched::Device& d : inventory.devices)
    if (d.gpu_index == gpu.index && d.partition.is_slot()) mode = d.mode;
  Result<std::vector<sched::Device>> slots = MigSlots(gpu, model, mode, reserve);
  if (!slots.ok()) return slots.status();
  for (sched::Device& d : inventory.devices) {
    if (d.gpu_index != gpu.index || !d.partition.is_slot()) continue;
    for (const sched::Device& now : *slots) {
      if (now.partition.start != d.partition.start) continue;
      d.uuid = now.uuid;
      d.name = now.name;
      d.mem_bytes = now.mem_bytes;
      d.sm_count = now.sm_count;
      d.partition = now.partition;
    }
  }
  return Status::Ok();
}

}  // namespace pinpoint::daemon
