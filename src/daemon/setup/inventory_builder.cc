#include "daemon/setup/inventory_builder.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "common/cpu_list.h"
#include "daemon/mig/mig_slots.h"

namespace pinpoint::daemon {

CpuTopology JobCpus(const Config& config) {
  if (config.system_cpus.empty()) return ReadCpuTopology();
  return WithoutCpus(ReadCpuTopology("/sys", /*within_affinity=*/false), config.system_cpus);
}

sched::HostResources DetectHost() {
  sched::HostResources host;
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  host.cpus = cpus > 0 ? static_cast<int>(cpus) : 1;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") {
      host.mem_bytes = kib * 1024;
      break;
    }
  }
  return host;
}

std::optional<uint64_t> ReadMemAvailable() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

namespace {

bool IsMigDynamic(const Config& config, const std::vector<std::string>& keys) {
  for (const auto& k : keys) {
    auto it = config.gpu_modes.find(k);
    if (it != config.gpu_modes.end()) return it->second.mig_dynamic;
  }
  return false;
}

// The slots of a GPU configured mig-dynamic; refused with one line when pinpoint cannot serve it.
Result<std::vector<sched::Device>> MigDynamicSlots(
    const gpu::GpuInfo& g, const Config& config,
    const std::map<int, std::vector<gpu::MigProfileInfo>>& profiles) {
  std::string index_key = std::to_string(g.index);
  std::string gpu = "GPU " + index_key + " (" + g.name + ")";
  if (!g.mig_enabled)
    return InvalidArgument(
        "config: gpu_modes gives " + gpu + " " + kMigDynamicMode + ", but MIG is disabled on it: " +
        "pinpoint never turns MIG on (that needs a GPU reset); an administrator enables it " +
        "(nvidia-smi -i " + index_key + " -mig 1) or the GPU gets another mode");
  auto listed = profiles.find(g.index);
  sched::mig::Model model = MigModelOf(
      g.name, listed != profiles.end() ? listed->second : std::vector<gpu::MigProfileInfo>{});
  if (model.profiles.empty())
    return InvalidArgument("config: gpu_modes gives " + gpu + " " + kMigDynamicMode +
                           ", but its driver lists no MIG profile pinpoint could make");
  Result<std::vector<sched::Device>> slots =
      MigSlots(g, model, *SharingModeFromName(config.default_mode),
               partition::MemoryReserve{config.gpu_mem_reserve_bytes});
  if (!slots.ok())
    return InvalidArgument("config: gpu_modes gives " + gpu + " " + kMigDynamicMode + ": " +
                           slots.status().message());
  return slots;
}

}  // namespace

bool IsMigDynamicGpu(const gpu::GpuInfo& gpu, const Config& config) {
  return IsMigDynamic(config, {gpu.uuid, std::to_string(gpu.index)});
}

Result<sched::Inventory> BuildInventory(
    const std::vector<gpu::GpuInfo>& gpus, const Config& config,
    const std::map<int, std::vector<gpu::MigProfileInfo>>& mig_profiles) {
  std::set<std::string> known;
  sched::Inventory inv;
  auto mode_for = [&](const std::vector<std::string>& keys) {
    for (const auto& k : keys) {
      auto it = config.gpu_modes.find(k);
      if (it != config.gpu_modes.end()) return it->second.sharing;
    }
    return *SharingModeFromName(config.default_mode);
  };
  partition::MemoryReserve reserve{config.gpu_mem_reserve_bytes};
  for (const auto& g : gpus) {
    std::string index_key = std::to_string(g.index);
    known.insert(index_key);
    known.insert(g.uuid);
    for (const auto& m : g.migs) {
      known.insert(m.uuid);
      if (IsMigDynamic(config, {m.uuid}))
        return InvalidArgument("config: gpu_modes gives MIG instance " + m.uuid + " " +
                               kMigDynamicMode + ", a mode of a whole GPU (name GPU " + index_key +
                               " instead)");
    }
    if (IsMigDynamicGpu(g, config)) {
      Result<std::vector<sched::Device>> slots = MigDynamicSlots(g, config, mig_profiles);
      if (!slots.ok()) return slots.status();
      for (sched::Device& d : *slots) {
        d.index = static_cast<int>(inv.devices.size());
        inv.devices.push_back(std::move(d));
      }
      for (const sched::mig::Profile& p : MigModelOf(g.name, mig_profiles.at(g.index)).profiles)
        inv.mig_profiles.Add(p.name, reserve.Offered(p.mem_bytes));
      continue;
    }
    if (g.mig_enabled) {
      for (const auto& m : g.migs) {
        sched::Device d;
        d.index = static_cast<int>(inv.devices.size());
        d.uuid = m.uuid;
        d.name = g.name + " MIG " + (m.profile.empty() ? "instance" : m.profile);
        d.partition = partition::Partition::Instance(m.profile);
        d.gpu_index = g.index;
        d.mem_bytes = reserve.Offered(m.mem_total_bytes);
        d.sm_count = m.sm_count;
        d.mode = mode_for({m.uuid, g.uuid, index_key});
        d.numa_node = g.numa_node;
        inv.devices.push_back(d);
        inv.mig_profiles.Add(m.profile, d.mem_bytes);
      }
      continue;
    }
    sched::Device d;
    d.index = static_cast<int>(inv.devices.size());
    d.uuid = g.uuid;
    d.name = g.name;
    d.gpu_index = g.index;
    d.mem_bytes = reserve.Offered(g.mem_total_bytes);
    d.sm_count = g.sm_count;
    d.mode = mode_for({g.uuid, index_key});
    d.numa_node = g.numa_node;
    inv.devices.push_back(d);
  }
  for (const auto& [key, mode] : config.gpu_modes) {
    if (!known.count(key))
      return InvalidArgument("config: gpu_modes names '" + key + "', which is no GPU of this node");
  }
  inv.slice_placement =
      sched::SlicePlacementFromName(config.slice_placement).value_or(sched::SlicePlacement::kAuto);
  inv.mps_affinity_ms = config.mps_affinity_ms;
  if (config.keep_empty_gpus == Config::kKeepEmptyAuto) {
    int whole = 0;
    for (const auto& d : inv.devices) whole += d.partition.is_mig() ? 0 : 1;
    inv.keep_empty_gpus = whole / 8;
  } else {
    inv.keep_empty_gpus = static_cast<int>(config.keep_empty_gpus);
  }
  inv.host = DetectHost();
  if (!config.system_cpus.empty())
    inv.host.cpus = std::max(1, static_cast<int>(JobCpus(config).cpus.size()));
  if (config.host_cpus > 0) inv.host.cpus = config.host_cpus;
  if (config.host_mem_bytes > 0) inv.host.mem_bytes = config.host_mem_bytes;
  return inv;
}

}  // namespace pinpoint::daemon
