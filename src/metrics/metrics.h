// The Prometheus view of a node: a plain snapshot the daemon fills, and its rendering in the
// Prometheus text exposition format (version 0.0.4). Pure: no I/O.
//
// Metric names and labels are documented in docs/metrics.md; a test checks the rendering with
// `promtool check metrics`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pinpoint/job.h"

namespace pinpoint::metrics {

// One physical GPU.
struct GpuMetrics {
  int gpu_index = 0;
  std::string uuid;
  std::string name;
  bool sampled = false;  // false when the last poll could not read it
  uint64_t mem_used_bytes = 0;
  uint64_t mem_total_bytes = 0;
  int utilization_pct = -1;  // -1: not reported
  uint32_t power_mw = 0;
  uint64_t energy_mj = 0;     // the GPU's own counter
  double idle_energy_mj = 0;  // charged to no job since pinpointd started
};

// One allocatable device (a whole GPU or a MIG instance) as pinpoint hands it out.
struct DeviceMetrics {
  int index = 0;
  int gpu_index = 0;
  std::string uuid;
  SharingMode mode = SharingMode::kMps;
  int slices = 0;  // running jobs on it
  uint64_t mem_allocated_bytes = 0;
  int share_allocated_pct = 0;
  bool drained = false;
  std::optional<bool> mps_up;  // whether its MPS control daemon runs; none: it has none
  std::string mps_user;        // the MPS server's user, or empty
};

struct JobMetrics {
  JobId id = 0;
  std::string user;
  std::string state;
  std::string kind = "job";  // "job", or "lease" (a container's slice, docs/containers.md)
  std::string qos;           // its service class; "" for a lease
  uint64_t gpu_mem_request_bytes = 0;  // per device; 0 = whole devices
  JobUsage usage;
};

struct SchedMetrics {
  int pending = 0;
  int running = 0;         // running jobs, leases not counted
  int leases_running = 0;  // open leases
  // Running jobs whose suspend is made (docs/scheduling.md "Suspend"), and the device memory they
  // keep in host memory.
  int suspended = 0;
  uint64_t suspended_host_bytes = 0;
  int64_t starts_total = 0;
  int64_t preemptions_total = 0;  // running jobs preempted for a waiting job
  std::map<std::pair<std::string, std::string>, int64_t> ended_total;  // (state, reason) -> count
  // Ended jobs' enforcement entries whose applied value was not what was asked, by resource.
  std::map<std::string, int64_t> enforcement_disagreements_total;
  std::map<std::string, int64_t> enforcement_overrides_total;  // a job's own doing, by resource
  // Pending and running jobs (an array's rest: its tasks) by (service class, state).
  std::map<std::pair<std::string, std::string>, int> jobs_by_qos;
};

// The GPUs in mig-dynamic mode (docs/scheduling.md "Dynamic MIG").
struct MigMetrics {
  std::map<std::pair<std::string, std::string>, int64_t>
      changes_total;                                     // (action, "ok" | "failed")
  std::map<std::pair<int, std::string>, int> instances;  // (GPU, profile) -> now
};

struct Snapshot {
  std::vector<GpuMetrics> gpus;
  std::vector<DeviceMetrics> devices;
  std::vector<JobMetrics> jobs;  // running and pending jobs only: per-job series end with the job
  SchedMetrics sched;
  int64_t watcher_polls_total = 0;
  double watcher_last_poll_seconds = 0;
  int64_t jobs_purged_total = 0;  // ended jobs retention deleted (docs/admin.md, retention_days)
  std::optional<MigMetrics> mig;  // none without a mig-dynamic GPU
};

// The text exposition of `snapshot`.
std::string Render(const Snapshot& snapshot);

// `value` escaped for a label value (backslash, double quote, newline).
std::string EscapeLabel(const std::string& value);

}  // namespace pinpoint::metrics
