// Accountant: turns GPU readings into per-job device memory, peaks, energy and budget breaches.
// Pure: no I/O, no clock, no threads; the Watcher feeds it one poll at a time.
//
// Energy split (docs/accounting.md): each poll, each GPU's energy counter delta since the previous
// poll is divided among the jobs watched on that GPU during the interval, in proportion to a
// weight: 100 for a job holding the whole GPU, its SM share for a slice with one, an even part
// (100 / jobs on the GPU) for a slice without one, each scaled by the fraction of the GPU's SMs
// behind the job's device (MIG). A suspended job is on none (WatchedJob::suspended). With no job on
// a GPU the delta is idle energy, charged to no job.
// The parts of a delta always add up to the delta.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "pinpoint/job.h"
#include "watch/watched_job.h"

namespace pinpoint::watch {

struct AccountantOptions {
  // A job is over budget on a GPU when its processes there use more than its budget plus this
  // many percent of it...
  double mem_tolerance_pct = 5.0;
  // ...on every poll for at least this long (0: the first poll over it).
  int64_t mem_grace_ms = 2000;
};

// One GPU's reading in one poll.
struct GpuReading {
  int gpu_index = 0;
  bool ok = false;  // false: the sample failed (error says why); nothing is charged
  std::string error;
  gpu::GpuSample sample;
};

// A job above its device-memory budget on a GPU for longer than the grace period.
struct OverBudget {
  JobId id = 0;
  int gpu_index = 0;
  uint64_t used_bytes = 0;
  uint64_t budget_bytes = 0;
  int processes = 0;       // how many of the job's processes use that GPU
  bool suspended = false;  // the job was suspended: its budget there is nothing
};

// Per-GPU totals kept across polls.
struct GpuAccount {
  uint64_t energy_mj = 0;        // counter at the last good poll
  double idle_energy_mj = 0;     // charged to no job since the accountant started
  double charged_energy_mj = 0;  // charged to jobs since the accountant started
  uint64_t unowned_bytes = 0;    // device memory of processes no watched job owns, last poll
  // The GPU's utilisation averaged over about the last minute (exponentially, time constant
  // kBusyWindowMs), -1 until a poll reports one. The scheduler's spread order reads it.
  double busy_pct = -1;
  int64_t busy_at_ms = 0;  // the poll that last moved it
  static constexpr int64_t kBusyWindowMs = 60000;
};

struct PollResult {
  std::vector<OverBudget> over_budget;
};

class Accountant {
 public:
  explicit Accountant(AccountantOptions options) : options_(options) {}

  // One poll at `now_ms`. `jobs`: every job watched during the interval that ends now (jobs
  // that ended since the previous poll included, for their last interval). `readings`: one per
  // GPU. `owner_of_pid`: the job owning each GPU process; processes not in it belong to no job.
  PollResult Update(int64_t now_ms, const std::vector<WatchedJob>& jobs,
                    const std::vector<GpuReading>& readings,
                    const std::map<int64_t, JobId>& owner_of_pid);

  // The usage of a job seen by any poll; nullopt if none saw it.
  std::optional<JobUsage> Usage(JobId id) const;
  // Forgets a job (after its final usage was taken).
  void Forget(JobId id);
  const std::map<int, GpuAccount>& gpus() const { return gpus_; }
  // Device memory of a job on each GPU at the last poll.
  std::map<int, uint64_t> MemByGpu(JobId id) const;

 private:
  void AverageBusy(const GpuReading& r, int64_t now_ms);
  struct JobAccount {
    JobUsage usage;
    double energy_mj = 0;  // fractional, rounded into usage.energy_mj
    int64_t util_sum = 0;
    int64_t util_samples = 0;
    std::map<int, uint64_t> mem_by_gpu;
    std::map<int, int64_t> over_since_ms;  // per GPU, while above budget
  };

  void ChargeEnergy(const GpuReading& r, const std::vector<const WatchedJob*>& on_gpu);

  AccountantOptions options_;
  std::map<JobId, JobAccount> jobs_;
  std::map<int, GpuAccount> gpus_;
  std::map<int, bool> have_energy_;  // a previous counter exists for the GPU
};

// The weight of `slot` among `jobs_on_gpu` jobs sharing its GPU (see the file comment).
double EnergyWeight(const WatchedSlot& slot, int jobs_on_gpu);

}  // namespace pinpoint::watch
