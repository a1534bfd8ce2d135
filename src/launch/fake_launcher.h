// FakeLauncher: a Launcher for tests. Nothing runs; the test decides when and how jobs end.
// State is per instance.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "launch/launcher.h"

namespace pinpoint::launch {

class FakeLauncher : public Launcher {
 public:
  Result<JobHandle> Launch(const LaunchSpec& spec) override;
  std::optional<ExitStatus> Poll(const JobHandle& handle) override;
  Status Signal(const JobHandle& handle, int signal) override;
  // Recorded apart (leader_signals); ends the job as Signal does when signals end jobs.
  Status SignalLeader(const JobHandle& handle, int signal) override;
  void Reap() override { ++reap_calls_; }
  // A fake job has one process: its pid + 1, or those SetJobProcesses names.
  std::vector<int64_t> JobProcesses(const JobHandle& handle) override {
    return job_processes_.empty() ? std::vector<int64_t>{handle.pid + 1} : job_processes_;
  }
  // Every job's processes are these (real pids: a suspend reads their start times).
  void SetJobProcesses(std::vector<int64_t> pids) { job_processes_ = std::move(pids); }
  // The next `calls` AllJobProcesses and SignalAll say kUnavailable (the look not complete yet;
  // SignalAll records its signal all the same).
  void SetIncompleteLooks(int calls) { incomplete_looks_ = calls; }
  Result<std::vector<int64_t>> AllJobProcesses(const JobHandle& handle) override {
    if (incomplete_looks_ > 0 && incomplete_looks_-- > 0)
      return Unavailable("its processes are not all found yet");
    return JobProcesses(handle);
  }
  Status SignalAll(const JobHandle& handle, int signal) override {
    Status s = Signal(handle, signal);
    if (s.ok() && incomplete_looks_ > 0 && incomplete_looks_-- > 0)
      return Unavailable("its processes are not all found yet");
    return s;
  }

  // Test controls.
  void Finish(JobId id, const ExitStatus& status);
  void FinishAll(int exit_code);
  // Launches fail with this status until cleared.
  void FailLaunches(Status status) { launch_failure_ = std::move(status); }
  // The job's supervisor dies while the job lives: Poll reports kOrphaned until the job ends
  // (Finish, or a signal when signals end jobs), then kNoStatus, as ProcessLauncher does.
  void Orphan(JobId id) { orphaned_.insert(id); }
  // A signal makes the job end as signaled (like a real program with default handlers).
  void SetSignalsEndJobs(bool on) { signals_end_jobs_ = on; }
  // Until cleared the job has not started: Signal sends nothing and says kUnavailable.
  void SetNotStarted(JobId id, bool not_started) {
    if (not_started)
      not_started_.insert(id);
    else
      not_started_.erase(id);
  }

  // Records.
  const std::vector<LaunchSpec>& launches() const { return launches_; }
  const std::vector<std::pair<JobId, int>>& signals() const { return signals_; }
  const std::vector<std::pair<JobId, int>>& leader_signals() const { return leader_signals_; }
  std::vector<JobId> Running() const;
  int reap_calls() const { return reap_calls_; }

 private:
  // The job ends as signaled by `signal`, when signals end jobs and it has not ended yet.
  void EndBySignal(JobId id, int signal);

  std::vector<LaunchSpec> launches_;
  std::vector<std::pair<JobId, int>> signals_;
  std::vector<std::pair<JobId, int>> leader_signals_;
  std::map<JobId, ExitStatus> finished_;
  std::set<JobId> orphaned_;
  std::set<JobId> not_started_;
  Status launch_failure_;
  bool signals_end_jobs_ = true;
  int reap_calls_ = 0;
  int64_t next_pid_ = 1000;
  std::vector<int64_t> job_processes_;
  int incomplete_looks_ = 0;
};

}  // namespace pinpoint::launch
