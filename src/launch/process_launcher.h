// ProcessLauncher: the real Launcher. Forks and execs pinpoint-shim for each job (see
// launcher.h for the job directory contract).
#pragma once

#include <map>
#include <set>
#include <string>

#include "common/process.h"
#include "launch/job_identity.h"
#include "launch/launcher.h"
#include "launch/process_keys.h"

namespace pinpoint::launch {

class ProcessLauncher : public Launcher {
 public:
  // `shim_path`: absolute path of the pinpoint-shim binary.
  explicit ProcessLauncher(std::string shim_path);
  // With the given reader of processes' keys (tests).
  ProcessLauncher(std::string shim_path, ProcessKeys keys);

  Result<JobHandle> Launch(const LaunchSpec& spec) override;
  std::optional<ExitStatus> Poll(const JobHandle& handle) override;
  Status Signal(const JobHandle& handle, int signal) override;
  Status SignalLeader(const JobHandle& handle, int signal) override;
  void Reap() override;
  std::vector<int64_t> JobProcesses(const JobHandle& handle) override;
  // True when this pass left environments unread (ProcessKeys' budget): an ended job's end waits
  // for the next pass.
  bool MoreDue() const override { return keys_.Refused(); }
  // How many processes' keys are known (tests).
  size_t known_processes() const { return keys_.size(); }
  size_t environments_read() const { return keys_.reads(); }

 private:
  // Signal and SignalLeader: the job's process group, or its leader alone (only while its
  // supervisor lives), as those say.
  Status SignalJob(const JobHandle& handle, int signal, bool leader_only);
  // The facts of the job in `handle`'s directory (open as `dir_fd`): known since its launch, or
  // read from its spec.json once (a job an earlier pinpointd launched).
  const SpecFacts& FactsFor(const JobHandle& handle, int dir_fd);
  // The job's processes (JobIdentity); with `reuse`, a "none" may come from the node's processes
  // as an earlier call since the last Reap read them (process_launcher.cc).
  // With `unsure`, it counts the job user's processes whose key is not known yet: those inside an
  // exec, whose environment cannot be read yet (ProcessBetweenPrograms), that could be the job's
  // (orphans, and children of the job's processes), and those this pass's budget left unread.
  std::vector<int64_t> Members(const JobIdentity& id, bool reuse = false, int* unsure = nullptr);
  // Whether an ended job with `unsure` such processes is not over yet: true while they are there,
  // for at most kUnsureWaitMs from its first poll that found one.
  bool Unsettled(JobId job, int unsure);

  std::string shim_path_;
  std::set<int64_t> children_;       // shim pids forked by this process, not yet reaped
  std::set<JobId> leftovers_named_;  // jobs whose left-running processes the log has named
  // When an ended job's poll first found a process that could be its own inside an exec.
  std::map<JobId, int64_t> unsure_since_ms_;
  std::map<std::string, SpecFacts> facts_;  // by job directory, until the job is over
  // The node's processes (not zombies) as Members last read them, until the next Reap or an
  // answer other than "none". Each process's cgroup and uids are read when a job first asks.
  struct TableEntry {
    int64_t pid = 0;
    ProcStat stat;
    std::optional<std::string> cgroup;
    std::optional<std::optional<ProcUids>> uids;
  };
  std::optional<std::vector<TableEntry>> table_;
  ProcessKeys keys_;  // each process's job keys, read once in its life
  // Reads the node's processes into table_ (and forgets the keys of those gone).
  void ReadTable();
  // What keys_ knows of the job's key, for JobIdentity::Holds.
  JobIdentity::KnownKey KnownKeyOf(const JobIdentity& id) const;
};

// Start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or 0 when the
// process does not exist.
uint64_t ProcessStartTicks(int64_t pid);

}  // namespace pinpoint::launch
