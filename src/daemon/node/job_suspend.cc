// Suspend and resume (issue 56 item 4; docs/scheduling.md "Suspend"): a job's CUDA processes are
// checkpointed by the driver (their device memory moved to host memory, their GPUs let go), then
// stopped; resumed on the same GPUs once they have room. The checkpoint runs off the loop
// (Checkpointer); the record says where it stands (JobRecord::suspend), so a restart finds it.
#include <signal.h>

#include <string>

#include "common/log.h"
#include "common/process.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/node/job_runner.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

namespace {

std::string Processes(size_t n) { return std::to_string(n) + " process" + (n == 1 ? "" : "es"); }

std::string Seconds(int64_t ms) {
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

// A suspend's processes may be listed over several passes (a node without cgroups): how long.
constexpr int64_t kListingMs = 60'000;

// The processes `pids` that still exist, each with its start time, into `s`.
void ListInto(const std::vector<int64_t>& pids, SuspendRecord& s) {
  s.pids.clear();
  s.pid_starts.clear();
  for (int64_t pid : pids)
    if (auto stat = ReadProcStat(pid)) {
      s.pids.push_back(pid);
      s.pid_starts.push_back(stat->start_ticks);
    }
}

std::vector<Checkpointer::Target> TargetsOf(const SuspendRecord& s) {
  std::vector<Checkpointer::Target> targets;
  for (size_t i = 0; i < s.pids.size(); ++i)
    targets.push_back({s.pids[i], i < s.pid_starts.size() ? s.pid_starts[i] : 0});
  return targets;
}

}  // namespace

Status JobRunner::Suspend(JobRecord& job, const std::string& by, bool resume, uint64_t host_bytes,
                          JobId for_job, int64_t grace_ms) {
  Checkpointer* checkpointer = deps_.checkpointer;
  if (checkpointer == nullptr) return Unavailable("this node cannot suspend jobs");
  PP_RETURN_IF_ERROR(checkpointer->Available());
  const int64_t now = deps_.clock->NowMs();
  // Its processes, all of them: where they are not all found yet, they are listed again each
  // pass (ListSuspends) and the checkpoint begins then.
  Result<std::vector<int64_t>> listed = OccupantOf(job).AllProcesses(job);
  const bool complete = listed.ok();
  if (!complete && listed.status().code() != Code::kUnavailable) return listed.status();
  SuspendRecord asked{SuspendPhase::kSuspending, now, by, resume, {}, {}, host_bytes};
  if (complete) {
    ListInto(*listed, asked);
    if (asked.pids.empty())
      return FailedPrecondition("job " + std::to_string(job.id) + " has no process to suspend");
  }
  JobRecord before = job;
  job.suspend = asked;
  Status s = deps_.jobs->Persist(
      job, "suspend",
      "suspending (asked by " + by +
          "): " + (complete ? Processes(asked.pids.size()) : "its processes being listed") + ", " +
          FormatSize(host_bytes) + " of device memory to host memory");
  if (!s.ok()) {
    job = std::move(before);
    return s;
  }
  // The device memory the checkpoint moves is charged to the job's own cgroup.
  if (deps_.cgroups != nullptr && job.request.mem_bytes > 0) {
    Status raised = deps_.cgroups->SetMemoryMax(job.id, job.request.mem_bytes + host_bytes);
    if (!raised.ok()) log::Warn("job {}: raising its memory.max: {}", job.id, raised.message());
  }
  if (!complete) {
    suspend_listing_.insert(job.id);
    if (for_job != 0) {
      suspend_for_[job.id] = {for_job, grace_ms};
      ++preemptions_total_;
    }
    log::Info("job {}: suspending (asked by {}): its processes are being listed", job.id, by);
    return Status::Ok();
  }
  s = checkpointer->Begin(job.id, Checkpointer::Action::kSuspend, TargetsOf(asked), now);
  if (!s.ok()) {
    Checkpointer::Done failed{job.id, Checkpointer::Action::kSuspend, false, {}, s.message(), 0};
    Suspended(job, failed);
    return s;
  }
  if (for_job != 0) {
    suspend_for_[job.id] = {for_job, grace_ms};
    ++preemptions_total_;
  }
  log::Info("job {}: suspending {} (asked by {})", job.id, Processes(asked.pids.size()), by);
  return Status::Ok();
}

void JobRunner::ListSuspends(int64_t now_ms) {
  for (auto it = suspend_listing_.begin(); it != suspend_listing_.end();) {
    auto found = deps_.jobs->find(*it);
    if (found == deps_.jobs->end() || found->second.state != JobState::kRunning ||
        found->second.suspend.phase != SuspendPhase::kSuspending ||
        !found->second.suspend.pids.empty()) {
      if (found == deps_.jobs->end() || found->second.state != JobState::kRunning)
        suspend_for_.erase(*it);
      it = suspend_listing_.erase(it);
      continue;
    }
    JobRecord& job = found->second;
    Result<std::vector<int64_t>> listed = OccupantOf(job).AllProcesses(job);
    if (!listed.ok() && listed.status().code() == Code::kUnavailable &&
        now_ms - job.suspend.since_ms < kListingMs) {
      ++it;  // the next pass looks further
      continue;
    }
    it = suspend_listing_.erase(it);
    std::string error;
    if (listed.ok()) {
      ListInto(*listed, job.suspend);
      if (job.suspend.pids.empty()) error = "it has no process to suspend";
    } else {
      error = listed.status().code() == Code::kUnavailable
                  ? "its processes were not all found within " + Seconds(kListingMs)
                  : listed.status().message();
    }
    if (!error.empty()) {
      Suspended(job, {job.id, Checkpointer::Action::kSuspend, false, {}, error, 0});
      continue;
    }
    // Stored with its processes: a restart during the checkpoint undoes it on them.
    Status s = deps_.jobs->Persist(job, nullptr, "");
    if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
    s = deps_.checkpointer->Begin(job.id, Checkpointer::Action::kSuspend, TargetsOf(job.suspend),
                                  now_ms);
    if (!s.ok())
      Suspended(job, {job.id, Checkpointer::Action::kSuspend, false, {}, s.message(), 0});
  }
}

void JobRunner::SignalEveryProcess(JobRecord& job, int signal) {
  Status s = OccupantOf(job).SignalAll(job, signal);
  // A stop is sent again each pass for a while, a continue until all are found (SendDueSignals).
  if (signal == SIGSTOP || s.code() == Code::kUnavailable) {
    signal_every_[job.id] = {signal, deps_.clock->NowMs()};
    return;
  }
  signal_every_.erase(job.id);
  if (!s.ok()) log::Warn("job {}: signal {}: {}", job.id, signal, s.message());
}

void JobRunner::Resume(JobRecord& job) {
  if (job.suspend.phase != SuspendPhase::kSuspended) return;
  Status s = deps_.jobs->Persist(job, "resume", "resuming on its GPU(s)");
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
  BeginResume(job);
}

void JobRunner::UndoSuspend(JobRecord& job) {
  if (job.suspend.phase != SuspendPhase::kSuspending &&
      job.suspend.phase != SuspendPhase::kResuming)
    return;
  log::Warn("job {}: a {} that did not end: undone, the job runs on", job.id,
            SuspendPhaseName(job.suspend.phase));
  BeginResume(job);
}

void JobRunner::BeginResume(JobRecord& job) {
  job.suspend.phase = SuspendPhase::kResuming;
  // Its processes run again first: the driver restores a process through the process itself.
  SignalEveryProcess(job, SIGCONT);
  // Nothing was checkpointed (cut short while its processes were being listed): it runs on.
  if (job.suspend.pids.empty()) {
    Resumed(job, {job.id, Checkpointer::Action::kResume, true, {}, {}, 0});
    return;
  }
  Status s = deps_.checkpointer != nullptr
                 ? deps_.checkpointer->Begin(job.id, Checkpointer::Action::kResume,
                                             TargetsOf(job.suspend), deps_.clock->NowMs())
                 : Unavailable("this node cannot resume jobs");
  if (!s.ok()) Resumed(job, {job.id, Checkpointer::Action::kResume, false, {}, s.message(), 0});
}

void JobRunner::CheckpointsDone(int64_t now_ms) {
  if (deps_.checkpointer == nullptr) return;
  ListSuspends(now_ms);
  for (const Checkpointer::Done& done : deps_.checkpointer->Poll(now_ms)) {
    auto it = deps_.jobs->find(done.job);
    if (it == deps_.jobs->end() || it->second.state != JobState::kRunning) {
      suspend_for_.erase(done.job);
      continue;  // it ended meanwhile
    }
    if (done.action == Checkpointer::Action::kSuspend)
      Suspended(it->second, done);
    else
      Resumed(it->second, done);
  }
}

void JobRunner::Suspended(JobRecord& job, const Checkpointer::Done& done) {
  auto preemption = suspend_for_.find(job.id);
  std::optional<std::pair<JobId, int64_t>> for_job;
  if (preemption != suspend_for_.end()) {
    for_job = preemption->second;
    suspend_for_.erase(preemption);
  }
  if (!done.ok) {
    std::string detail = "not suspended: " + done.error + "; it runs on";
    // Left as it was: its record says so before it is written (a restart finds no suspend).
    if (done.clean) lifecycle::EndSuspend(job, deps_.clock->NowMs());
    Status s = deps_.jobs->Persist(job, "suspend-failed", detail);
    if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
    log::Warn("job {}: {}", job.id, detail);
    if (!done.clean)
      UndoSuspend(job);  // cut short: each process put back to running, whatever it was left in
    else if (deps_.cgroups != nullptr && job.request.mem_bytes > 0)
      (void)deps_.cgroups->SetMemoryMax(job.id, job.request.mem_bytes);
    // A preemption still makes its room: by the requeue its class's suspend falls back to.
    if (for_job) Preempt(job, for_job->first, for_job->second);
    return;
  }
  // Checkpointed: its processes are stopped, its GPUs free for others.
  SignalEveryProcess(job, SIGSTOP);
  job.suspend.phase = SuspendPhase::kSuspended;
  job.suspend.pids.clear();
  job.suspend.pid_starts.clear();
  for (const Checkpointer::Target& t : done.processes) {
    job.suspend.pids.push_back(t.pid);
    job.suspend.pid_starts.push_back(t.start_ticks);
  }
  std::string detail = "suspended in " + Seconds(done.took_ms) + ": " +
                       Processes(done.processes.size()) + " checkpointed, its GPU(s) free";
  Status s = deps_.jobs->Persist(job, "suspended", detail);
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
  log::Info("job {}: {}", job.id, detail);
  Changed();
}

void JobRunner::Resumed(JobRecord& job, const Checkpointer::Done& done) {
  // Its time limit runs on from where it stood.
  int64_t away_ms = lifecycle::EndSuspend(job, deps_.clock->NowMs());
  if (deps_.cgroups != nullptr && job.request.mem_bytes > 0)
    (void)deps_.cgroups->SetMemoryMax(job.id, job.request.mem_bytes);
  if (!done.ok) {
    Status s = deps_.jobs->Persist(job, "resume-failed", done.error);
    if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
    StopJob(job, Reason::kLost, "its processes could not be resumed: " + done.error);
    return;
  }
  std::string detail =
      "resumed in " + Seconds(done.took_ms) + ", after " + Seconds(away_ms) + " suspended";
  Status s = deps_.jobs->Persist(job, "resumed", detail);
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
  log::Info("job {}: {}", job.id, detail);
}

}  // namespace pinpoint::daemon
