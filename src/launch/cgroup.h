// Host CPU and memory limits through cgroup v2. Best effort: where the node has no writable
// cgroup v2 hierarchy, Cgroups reports why once and every job runs without limits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::launch {

class Cgroups {
 public:
  // `root`: the cgroup v2 directory pinpoint may create job groups in, e.g.
  // /sys/fs/cgroup/pinpoint. Probe() creates it and enables the cpu and memory controllers.
  explicit Cgroups(std::string root) : root_(std::move(root)) {}

  // Checks whether limits can be applied. Returns Ok, or why not (kUnavailable), e.g.
  // "cgroup v2 not mounted at /sys/fs/cgroup" or "cannot create /sys/fs/cgroup/pinpoint: ...".
  Status Probe();
  bool enabled() const { return enabled_; }

  // Creates the job's group with memory.max = mem_bytes (0: no memory limit) and either its own
  // CPUs, cpuset.cpus = `cpuset` (where the cpuset controller is on), or cpu.max = `cpus` whole
  // CPUs on `shared_cpus` (cpuset.cpus, where the controller is on; empty: every CPU); returns
  // its directory. Errors: kIo.
  Result<std::string> CreateJobGroup(JobId id, int cpus, uint64_t mem_bytes,
                                     const std::vector<int>& cpuset = {},
                                     const std::vector<int>& shared_cpus = {});
  // Whether the cpuset controller is on for job groups (Probe).
  bool cpusets() const { return cpusets_; }
  // What the kernel shows the job's group applies (docs/enforcement.md), each file's first line:
  // cpuset.cpus.effective (where cpusets are on), cpu.max, memory.max. A file that cannot be read
  // is "". Read through the group's directory opened without following links, each read bounded.
  struct Limits {
    std::string cpuset;
    std::string cpu_max;
    std::string memory_max;
  };
  Limits ReadLimits(JobId id) const;
  // The group's CPU time (cpu.stat usage_usec) and its memory's high-water mark (memory.peak);
  // -1 where not readable. Read before RemoveJobGroup.
  struct Usage {
    int64_t cpu_usec = -1;
    int64_t mem_peak_bytes = -1;
  };
  Usage ReadUsage(JobId id) const;
  // Sets the group's memory.max (0: "max", no limit) while the job runs: a suspend raises it by the
  // device memory its processes take into host memory. Written through the group's directory
  // opened without following links. Errors: kIo; nothing without cgroups (Ok).
  Status SetMemoryMax(JobId id, uint64_t bytes);
  // Removes the job's group once it has no processes. Errors are ignored (logged by the caller).
  Status RemoveJobGroup(JobId id);
  // The job's group directory (whether or not it exists).
  std::string JobDir(JobId id) const { return root_ + "/job-" + std::to_string(id); }

 private:
  std::string root_;
  bool enabled_ = false;
  bool cpusets_ = false;
};

}  // namespace pinpoint::launch
