// What the watcher needs to know about a running job: where its processes are found and what it
// may use on each physical GPU. Plain data, built by the daemon from a job's record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/job_record.h"
#include "pinpoint/job.h"
#include "sched/inventory.h"

namespace pinpoint::watch {

// A job's part of one physical GPU. A job with two slices on MIG instances of one GPU has one
// WatchedSlot for that GPU with their budgets summed.
struct WatchedSlot {
  int gpu_index = 0;  // physical GPU (NVML index)
  uint64_t budget_bytes =
      0;              // device memory it may use on that GPU; 0 = the whole device (no budget)
  int share_pct = 0;  // SM share of the device it holds; 0 = none reserved
  // Fraction of the physical GPU's SMs behind the device(s) the job holds: 1 for a whole GPU or
  // a slice of one, sm_count(MIG) / sm_count(GPU) for a MIG instance.
  double device_fraction = 1.0;
  bool whole = false;  // holds the device(s) entirely (whole GPU, or a whole MIG instance)
};

struct WatchedJob {
  JobId id = 0;
  uint32_t uid = 0;         // the job's user: a process of another user is never the job's
  int64_t session_id = 0;   // the job's supervisor pid: its session holds the job's processes
  std::string cgroup_path;  // the job's cgroup as /proc/<pid>/cgroup names it ("/pinpoint/job-7");
                            // may be empty
  // A lease's container cgroup (common/cgroup_key.h): every process in it or below is the
  // lease's. Empty for jobs and for leases not attached yet.
  std::string lease_cgroup;
  std::vector<WatchedSlot> slots;
  // The environment variables its hold applies its limits through (AppliedLimit::variable): what
  // is read of its processes (JobSeen).
  std::vector<std::string> env_vars;
  // Suspended (issue 56): its device memory was moved to host memory and its GPUs went to others.
  // It may hold none there (any byte, past the grace, is a breach), and is charged no energy or
  // utilisation of them.
  bool suspended = false;
  JobUsage prior;  // usage recorded before (an earlier run of pinpointd, a requeue): added to
};

// The WatchedJob of a running job placed on `inventory`'s devices. `cgroup_path` as above.
WatchedJob WatchedJobOf(const JobRecord& job, const sched::Inventory& inventory,
                        const std::string& cgroup_path);

// The physical GPU indices of `inventory`, each once, ascending.
std::vector<int> PhysicalGpus(const sched::Inventory& inventory);

}  // namespace pinpoint::watch
