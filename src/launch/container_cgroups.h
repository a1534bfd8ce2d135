// ContainerCgroups: the cgroups of containers that hold a lease (docs/containers.md). pinpointd
// did not create them: it learns one from a process the container runtime names, and from then
// on reads its process list from the kernel and stops it as a whole. Behind an interface, with a
// recording fake (FakeContainerCgroups) beside the real one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/process.h"
#include "pinpoint/status.h"

namespace pinpoint::launch {

// Not thread-safe: the daemon's main loop owns it.
class ContainerCgroups {
 public:
  virtual ~ContainerCgroups() = default;
  // The cgroup key (common/cgroup_key.h) of process `pid`, checked: read from /proc/<pid>/cgroup
  // (at most 64 KiB); not a root cgroup, not pinpointd's own cgroup nor one above it, and its
  // directory exists. Errors: kNotFound (no such process), kFailedPrecondition naming why the
  // cgroup is refused.
  virtual Result<std::string> CgroupOf(int64_t pid) = 0;
  // The pids in the cgroup `key` and below, from the kernel's cgroup.procs files (at most 1 MiB
  // each, 32 levels and 4096 groups below it); nullopt when the cgroup is gone.
  virtual std::optional<std::vector<int64_t>> Processes(const std::string& key) = 0;
  // Sends `signal` to every process of the cgroup: SIGKILL through cgroup.kill where the kernel
  // has it (cgroup v2, Linux 5.14), else to each pid of Processes. Ok when the cgroup is gone.
  // Errors: kIo.
  virtual Status Signal(const std::string& key, int signal) = 0;
  // The real, effective and saved uids of process `pid` (/proc/<pid>/status); nullopt when it is
  // gone.
  virtual std::optional<ProcUids> UidsOf(int64_t pid) = 0;
};

// The real one, over /proc and a cgroup file system mounted at `cgroup_root` (/sys/fs/cgroup).
class SystemContainerCgroups final : public ContainerCgroups {
 public:
  explicit SystemContainerCgroups(std::string cgroup_root = "/sys/fs/cgroup", int64_t self_pid = 0);
  Result<std::string> CgroupOf(int64_t pid) override;
  std::optional<std::vector<int64_t>> Processes(const std::string& key) override;
  Status Signal(const std::string& key, int signal) override;
  std::optional<ProcUids> UidsOf(int64_t pid) override { return ReadProcUids(pid); }
  // The directory of `key` under the cgroup root ("0::/a" -> <root>/a, or <root>/unified/a on a
  // hybrid host; "pids:/a" -> <root>/pids/a; "name=systemd:/a" -> <root>/systemd/a), or empty
  // when none exists.
  std::string DirOf(const std::string& key) const;

 private:
  std::string root_;
  int64_t self_pid_;
};

// Scripted: each pid's cgroup and each cgroup's processes are set by the test; signals are
// recorded.
class FakeContainerCgroups final : public ContainerCgroups {
 public:
  void SetCgroup(int64_t pid, Result<std::string> key) { cgroup_of_.insert_or_assign(pid, key); }
  void SetProcesses(const std::string& key, std::optional<std::vector<int64_t>> pids) {
    procs_[key] = std::move(pids);
  }
  Result<std::string> CgroupOf(int64_t pid) override {
    auto it = cgroup_of_.find(pid);
    if (it == cgroup_of_.end()) return NotFound("no process " + std::to_string(pid));
    return it->second;
  }
  std::optional<std::vector<int64_t>> Processes(const std::string& key) override {
    auto it = procs_.find(key);
    return it == procs_.end() ? std::nullopt : it->second;
  }
  Status Signal(const std::string& key, int signal) override {
    signals.emplace_back(key, signal);
    return Status::Ok();
  }
  std::optional<ProcUids> UidsOf(int64_t pid) override {
    auto it = uids_.find(pid);
    return it == uids_.end() ? std::nullopt : std::optional<ProcUids>(it->second);
  }
  void SetUids(int64_t pid, uint32_t uid) { uids_[pid] = ProcUids{uid, uid, uid}; }
  std::vector<std::pair<std::string, int>> signals;

 private:
  std::map<int64_t, ProcUids> uids_;
  std::map<int64_t, Result<std::string>> cgroup_of_;
  std::map<std::string, std::optional<std::vector<int64_t>>> procs_;
};

}  // namespace pinpoint::launch
