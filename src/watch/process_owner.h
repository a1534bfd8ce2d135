// ProcessOwner: which job a GPU process belongs to. Behind an interface so the watcher is tested
// with scripted owners; the real one reads /proc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "watch/watched_job.h"

namespace pinpoint::watch {

// Called on the watcher's thread only.
class ProcessOwner {
 public:
  virtual ~ProcessOwner() = default;
  // The job among `jobs` that `pid` belongs to, or nullopt.
  virtual std::optional<JobId> OwnerOf(int64_t pid, const std::vector<WatchedJob>& jobs) = 0;
  // Whether `pid`, a GPU process of no job, is a process of user `uid` (its real uid) other than
  // an MPS server: one that may have left a job of that user and still hold the job's GPU.
  virtual bool UsersOwnProcess(int64_t pid, uint32_t uid) = 0;
  // Sends SIGKILL to `pid` while it runs as user `uid` (real, effective and saved), pinned by a
  // pidfd so that a pid reused meanwhile is never hit: a process that outlived its job. Returns
  // false when the process lives on unsignalled: not all its uids are the user's (a set-user-id
  // program), so pinpointd may not kill it; true when it was sent SIGKILL or is gone.
  virtual bool KillUsersProcess(int64_t pid, uint32_t uid) = 0;
  // The text of `pid`'s /proc/<pid>/environ (NUL-separated, at most kMaxEnvironBytes), or nullopt
  // when it cannot be read: what a job's process on a GPU was given (docs/enforcement.md).
  virtual std::optional<std::string> Environ(int64_t pid) = 0;
  // The children of `pid` as the kernel lists them (/proc/<pid>/task/<pid>/children, bounded):
  // a job's supervisor's child is the job's first process. Empty when it cannot be read.
  virtual std::vector<int64_t> ChildrenOf(int64_t pid) = 0;
};

// From /proc: the process's cgroup when the job has one (a lease's container cgroup, any
// hierarchy, or a job's v2 group), else its session (a job's processes
// stay in its supervisor's session unless they call setsid), else a PINPOINT_JOB_ID in its
// environment (readable when pinpointd runs as root) when its real uid is the job's user, which
// also finds processes that left the session. A process of no watched job (an MPS server, another
// user's program) has no owner.
class ProcProcessOwner final : public ProcessOwner {
 public:
  // `mps_server`: the MPS server program's path (its /proc/<pid>/exe), whose processes serve
  // jobs and are never a job's; "" when the node runs no MPS.
  explicit ProcProcessOwner(std::string mps_server = "") : mps_server_(std::move(mps_server)) {}
  std::optional<JobId> OwnerOf(int64_t pid, const std::vector<WatchedJob>& jobs) override;
  bool UsersOwnProcess(int64_t pid, uint32_t uid) override;
  bool KillUsersProcess(int64_t pid, uint32_t uid) override;
  std::optional<std::string> Environ(int64_t pid) override;
  std::vector<int64_t> ChildrenOf(int64_t pid) override;

 private:
  std::string mps_server_;
};

// Scripted: owners set by the test.
class FakeProcessOwner final : public ProcessOwner {
 public:
  void Set(int64_t pid, JobId job) { owners_[pid] = job; }
  void Clear() { owners_.clear(); }
  // `pid` is a process of user `uid` that is no MPS server.
  void SetUser(int64_t pid, uint32_t uid) { users_[pid] = uid; }
  std::optional<JobId> OwnerOf(int64_t pid, const std::vector<WatchedJob>& jobs) override {
    auto it = owners_.find(pid);
    if (it == owners_.end()) return std::nullopt;
    for (const auto& j : jobs)
      if (j.id == it->second) return j.id;
    return std::nullopt;
  }

  bool UsersOwnProcess(int64_t pid, uint32_t uid) override {
    auto it = users_.find(pid);
    return it != users_.end() && it->second == uid;
  }
  // `pid` runs with another user's rights too (set-user-id): it is never killed.
  void SetUnkillable(int64_t pid) { unkillable_.insert(pid); }
  bool KillUsersProcess(int64_t pid, uint32_t uid) override {
    if (unkillable_.count(pid)) return false;
    killed_.push_back({pid, uid});
    return true;
  }
  // `pid`'s environment as /proc would show it ("NAME=value" entries, NUL-separated).
  void SetEnviron(int64_t pid, std::string text) { environs_[pid] = std::move(text); }
  int environ_reads() const { return environ_reads_; }
  std::optional<std::string> Environ(int64_t pid) override {
    ++environ_reads_;
    auto it = environs_.find(pid);
    if (it == environs_.end()) return std::nullopt;
    return it->second;
  }
  void SetChildren(int64_t pid, std::vector<int64_t> children) { children_[pid] = children; }
  std::vector<int64_t> ChildrenOf(int64_t pid) override {
    auto it = children_.find(pid);
    return it == children_.end() ? std::vector<int64_t>{} : it->second;
  }
  const std::vector<std::pair<int64_t, uint32_t>>& killed() const { return killed_; }

 private:
  std::vector<std::pair<int64_t, uint32_t>> killed_;
  std::map<int64_t, JobId> owners_;
  std::map<int64_t, uint32_t> users_;
  std::set<int64_t> unkillable_;
  std::map<int64_t, std::string> environs_;
  std::map<int64_t, std::vector<int64_t>> children_;
  int environ_reads_ = 0;
};

// The cgroup v2 path in the text of /proc/<pid>/cgroup ("0::/pinpoint/job-7\n" ->
// "/pinpoint/job-7"), or empty.
std::string CgroupV2Path(const std::string& proc_cgroup_text);
// The value of variable `name` in the text of /proc/<pid>/environ (NUL-separated), or nullopt.
std::optional<std::string_view> EnvironValue(std::string_view text, std::string_view name);
// The value of PINPOINT_JOB_ID in the text of /proc/<pid>/environ (NUL-separated), or nullopt.
std::optional<JobId> JobIdInEnviron(const std::string& environ_text);

}  // namespace pinpoint::watch
