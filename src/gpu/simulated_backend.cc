#include "gpu/simulated_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "gpu/declared_usage.h"
#include "gpu/mig_profiles.h"
#include "gpu/simulated_mig.h"

namespace pinpoint::gpu {

namespace {

constexpr uint64_t kMiB = 1024ULL * 1024ULL;
// What an idle data-centre GPU draws; keeps a simulated node's power readings plausible.
constexpr uint32_t kIdlePowerMw = 60000;

GpuInfo Gpu(const char* name, uint64_t mem_mib, int sm_count) {
  GpuInfo gpu;
  gpu.name = name;
  gpu.mem_total_bytes = mem_mib * kMiB;
  gpu.sm_count = sm_count;
  return gpu;
}

std::vector<GpuInfo> Repeat(const GpuInfo& gpu, int count) {
  return std::vector<GpuInfo>(count, gpu);
}

void AddMigs(GpuInfo* gpu, const std::vector<std::string>& profiles) {
  gpu->mig_enabled = true;
  for (const std::string& profile : profiles) gpu->migs.push_back(*A100MigProfile(profile));
}

std::vector<GpuInfo> A100x8Mig() {
  std::vector<GpuInfo> gpus = Repeat(Gpu("NVIDIA A100-SXM4-80GB", 81920, 108), 8);
  AddMigs(&gpus[0], {"3g.40gb", "2g.20gb", "2g.20gb"});
  AddMigs(&gpus[1], std::vector<std::string>(7, "1g.10gb"));
  return gpus;
}

struct Preset {
  const char* name;
  std::vector<GpuInfo> (*gpus)();
};

const Preset kPresets[] = {
    {"h100x2", [] { return Repeat(Gpu("NVIDIA H100 80GB HBM3", 81559, 132), 2); }},
    {"a100x8", [] { return Repeat(Gpu("NVIDIA A100-SXM4-80GB", 81920, 108), 8); }},
    {"a100x8-mig", A100x8Mig},
    {"v100sx8", [] { return Repeat(Gpu("Tesla V100S-PCIE-32GB", 32768, 80), 8); }},
};

uint32_t Fnv1a(const std::string& text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) hash = (hash ^ c) * 16777619u;
  return hash;
}

// Gives every GPU its index and UUID, and every MIG instance its UUID and ids (GPU instances
// numbered from 1 on each GPU, compute instance 0), all derived from the node's name.
std::vector<GpuInfo> AssignIdentity(const std::string& node, std::vector<GpuInfo> gpus) {
  uint32_t hash = Fnv1a(node);
  for (size_t i = 0; i < gpus.size(); ++i) {
    GpuInfo& gpu = gpus[i];
    gpu.index = static_cast<int>(i);
    gpu.uuid = fmt::format("GPU-{:08x}-{:04x}-4000-8000-000000000000", hash, i);
    for (size_t j = 0; j < gpu.migs.size(); ++j) {
      MigInfo& mig = gpu.migs[j];
      mig.uuid = fmt::format("MIG-{:08x}-{:04x}-{:04x}-8000-000000000000", hash, i, j);
      mig.gpu_instance_id = static_cast<uint32_t>(j + 1);
      mig.compute_instance_id = 0;
    }
    PlaceMigs(gpu);
  }
  return gpus;
}

}  // namespace

SimulatedBackend::SimulatedBackend(std::string name, std::vector<GpuInfo> gpus)
    : name_(std::move(name)), gpus_(AssignIdentity(name_, std::move(gpus))), state_(gpus_.size()) {
  for (GpuState& s : state_) s.power_mw = kIdlePowerMw;
}

Result<std::unique_ptr<SimulatedBackend>> SimulatedBackend::FromPreset(const std::string& preset) {
  for (const Preset& p : kPresets) {
    if (preset == p.name) {
      return std::unique_ptr<SimulatedBackend>(new SimulatedBackend(p.name, p.gpus()));
    }
  }
  return InvalidArgument("unknown simulated node '" + preset + "' (known: " + PresetList() + ")");
}

std::vector<std::string> SimulatedBackend::PresetNames() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

std::string SimulatedBackend::PresetList() {
  std::string list;
  for (const Preset& p : kPresets) list += (list.empty() ? "" : ", ") + std::string(p.name);
  return list;
}

std::string SimulatedBackend::Kind() const { return "simulated:" + name_; }

Result<std::vector<GpuInfo>> SimulatedBackend::Inventory() {
  std::lock_guard<std::mutex> lock(mu_);
  ++inventory_calls_;
  return gpus_;
}

Result<GpuSample> SimulatedBackend::Sample(int index) {
  GpuSample sample;
  std::string uuid, node;
  uint64_t mem_total = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++sample_calls_;
    GpuState* state = StateOf(index);
    if (state == nullptr) {
      return NotFound("no GPU " + std::to_string(index) + " (this node has " +
                      std::to_string(gpus_.size()) + ")");
    }
    if (state->lost)
      return Unavailable("GPU " + std::to_string(index) + ": device lost (simulated)");
    state->energy_mj += state->energy_per_sample_mj;
    sample.index = index;
    mem_total = gpus_[index].mem_total_bytes;
    for (const GpuProcess& p : state->processes) sample.mem_used_bytes += p.used_bytes;
    sample.mem_used_bytes = std::min(sample.mem_used_bytes, mem_total);
    sample.power_mw = state->power_mw;
    sample.energy_mj = state->energy_mj;
    sample.utilization_pct = state->utilization_pct;
    sample.processes = state->processes;
    if (!declared_from_proc_) return sample;
    uuid = gpus_[index].uuid;
    node = declared_node_;
  }
  // The node's processes are looked at without holding mu_: a node of many processes makes this
  // take milliseconds, and the daemon's loop asks the backend other things meanwhile.
  for (const GpuProcess& p : declared_.For(uuid, node)) {
    sample.mem_used_bytes = std::min(sample.mem_used_bytes + p.used_bytes, mem_total);
    sample.processes.push_back(p);
  }
  return sample;
}

SimulatedBackend::GpuState* SimulatedBackend::StateOf(int index) {
  if (index < 0 || static_cast<size_t>(index) >= state_.size()) return nullptr;
  return &state_[index];
}

template <typename Fn>
Status SimulatedBackend::WithState(int index, Fn fn) {
  std::lock_guard<std::mutex> lock(mu_);
  GpuState* state = StateOf(index);
  if (state == nullptr) return NotFound("no GPU " + std::to_string(index));
  return fn(*state);
}

Status SimulatedBackend::SetProcesses(int index, std::vector<GpuProcess> processes) {
  for (const GpuProcess& p : processes) {
    if (p.pid <= 0) return InvalidArgument("process pid must be positive");
  }
  return WithState(index, [&](GpuState& s) {
    s.processes = std::move(processes);
    return Status::Ok();
  });
}

Status SimulatedBackend::AddEnergy(int index, uint64_t energy_mj) {
  return WithState(index, [&](GpuState& s) {
    s.energy_mj += energy_mj;
    return Status::Ok();
  });
}

Status SimulatedBackend::SetEnergyPerSample(int index, uint64_t energy_mj) {
  return WithState(index, [&](GpuState& s) {
    s.energy_per_sample_mj = energy_mj;
    return Status::Ok();
  });
}

Status SimulatedBackend::SetPower(int index, uint32_t power_mw) {
  return WithState(index, [&](GpuState& s) {
    s.power_mw = power_mw;
    return Status::Ok();
  });
}

Status SimulatedBackend::SetUtilization(int index, int utilization_pct) {
  if (utilization_pct < -1 || utilization_pct > 100) {
    return InvalidArgument("utilization must be -1 or 0..100, not " +
                           std::to_string(utilization_pct));
  }
  return WithState(index, [&](GpuState& s) {
    s.utilization_pct = utilization_pct;
    return Status::Ok();
  });
}

Status SimulatedBackend::SetLost(int index, bool lost) {
  return WithState(index, [&](GpuState& s) {
    s.lost = lost;
    return Status::Ok();
  });
}

void SimulatedBackend::SetDeclaredUsageFromProc(bool on, std::string node) {
  std::lock_guard<std::mutex> lock(mu_);
  declared_from_proc_ = on;
  declared_node_ = std::move(node);
}

int SimulatedBackend::sample_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sample_calls_;
}

int SimulatedBackend::inventory_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return inventory_calls_;
}

Result<std::vector<XidEvent>> SimulatedBackend::TakeXidEvents() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<XidEvent> out;
  out.swap(xids_);
  return out;
}

Status SimulatedBackend::InjectXid(int index, uint64_t xid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (StateOf(index) == nullptr) return NotFound("no GPU " + std::to_string(index));
  xids_.push_back({index, xid});
  return Status::Ok();
}

}  // namespace pinpoint::gpu
