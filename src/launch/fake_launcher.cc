#include "launch/fake_launcher.h"

#include <algorithm>

namespace pinpoint::launch {

Result<JobHandle> FakeLauncher::Launch(const LaunchSpec& spec) {
  if (!launch_failure_.ok()) return launch_failure_;
  launches_.push_back(spec);
  finished_.erase(spec.job_id);  // a requeued job starts a fresh run
  orphaned_.erase(spec.job_id);
  JobHandle h;
  h.job_id = spec.job_id;
  h.job_dir = spec.job_dir;
  h.pid = next_pid_++;
  h.pid_start_ticks = 1;
  return h;
}

std::optional<ExitStatus> FakeLauncher::Poll(const JobHandle& handle) {
  auto it = finished_.find(handle.job_id);
  if (it != finished_.end()) return it->second;
  if (orphaned_.count(handle.job_id)) {
    ExitStatus orphan;
    orphan.kind = ExitStatus::Kind::kOrphaned;
    return orphan;
  }
  for (const auto& l : launches_) {
    if (l.job_id == handle.job_id) return std::nullopt;
  }
  ExitStatus never;
  never.kind = ExitStatus::Kind::kNeverLaunched;
  return never;
}

Status FakeLauncher::SignalLeader(const JobHandle& handle, int signal) {
  if (not_started_.count(handle.job_id)) return Unavailable("job has not started yet");
  if (orphaned_.count(handle.job_id)) return FailedPrecondition("its supervisor is gone");
  leader_signals_.emplace_back(handle.job_id, signal);
  EndBySignal(handle.job_id, signal);
  return Status::Ok();
}

Status FakeLauncher::Signal(const JobHandle& handle, int signal) {
  if (not_started_.count(handle.job_id)) return Unavailable("job has not started yet");
  signals_.emplace_back(handle.job_id, signal);
  EndBySignal(handle.job_id, signal);
  return Status::Ok();
}

void FakeLauncher::EndBySignal(JobId id, int signal) {
  if (!signals_end_jobs_ || finished_.count(id)) return;
  ExitStatus s;
  s.kind = ExitStatus::Kind::kSignaled;
  s.term_signal = signal;
  if (orphaned_.count(id)) {  // nobody is left to see how it ended
    s.kind = ExitStatus::Kind::kNoStatus;
    s.error = "the job's supervisor ended without recording an exit status";
  }
  finished_[id] = s;
}

void FakeLauncher::Finish(JobId id, const ExitStatus& status) {
  ExitStatus s = status;
  if (orphaned_.count(id)) {  // nobody is left to see how it ended
    s.kind = ExitStatus::Kind::kNoStatus;
    s.error = "the job's supervisor ended without recording an exit status";
  }
  finished_[id] = s;
}

void FakeLauncher::FinishAll(int exit_code) {
  for (JobId id : Running()) {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kExited;
    s.exit_code = exit_code;
    Finish(id, s);
  }
}

std::vector<JobId> FakeLauncher::Running() const {
  std::vector<JobId> out;
  for (const auto& l : launches_) {
    if (!finished_.count(l.job_id) && std::find(out.begin(), out.end(), l.job_id) == out.end())
      out.push_back(l.job_id);
  }
  return out;
}

}  // namespace pinpoint::launch
