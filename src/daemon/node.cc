#include "daemon/node.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>

#include "common/file_util.h"
#include "common/env_select.h"
#include "common/log.h"
#include "daemon/hold.h"
#include "daemon/job_array.h"
#include "daemon/job_room.h"
#include "daemon/lifecycle.h"
#include "daemon/log_text.h"
#include "daemon/sched_view.h"
#include "daemon/sharing_setup.h"
#include "launch/shim.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/rewrite_budget.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

using nlohmann::json;

namespace {

// The allocations a start's slots give its job: each device as its mode's backend holds it.
std::vector<Allocation> AllocationsFor(const std::vector<sched::Slot>& slots, const sched::Inventory& inventory,
                                       sharing::Backends& sharing) {
  std::vector<Allocation> allocations;
  for (const auto& slot : slots) {
    const sched::Device& d = inventory.devices.at(static_cast<size_t>(slot.device_index));
    Allocation a;
    a.device_index = d.index;
    a.uuid = d.uuid;
    a.gpu_mem_bytes = slot.gpu_mem_bytes;
    a.gpu_share_pct = slot.gpu_share_pct;
    a.mode = sharing.For(d.mode).HoldsAs(slot.gpu_mem_bytes, slots.size());
    allocations.push_back(a);
  }
  return allocations;
}

}  // namespace

Node::Node(NodeOptions options, NodeDeps deps)
    : options_(std::move(options)),
      deps_(deps),
      users_(deps_.users != nullptr ? deps_.users : &cached_system_users_) {
  if (deps_.sharing == nullptr) own_sharing_ = MakeBackends(SharingSetup{.mps = deps_.mps});
  sharing_ = deps_.sharing != nullptr ? deps_.sharing : own_sharing_.get();
  // The scheduler places by each device's rules, which are its mode's backend's.
  for (sched::Device& d : options_.inventory.devices) d.rules = sharing_->For(d.mode).Rules();
}

Occupant& Node::OccupantOf(const JobRecord& job) {
  if (job.kind == JobKind::kLease) return lease_occupant_;
  return shim_;
}

Status Node::Recover() {
  store::ListFilter filter;
  filter.states = {JobState::kPending, JobState::kRunning};
  auto jobs = deps_.store->List(filter);
  if (!jobs.ok()) return jobs.status();
  int adopted = 0, ended = 0, requeued = 0, pending = 0;
  for (JobRecord& job : *jobs) {
    if (job.state == JobState::kPending) {
      if (job.kind == JobKind::kLease) starting_leases_.insert(job.id);  // it still waits for its MPS daemon
      jobs_.Add(job);
      ++pending;
      continue;
    }
    // A lease has no supervisor: it is adopted as it is, and Step polls its cgroup.
    auto status = OccupantOf(job).Found(job);
    bool orphaned = status && status->kind == launch::ExitStatus::Kind::kOrphaned;
    if (!status || orphaned) {
      jobs_.Add(job);
      for (const auto& a : job.allocations) sharing_->For(a.mode).Adopt(SliceOf(job, a));  // restarts a dead MPS daemon
      if (job.cancel_requested) kill_at_ms_[job.id] = deps_.clock->NowMs() + options_.cancel_grace_ms;
      store::JobEvent e{job.id, deps_.clock->NowMs(), "adopt", "re-adopted after daemon restart"};
      Status s = deps_.store->AppendEvent(e);
      if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
      if (orphaned) HandleOrphan(jobs_.at(job.id));
      ++adopted;
      continue;
    }
    JobRecord& found = jobs_.Add(job);
    if (status->kind == launch::ExitStatus::Kind::kNeverLaunched) {
      Requeue(found, "was never launched before the daemon stopped", Reason::kRequeued);
      ++requeued;
    } else {
      std::string why = lifecycle::SupervisorsReason(*status);
      if (!why.empty()) log::Warn("job {}: ended while pinpointd was down: {}", job.id, why);
      Finish(found, *status);
      ++ended;
    }
  }
  log::Info("recovered: {} pending, {} running adopted, {} ended while down, {} requeued",
            pending, adopted, ended, requeued);
  dirty_ = true;
  return Status::Ok();
}

std::vector<JobId> Node::Step() {
  deps_.launcher->Reap();
  jobs_.RetryUnpersistedEnds();
  ApplyWatch();
  int64_t now = deps_.clock->NowMs();
  std::vector<JobId> running;
  for (const auto& [id, job] : jobs_) {
    if (job.state == JobState::kRunning) running.push_back(id);
  }
  std::vector<std::pair<JobId, OccupantEnd>> ends;
  for (JobId id : running) {
    JobRecord& job = jobs_.at(id);
    auto end = OccupantOf(job).Poll(job, now);
    if (end && end->exit && end->exit->kind == launch::ExitStatus::Kind::kOrphaned) {
      HandleOrphan(job);
      end.reset();  // still running: its processes live
    }
    if (end) {
      ends.emplace_back(id, std::move(*end));
      continue;
    }
    EnforceTimeLimit(job, now);
    if (term_pending_.count(id) && !sharing_->Stopping(static_cast<uint64_t>(id)) &&
        OccupantOf(job).Signal(job, SIGTERM).code() != Code::kUnavailable)
      term_pending_.erase(id);
    auto kill = kill_at_ms_.find(id);
    if (kill != kill_at_ms_.end() && now >= kill->second) {
      Status s = OccupantOf(job).Signal(job, SIGKILL);
      if (s.code() != Code::kUnavailable) {  // not started yet: the next pass tries again
        if (!s.ok()) log::Warn("job {}: {}", id, s.ToString());
        kill->second = INT64_MAX;  // once
      }
    }
  }
  // MPS events are read after the exits and before judging them: a fault's line is in the server
  // log before its victims exit, so every victim collected here is known as one.
  HandleSharingEvents();
  RecordEnds(ends);
  ExpireStartingLeases(now);
  if (dirty_) Schedule();
  // Every job that ended in this pass, polled or failed to launch inside Schedule.
  std::vector<JobId> ended = jobs_.CollectEnded(
      [&](const JobRecord& job) { ended_total_[{job.state, job.reason}] += 1; });
  watch_.Update(jobs_);
  return ended;
}

sched::Snapshot Node::SchedSnapshot(bool with_pending) {
  sched::Snapshot snap;
  snap.inventory = options_.inventory;
  for (int device : faults_.RecoveringDevices()) snap.inventory.devices.at(static_cast<size_t>(device)).drained = true;
  snap.user_limits.defaults = options_.default_user_limit;
  for (auto& [id, job] : jobs_) {
    if (!options_.user_limits.empty() && !IsFinal(job.state)) {
      auto limit = options_.user_limits.find(job.user);
      if (limit != options_.user_limits.end()) snap.user_limits.by_uid[job.uid] = limit->second;
    }
    if (job.state == JobState::kPending && !job.cancel_requested) {
      if (!with_pending) continue;
      // A held job cannot start, and its reason was given when it was held: it costs a pass
      // nothing, however many a user holds (unless a dependency could end it).
      if (job.hold != Hold::kNone && job.request.afterok.empty()) {
        if (job.reason != Reason::kHeld) lifecycle::Waiting(job, Reason::kHeld, sched::HeldDetail(job.id, job.hold));
        continue;
      }
      // So does a job already waiting on jobs that all run: none of them can end in this pass.
      if (dependencies_.WaitsOnRunningJobs(job)) continue;
      snap.pending.push_back(DemandOf(job));
      continue;
    }
    if (job.state != JobState::kRunning) continue;  // ended in this pass, erased after it
    sched::RunningJob rj;
    rj.id = id;
    rj.uid = job.uid;
    rj.cpus = job.request.cpus;
    rj.mem_bytes = job.request.mem_bytes;
    rj.array_id = job.array.array_id;
    rj.slots = SlotsOf(job);
    snap.running.push_back(std::move(rj));
  }
  for (sched::RunningJob& settling : watch_.SettlingJobs()) snap.running.push_back(std::move(settling));
  if (deps_.watcher != nullptr) {  // how busy each GPU was of late, for spreading slices
    std::map<int, int> busy = deps_.watcher->BusyByGpu();
    for (auto& d : snap.inventory.devices)
      if (auto it = busy.find(d.gpu_index); it != busy.end()) d.busy_pct = it->second;
  }
  return snap;
}

void Node::Schedule() {
  dirty_ = false;
  sched::Snapshot snap = SchedSnapshot(/*with_pending=*/true);
  reservation_.reset();
  if (snap.pending.empty()) return;
  snap.dependencies = dependencies_.StatesFor(snap.pending);
  sched::Plan plan = sched::Schedule(snap);
  reservation_ = plan.reservation;
  EndNeverStarting(plan.never_start);
  for (const auto& wait : plan.waits) {
    auto it = jobs_.find(wait.id);
    if (it == jobs_.end()) continue;
    lifecycle::Waiting(it->second, wait.reason, WaitDetail(wait, *users_));
  }
  // Two store transactions (two fsyncs) for the starts of a pass, however many: the records
  // before any launch, the supervisors' pids after the last.
  std::vector<JobId> launched;
  for (JobId id : RecordStarts(plan.starts)) {
    if (LaunchJob(jobs_.at(id))) launched.push_back(id);
  }
  RecordPids(launched);
}

std::vector<JobId> Node::RecordStarts(const std::vector<sched::Start>& starts) {
  std::vector<std::pair<JobId, JobRecord>> pending;  // each started job as it was before
  // Without a batch (the store refused one) each start is its own transaction: slower, as safe.
  auto batch = deps_.store->BeginBatch();
  for (const auto& start : starts) {
    auto it = jobs_.find(start.id);
    if (it == jobs_.end()) continue;
    JobRecord& job = it->second;
    JobRecord before = job;
    lifecycle::Started(job, AllocationsFor(start.slots, options_.inventory, *sharing_), deps_.clock->NowMs());
    watch_.Started(job.id);  // requeued and started again: the watcher watches it as before
    Status s = jobs_.Persist(job, "start", "");
    if (!s.ok()) {
      log::Error("job {}: cannot record start, leaving it pending: {}", job.id, s.ToString());
      job = std::move(before);
      dirty_ = true;  // tried again next pass
      continue;
    }
    pending.emplace_back(job.id, std::move(before));
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  std::vector<JobId> started;
  for (auto& [id, before] : pending) {
    if (committed.ok()) {
      started.push_back(id);
      continue;
    }
    log::Error("job {}: cannot record start, leaving it pending: {}", id, committed.ToString());
    jobs_.at(id) = std::move(before);
    dirty_ = true;
  }
  return started;
}

void Node::RecordPids(const std::vector<JobId>& launched) {
  if (launched.empty()) return;
  auto batch = deps_.store->BeginBatch();
  std::vector<JobId> recorded;
  for (JobId id : launched) {
    Status s = jobs_.Persist(jobs_.at(id), nullptr, "");
    if (s.ok()) recorded.push_back(id);
    else log::Error("job {}: cannot record pid: {}", id, s.ToString());
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  if (committed.ok()) return;
  // The job runs all the same; a restarted daemon finds it through its directory's lock.
  for (JobId id : recorded) log::Error("job {}: cannot record pid: {}", id, committed.ToString());
}

Result<std::vector<std::string>> Node::JobEnvironment(const JobRecord& job) {
  std::map<std::string, std::string> env = job.request.env;
  std::string visible;
  for (const auto& a : job.allocations) visible += (visible.empty() ? "" : ",") + a.uuid;
  env["CUDA_VISIBLE_DEVICES"] = visible;  // empty for CPU-only jobs: they see no GPU
  env["PINPOINT_JOB_ID"] = std::to_string(job.id);
  env["PINPOINT_GPU_UUIDS"] = visible;
  SetArrayEnvironment(job.array, env);
  for (const std::string& name : sharing_->OwnVariables()) {
    env.erase(name);  // a job never chooses its own MPS server or limits
  }
  for (size_t i = 0; i < job.allocations.size(); ++i) {
    const Allocation& a = job.allocations[i];
    auto prepared = sharing_->For(a.mode).Prepare(SliceOf(job, a));
    if (!prepared.ok()) {
      // Its holds so far are let go: a job that waits or fails holds nothing on its devices.
      for (size_t j = 0; j < i; ++j) sharing_->For(job.allocations[j].mode).Release(SliceOf(job, job.allocations[j]));
      return prepared.status();
    }
    for (const auto& [k, v] : *prepared) env[k] = v;
  }
  if (job.request.gpu_mem_bytes > 0) env["PINPOINT_GPU_MEM_BYTES"] = std::to_string(job.request.gpu_mem_bytes);
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

bool Node::LaunchJob(JobRecord& job) {
  auto env = JobEnvironment(job);
  if (!env.ok() && env.status().code() == Code::kFailedPrecondition) {
    // The device's MPS server still serves another user: wait rather than fail.
    Requeue(job, env.status().message(), Reason::kMpsUser, /*release_resources=*/false);
    return false;
  }
  Occupant& occupant = OccupantOf(job);
  if (!env.ok()) {
    job.allocations.clear();  // it never became a client: nothing to release
    End(job, occupant.LaunchFailed(env.status().message()));
    return false;
  }
  auto started = occupant.Start(job, std::move(env).value());
  if (!started.ok()) {
    End(job, occupant.LaunchFailed(started.status().message()));
    return false;
  }
  ++starts_total_;
  return *started;
}

void Node::Requeue(JobRecord& job, const std::string& why, Reason reason, bool release_resources) {
  if (release_resources) ReleaseResources(job);
  lifecycle::Requeued(job, reason, why);
  PersistRequeue(job);
}

void Node::PersistRequeue(const JobRecord& job) {
  Status s = jobs_.Persist(job, "requeue", job.detail);
  if (!s.ok()) log::Error("job {}: {}", job.id, s.ToString());
  dirty_ = true;
}

void Node::ReleaseResources(const JobRecord& job) {
  // The watcher looks at its GPUs once more before they go to anyone else.
  watch_.Settle(job);
  for (const auto& a : job.allocations) sharing_->For(a.mode).Release(SliceOf(job, a));
  OccupantOf(job).Release(job);
}

void Node::Finish(JobRecord& job, const launch::ExitStatus& status) {
  ReleaseResources(job);
  lifecycle::EndFacts facts;
  facts.exit = status;
  facts.mps_fault = faults_.Leave(job, *sharing_);
  facts.policy = options_.mps_fault_policy;
  facts.now_ms = deps_.clock->NowMs();
  lifecycle::JobEnd end = lifecycle::DecideEnd(job, facts);
  lifecycle::ApplyEnd(end, job);
  if (end.requeue) {
    kill_at_ms_.erase(job.id);  // the deadline and the orphan were the ended run's
    term_pending_.erase(job.id);
    orphans_.erase(job.id);
    PersistRequeue(job);  // resources were released above
    return;
  }
  PersistEnd(job);
}

void Node::End(JobRecord& job, const OccupantEnd& end) {
  if (end.exit) Finish(job, *end.exit);
  else EndLease(job, end.cause);
}

void Node::RecordEnds(const std::vector<std::pair<JobId, OccupantEnd>>& ends) {
  if (ends.empty()) return;
  jobs_.BeginEnds();
  for (const auto& [id, end] : ends) End(jobs_.at(id), end);
  jobs_.CommitEnds();
}

void Node::PersistEnd(JobRecord& job) {
  kill_at_ms_.erase(job.id);
  term_pending_.erase(job.id);
  orphans_.erase(job.id);
  dirty_ = true;
  jobs_.PersistEnd(job);
}

void Node::HandleOrphan(JobRecord& job) {
  if (!orphans_.insert(job.id).second) return;
  log::Error("job {}: its supervisor (pinpoint-shim, pid {}) died while the job's processes "
             "still run; they keep their resources until they are ended", job.id, job.pid);
  lifecycle::SupervisorLost(job);
  Status s = jobs_.Persist(job, "supervisor-lost", "the supervisor died; ending the job's processes");
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
  if (!kill_at_ms_.count(job.id)) SafeStop(job);
}

}  // namespace pinpoint::daemon
