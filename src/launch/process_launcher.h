// ProcessLauncher: the real Launcher. Forks and execs pinpoint-shim for each job (see
// launcher.h for the job directory contract).
#pragma once

#include <set>
#include <string>

#include "launch/launcher.h"

namespace pinpoint::launch {

class ProcessLauncher : public Launcher {
 public:
  // `shim_path`: absolute path of the pinpoint-shim binary.
  explicit ProcessLauncher(std::string shim_path);

  Result<JobHandle> Launch(const LaunchSpec& spec) override;
  std::optional<ExitStatus> Poll(const JobHandle& handle) override;
  Status Signal(const JobHandle& handle, int signal) override;
  Status SignalLeader(const JobHandle& handle, int signal) override;
  void Reap() override;
  std::vector<int64_t> JobProcesses(const JobHandle& handle) override;

 private:
  // Signal and SignalLeader: the job's process group, or its leader alone (only while its
  // supervisor lives), as those say.
  Status SignalJob(const JobHandle& handle, int signal, bool leader_only);

  std::string shim_path_;
  std::set<int64_t> children_;  // shim pids forked by this process, not yet reaped
  std::set<JobId> leftovers_named_;  // jobs whose left-running processes the log has named
};

// Start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or 0 when the
// process does not exist.
uint64_t ProcessStartTicks(int64_t pid);

}  // namespace pinpoint::launch
