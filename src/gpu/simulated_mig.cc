// SimulatedBackend's MIG (simulated_backend.h): profiles, placements, making and destroying
// instances by the rules NVML enforces.
#include "gpu/simulated_mig.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>

#include "gpu/mig_profiles.h"
#include "gpu/simulated_backend.h"

namespace pinpoint::gpu {

namespace {

// The serial of a simulated instance's UUID: one counter for the process, started from the wall
// clock (ms, shifted past any count one start could reach), so no two instances share a UUID,
// in one run or across restarts.
uint64_t MigSerial() {
  static std::atomic<uint64_t> next{
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count())
      << 16};
  return next.fetch_add(1);
}

}  // namespace

namespace {

const MigProfileInfo* FindProfile(const std::vector<MigProfileInfo>& profiles,
                                  const std::string& name) {
  for (const MigProfileInfo& p : profiles)
    if (p.name == name) return &p;
  return nullptr;
}

// The memory slices `mig` covers, [start, start + size); empty when unknown.
std::pair<int, int> SlicesOf(const std::vector<MigProfileInfo>& profiles, const MigInfo& mig) {
  const MigProfileInfo* p = FindProfile(profiles, mig.profile);
  if (p == nullptr || p->placements.empty() || mig.placement_start < 0) return {0, 0};
  return {mig.placement_start, mig.placement_start + p->placements.front().size};
}

// The instance of `migs` (other than `skip`) that covers a slice of [begin, end), or null.
const MigInfo* Overlapping(const std::vector<MigProfileInfo>& profiles,
                           const std::vector<MigInfo>& migs, int begin, int end,
                           const MigInfo* skip = nullptr) {
  for (const MigInfo& m : migs) {
    if (&m == skip) continue;
    auto [b, e] = SlicesOf(profiles, m);
    if (b < end && begin < e) return &m;
  }
  return nullptr;
}

}  // namespace

std::vector<MigProfileInfo> SimulatedMigProfiles(const GpuInfo& gpu) {
  if (gpu.name.find("A100") == std::string::npos || gpu.mem_total_bytes < (uint64_t{70} << 30))
    return {};
  return A100MigProfileInfos();
}

void PlaceMigs(GpuInfo& gpu) {
  std::vector<MigProfileInfo> profiles = SimulatedMigProfiles(gpu);
  std::vector<MigInfo*> order;
  for (MigInfo& m : gpu.migs) order.push_back(&m);
  auto size = [&](const MigInfo* m) {
    const MigProfileInfo* p = FindProfile(profiles, m->profile);
    return p == nullptr || p->placements.empty() ? 0 : p->placements.front().size;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](MigInfo* a, MigInfo* b) { return size(a) > size(b); });
  // Depth first over each instance's placements: a few instances, a few placements each.
  std::function<bool(size_t)> place = [&](size_t i) {
    if (i == order.size()) return true;
    const MigProfileInfo* p = FindProfile(profiles, order[i]->profile);
    if (p == nullptr) return place(i + 1);
    for (const MigProfileInfo::Placement& at : p->placements) {
      order[i]->placement_start = -1;
      if (Overlapping(profiles, gpu.migs, at.start, at.start + at.size) != nullptr) continue;
      order[i]->placement_start = at.start;
      if (place(i + 1)) return true;
    }
    order[i]->placement_start = -1;
    return false;
  };
  if (!place(0))
    for (MigInfo& m : gpu.migs) m.placement_start = -1;
}

Result<std::vector<MigProfileInfo>> SimulatedBackend::MigProfiles(int index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (StateOf(index) == nullptr) return NotFound("no GPU " + std::to_string(index));
  return SimulatedMigProfiles(gpus_[static_cast<size_t>(index)]);
}

void SimulatedBackend::FailCreatesHalfWay(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_creates_ = count;
}

Result<MigInfo> SimulatedBackend::CreateMigInstance(int index, const std::string& profile,
                                                    int start) {
  std::lock_guard<std::mutex> lock(mu_);
  if (StateOf(index) == nullptr) return NotFound("no GPU " + std::to_string(index));
  GpuInfo& gpu = gpus_[static_cast<size_t>(index)];
  std::string where = "GPU " + std::to_string(index);
  if (!gpu.mig_enabled) return FailedPrecondition(where + ": MIG is disabled");
  std::vector<MigProfileInfo> profiles = SimulatedMigProfiles(gpu);
  const MigProfileInfo* p = FindProfile(profiles, profile);
  if (p == nullptr) return NotFound(where + " has no MIG profile '" + profile + "'");
  auto at = std::find_if(p->placements.begin(), p->placements.end(),
                         [&](const MigProfileInfo::Placement& pl) { return pl.start == start; });
  if (at == p->placements.end()) {
    std::string starts;
    for (const auto& pl : p->placements)
      starts += (starts.empty() ? "" : ", ") + std::to_string(pl.start);
    return FailedPrecondition(where + ": " + profile + " may start at memory slice " + starts +
                              ", not " + std::to_string(start));
  }
  int of_profile = static_cast<int>(std::count_if(
      gpu.migs.begin(), gpu.migs.end(), [&](const MigInfo& m) { return m.profile == profile; }));
  if (of_profile >= p->instance_count)
    return FailedPrecondition(where + " has " + std::to_string(of_profile) + " instances of " +
                              profile + " already, as many as fit");
  if (const MigInfo* other = Overlapping(profiles, gpu.migs, start, start + at->size))
    return FailedPrecondition(where + ": memory slices " + std::to_string(start) + "-" +
                              std::to_string(start + at->size - 1) + " are taken by GPU instance " +
                              std::to_string(other->gpu_instance_id));
  // The GPU instance first, then its compute instance: a failure there undoes the first.
  uint32_t id = 1;
  while (std::any_of(gpu.migs.begin(), gpu.migs.end(),
                     [&](const MigInfo& m) { return m.gpu_instance_id == id; }))
    ++id;
  MigInfo mig;
  mig.profile = profile;
  mig.gpu_instance_id = id;
  mig.compute_instance_id = 0;
  mig.mem_total_bytes = p->mem_bytes;
  mig.sm_count = p->sm_count;
  mig.placement_start = start;
  mig.uuid =
      fmt::format("MIG-{}-{:04x}-{:04x}-{:016x}", gpu.uuid.substr(4, 8), index, id, MigSerial());
  gpu.migs.push_back(mig);
  if (failing_creates_ > 0) {
    --failing_creates_;
    gpu.migs.pop_back();
    return Unavailable(where + ": creating the compute instance of GPU instance " +
                       std::to_string(id) + " failed (simulated); the GPU instance was destroyed");
  }
  return mig;
}

Status SimulatedBackend::DestroyMigInstance(int index, uint32_t gpu_instance_id) {
  std::lock_guard<std::mutex> lock(mu_);
  GpuState* state = StateOf(index);
  if (state == nullptr) return NotFound("no GPU " + std::to_string(index));
  GpuInfo& gpu = gpus_[static_cast<size_t>(index)];
  std::string which =
      "GPU " + std::to_string(index) + " instance " + std::to_string(gpu_instance_id);
  auto it = std::find_if(gpu.migs.begin(), gpu.migs.end(),
                         [&](const MigInfo& m) { return m.gpu_instance_id == gpu_instance_id; });
  if (it == gpu.migs.end()) return NotFound("no MIG " + which);
  for (const GpuProcess& proc : state->processes)
    if (proc.gpu_instance_id == gpu_instance_id)
      return FailedPrecondition("MIG " + which + " is in use by process " +
                                std::to_string(proc.pid) + ": not destroyed");
  gpu.migs.erase(it);
  return Status::Ok();
}

}  // namespace pinpoint::gpu
