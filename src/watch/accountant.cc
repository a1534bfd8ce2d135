#include "watch/accountant.h"

#include <algorithm>
#include <cmath>

namespace pinpoint::watch {

double EnergyWeight(const WatchedSlot& slot, int jobs_on_gpu) {
  double base = 100.0;
  if (!slot.whole) base = slot.share_pct > 0 ? slot.share_pct : 100.0 / std::max(1, jobs_on_gpu);
  return base * slot.device_fraction;
}

namespace {

const WatchedSlot* SlotOn(const WatchedJob& job, int gpu_index) {
  for (const auto& s : job.slots)
    if (s.gpu_index == gpu_index) return &s;
  return nullptr;
}

}  // namespace

PollResult Accountant::Update(int64_t now_ms, const std::vector<WatchedJob>& jobs,
                              const std::vector<GpuReading>& readings,
                              const std::map<int64_t, JobId>& owner_of_pid) {
  PollResult result;
  std::map<JobId, const WatchedJob*> by_id;
  for (const auto& j : jobs) by_id[j.id] = &j;

  // Device memory: each job's processes summed per GPU.
  std::map<JobId, std::map<int, uint64_t>> mem;
  std::map<JobId, std::map<int, int>> procs;
  for (const auto& r : readings) {
    if (!r.ok) continue;
    uint64_t unowned = 0;
    for (const auto& p : r.sample.processes) {
      auto owner = owner_of_pid.find(p.pid);
      if (owner == owner_of_pid.end() || !by_id.count(owner->second)) {
        unowned += p.used_bytes;
        continue;
      }
      mem[owner->second][r.gpu_index] += p.used_bytes;
      procs[owner->second][r.gpu_index] += 1;
    }
    gpus_[r.gpu_index].unowned_bytes = unowned;
  }

  for (const auto& j : jobs) {
    auto [it, first] = jobs_.try_emplace(j.id);
    JobAccount& acc = it->second;
    if (first) {
      acc.usage = j.prior;
      acc.usage.final = false;
      acc.energy_mj = static_cast<double>(j.prior.energy_mj);
    }
    acc.usage.samples += 1;
    uint64_t now_total_peak = 0;
    acc.mem_by_gpu.clear();
    for (const auto& slot : j.slots) {
      bool read = std::any_of(readings.begin(), readings.end(), [&](const GpuReading& r) {
        return r.ok && r.gpu_index == slot.gpu_index;
      });
      if (!read) continue;
      uint64_t used = mem[j.id][slot.gpu_index];
      acc.mem_by_gpu[slot.gpu_index] = used;
      now_total_peak = std::max(now_total_peak, used);
      if (slot.budget_bytes == 0 && !j.suspended) continue;
      // A suspended job's budget is nothing: its GPUs are others'.
      double limit = j.suspended ? 0.0
                                 : static_cast<double>(slot.budget_bytes) *
                                       (1.0 + options_.mem_tolerance_pct / 100.0);
      if (static_cast<double>(used) <= limit) {
        acc.over_since_ms.erase(slot.gpu_index);
        continue;
      }
      int64_t since = acc.over_since_ms.try_emplace(slot.gpu_index, now_ms).first->second;
      if (now_ms - since >= options_.mem_grace_ms)
        result.over_budget.push_back({j.id, slot.gpu_index, used,
                                      j.suspended ? 0 : slot.budget_bytes,
                                      procs[j.id][slot.gpu_index], j.suspended});
    }
    acc.usage.gpu_mem_now_bytes = now_total_peak;
    acc.usage.gpu_mem_peak_bytes = std::max(acc.usage.gpu_mem_peak_bytes, now_total_peak);
    // Utilisation is the job's own only where it holds every GPU it is on entirely.
    bool alone = !j.suspended && !j.slots.empty() &&
                 std::all_of(j.slots.begin(), j.slots.end(), [](const WatchedSlot& s) {
                   return s.whole && s.device_fraction >= 1.0;
                 });
    if (alone) {
      for (const auto& r : readings) {
        if (!r.ok || r.sample.utilization_pct < 0 || SlotOn(j, r.gpu_index) == nullptr) continue;
        acc.util_sum += r.sample.utilization_pct;
        acc.util_samples += 1;
      }
      if (acc.util_samples > 0)
        acc.usage.util_pct_mean =
            static_cast<int>(std::lround(static_cast<double>(acc.util_sum) / acc.util_samples));
    }
  }

  for (const auto& r : readings) {
    if (!r.ok) continue;
    AverageBusy(r, now_ms);
    std::vector<const WatchedJob*> on_gpu;
    for (const auto& j : jobs)
      if (!j.suspended && SlotOn(j, r.gpu_index) != nullptr) on_gpu.push_back(&j);
    ChargeEnergy(r, on_gpu);
  }
  return result;
}

void Accountant::AverageBusy(const GpuReading& r, int64_t now_ms) {
  int util = r.sample.utilization_pct;
  if (util < 0) return;
  GpuAccount& gpu = gpus_[r.gpu_index];
  // The first reading counts in full; a later one by the share of the window since the last.
  double weight =
      gpu.busy_pct < 0
          ? 1.0
          : std::clamp(static_cast<double>(now_ms - gpu.busy_at_ms) / GpuAccount::kBusyWindowMs,
                       0.0, 1.0);
  gpu.busy_pct += weight * (util - gpu.busy_pct);
  gpu.busy_at_ms = std::max(gpu.busy_at_ms, now_ms);
}

void Accountant::ChargeEnergy(const GpuReading& r, const std::vector<const WatchedJob*>& on_gpu) {
  GpuAccount& gpu = gpus_[r.gpu_index];
  uint64_t counter = r.sample.energy_mj;
  bool had = have_energy_[r.gpu_index];
  uint64_t previous = gpu.energy_mj;
  gpu.energy_mj = counter;
  have_energy_[r.gpu_index] = counter > 0;
  // No earlier reading, an unsupported counter (0), or a counter that went back (driver reload):
  // nothing can be charged for this interval.
  if (!had || counter == 0 || counter < previous) return;
  double delta = static_cast<double>(counter - previous);
  if (on_gpu.empty()) {
    gpu.idle_energy_mj += delta;
    return;
  }
  int n = static_cast<int>(on_gpu.size());
  std::vector<double> weights;
  double total = 0;
  for (const WatchedJob* j : on_gpu) {
    weights.push_back(EnergyWeight(*SlotOn(*j, r.gpu_index), n));
    total += weights.back();
  }
  for (size_t i = 0; i < on_gpu.size(); ++i) {
    double part = total > 0 ? delta * weights[i] / total : delta / n;
    JobAccount& acc = jobs_[on_gpu[i]->id];
    acc.energy_mj += part;
    acc.usage.energy_mj = static_cast<uint64_t>(std::llround(acc.energy_mj));
  }
  gpu.charged_energy_mj += delta;
}

std::optional<JobUsage> Accountant::Usage(JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second.usage;
}

void Accountant::Forget(JobId id) { jobs_.erase(id); }

std::map<int, uint64_t> Accountant::MemByGpu(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? std::map<int, uint64_t>{} : it->second.mem_by_gpu;
}

}  // namespace pinpoint::watch
