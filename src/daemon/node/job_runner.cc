#include "daemon/node/job_runner.h"

#include <signal.h>

#include <algorithm>
#include <optional>
#include <set>

#include "common/log.h"
#include "daemon/arrays/job_array.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/occupancy.h"
#include "daemon/jobs/sched_view.h"
#include "daemon/node/slurm_env.h"
#include "gpu/declared_usage.h"
#include "pinpoint/units.h"
#include "sched/cpu_pick.h"

namespace pinpoint::daemon {

namespace {

// How long a suspend's stop is sent again each pass, and its continue while the job's processes
// are not all found.
constexpr int64_t kSignalEveryMs = 60'000;

// What a backend is told of `job`'s hold on `a`, with its service class's client priority.
sharing::Slice SliceIn(const RunnerDeps& deps, const JobRecord& job, const Allocation& a) {
  return SliceOf(job, a, &deps.options->admission.qos, deps.options->admission.default_qos);
}

// The allocations a start's slots give its job: each device as its mode's backend holds it.
std::vector<Allocation> AllocationsFor(const std::vector<sched::Slot>& slots,
                                       const sched::Inventory& inventory,
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

// The NUMA node nearest the job's first GPU, when the backend knows it: its CPUs go there first.
std::optional<int> NumaNodeOf(const JobRecord& job, const sched::Inventory& inventory) {
  if (job.allocations.empty()) return std::nullopt;
  size_t index = static_cast<size_t>(job.allocations.front().device_index);
  if (index >= inventory.devices.size() || inventory.devices[index].numa_node < 0)
    return std::nullopt;
  return inventory.devices[index].numa_node;
}

std::string OverBudgetDetail(const watch::OverBudget& over) {
  std::string who =
      over.processes == 1 ? "its process" : "its " + std::to_string(over.processes) + " processes";
  if (over.suspended)
    return who + " held " + FormatSize(over.used_bytes) + " of device memory on GPU " +
           std::to_string(over.gpu_index) +
           " while the job was suspended (its GPUs are others' then: it may hold none)";
  return who + " used " + FormatSize(over.used_bytes) + " of device memory on GPU " +
         std::to_string(over.gpu_index) + ", over its " + FormatSize(over.budget_bytes);
}

}  // namespace

JobRunner::JobRunner(RunnerDeps deps)
    : deps_(deps),
      shim_(deps.options, deps.launcher, deps.cgroups, deps.users),
      output_(deps.options, deps.output_space),
      lease_occupant_(deps.options, deps.inventory, deps.containers, deps.lease_specs,
                      deps.sharing) {}

Occupant& JobRunner::OccupantOf(const JobRecord& job) {
  if (job.kind == JobKind::kLease) return lease_occupant_;
  return shim_;
}

void JobRunner::Adopt(JobRecord& job, bool orphaned) {
  for (const auto& a : job.allocations)
    deps_.sharing->For(a.mode).Adopt(SliceIn(deps_, job, a));  // restarts a dead MPS daemon
  // Started by a release that kept no limits: what its backends apply now, each taken as given
  // (its environment at the start is not known), so that its watcher budget holds as before.
  if (job.readback.limits.empty() && !job.allocations.empty()) {
    job.readback.limits = LimitsOf(job, {});
    for (AppliedLimit& limit : job.readback.limits) limit.given = limit.expected;
  }
  if (job.cancel_requested)
    kill_at_ms_[job.id] = deps_.clock->NowMs() + deps_.options->launch.cancel_grace_ms;
  store::JobEvent e{job.id, deps_.clock->NowMs(), "adopt", "re-adopted after daemon restart"};
  Status s = deps_.store->AppendEvent(e);
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
  if (orphaned) HandleOrphan(job);
  UndoSuspend(job);  // a suspended job stays suspended; one being suspended or resumed runs on
  if (job.request.signal != 0) {
    auto events = deps_.store->Events(job.id);
    if (events.ok() && std::any_of(events->begin(), events->end(), [&](const store::JobEvent& ev) {
          return ev.kind == "signal" && ev.time_ms >= job.start_ms;  // this run's
        }))
      warned_.insert(job.id);
  }
}

// ---- starts

std::vector<JobId> JobRunner::Start(const std::vector<sched::Start>& starts) {
  // Two store transactions (two fsyncs) for the starts of a pass, however many: the records
  // before any launch, the supervisors' pids after the last.
  std::vector<JobId> started = RecordStarts(starts);
  std::vector<JobId> launched;
  for (JobId id : started) {
    if (Launch(deps_.jobs->at(id))) launched.push_back(id);
  }
  RecordPids(launched);
  return started;
}

std::vector<JobId> JobRunner::RecordStarts(const std::vector<sched::Start>& starts) {
  JobTable& jobs = *deps_.jobs;
  std::vector<std::pair<JobId, JobRecord>> pending;  // each started job as it was before
  // Without a batch (the store refused one) each start is its own transaction: slower, as safe.
  auto batch = deps_.store->BeginBatch();
  const CpuTopology& topology = deps_.options->launch.cpu_topology;
  std::set<int> taken;  // the CPUs running jobs hold, those started in this pass included
  if (!topology.cpus.empty()) {
    for (const auto& [id, job] : jobs)
      if (job.state == JobState::kRunning) taken.insert(job.cpuset.begin(), job.cpuset.end());
  }
  for (const auto& start : starts) {
    auto it = jobs.find(start.id);
    if (it == jobs.end()) continue;
    JobRecord& job = it->second;
    JobRecord before = job;
    lifecycle::Started(job, AllocationsFor(start.slots, *deps_.inventory, *deps_.sharing),
                       deps_.clock->NowMs());
    if (!topology.cpus.empty() && OccupancyOf(job.kind).pinned_cpus) {
      job.cpuset =
          sched::PickCpus(topology, taken, job.request.cpus, NumaNodeOf(job, *deps_.inventory));
      taken.insert(job.cpuset.begin(), job.cpuset.end());
    }
    deps_.watch->Started(job.id);  // requeued and started again: the watcher watches it as before
    Status s = jobs.Persist(job, "start", "");
    if (!s.ok()) {
      log::Error("job {}: cannot record start, leaving it pending: {}", job.id, s.ToString());
      job = std::move(before);
      Changed();  // tried again next pass
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
    jobs.at(id) = std::move(before);
    Changed();
  }
  return started;
}

void JobRunner::RecordPids(const std::vector<JobId>& launched) {
  if (launched.empty()) return;
  auto batch = deps_.store->BeginBatch();
  std::vector<JobId> recorded;
  for (JobId id : launched) {
    Status s = deps_.jobs->Persist(deps_.jobs->at(id), nullptr, "");
    if (s.ok())
      recorded.push_back(id);
    else
      log::Error("job {}: cannot record pid: {}", id, s.ToString());
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  if (committed.ok()) return;
  // The job runs all the same; a restarted daemon finds it through its directory's lock.
  for (JobId id : recorded) log::Error("job {}: cannot record pid: {}", id, committed.ToString());
}

Result<std::map<std::string, std::string>> JobRunner::JobEnvironment(const JobRecord& job) {
  sharing::Backends& sharing = *deps_.sharing;
  std::map<std::string, std::string> env = job.request.env;
  std::string visible;
  for (const auto& a : job.allocations) visible += (visible.empty() ? "" : ",") + a.uuid;
  env["CUDA_VISIBLE_DEVICES"] = visible;  // empty for CPU-only jobs: they see no GPU
  env["PINPOINT_JOB_ID"] = std::to_string(job.id);
  env["PINPOINT_GPU_UUIDS"] = visible;
  SetArrayEnvironment(job.array, env);
  std::vector<int> gpu_indices;
  for (const auto& a : job.allocations) {
    size_t index = static_cast<size_t>(a.device_index);
    if (index < deps_.inventory->devices.size())
      gpu_indices.push_back(deps_.inventory->devices[index].gpu_index);
  }
  // A job sees what a Slurm job would; a lease's container is no Slurm job.
  if (job.kind == JobKind::kJob)
    SetSlurmEnvironment(job, deps_.options->identity.slurm, gpu_indices, env);
  for (const std::string& name : sharing.OwnVariables()) {
    env.erase(name);  // a job never chooses its own MPS server or limits
  }
  for (size_t i = 0; i < job.allocations.size(); ++i) {
    const Allocation& a = job.allocations[i];
    auto prepared = sharing.For(a.mode).Prepare(SliceIn(deps_, job, a));
    if (!prepared.ok()) {
      // Its holds so far are let go: a job that waits or fails holds nothing on its devices.
      for (size_t j = 0; j < i; ++j)
        sharing.For(job.allocations[j].mode).Release(SliceIn(deps_, job, job.allocations[j]));
      return prepared.status();
    }
    for (const auto& [k, v] : *prepared) env[k] = v;
  }
  if (job.request.gpu_mem_bytes > 0)
    env["PINPOINT_GPU_MEM_BYTES"] = std::to_string(job.request.gpu_mem_bytes);
  // As many threads as CPUs (the job's own choice stays), and which CPUs when it has its own.
  env.try_emplace("OMP_NUM_THREADS", std::to_string(job.request.cpus));
  if (!job.cpuset.empty())
    env["PINPOINT_CPUS"] = FormatCpuList(job.cpuset);
  else
    env.erase("PINPOINT_CPUS");
  // A simulated node's own jobs: what they declare is seen by this node alone (declared_usage.h).
  env.erase(gpu::kSimulatedNodeVar);
  if (!deps_.options->identity.simulated_node.empty())
    env[gpu::kSimulatedNodeVar] = deps_.options->identity.simulated_node;
  return env;
}

std::vector<AppliedLimit> JobRunner::LimitsOf(const JobRecord& job,
                                              const std::map<std::string, std::string>& env) const {
  std::vector<AppliedLimit> limits;
  auto add = [&](AppliedLimit limit) {
    if (std::find(limits.begin(), limits.end(), limit) == limits.end())
      limits.push_back(std::move(limit));
  };
  if (!job.allocations.empty()) {
    std::string visible;
    for (const auto& a : job.allocations) visible += (visible.empty() ? "" : ",") + a.uuid;
    add(AppliedLimit{.resource = "devices",
                     .variable = "CUDA_VISIBLE_DEVICES",
                     .expected = visible,
                     .strength = LimitStrength::kDriver,
                     .what = "the devices the CUDA driver shows it"});
  }
  for (const Allocation& a : job.allocations) {
    sharing::Slice slice = SliceIn(deps_, job, a);
    if (a.device_index >= 0 &&
        static_cast<size_t>(a.device_index) < deps_.inventory->devices.size()) {
      const sched::Device& d = deps_.inventory->devices[static_cast<size_t>(a.device_index)];
      slice.device_mem_bytes = d.mem_bytes;
      slice.mig_instance = d.partition.is_mig();
    }
    for (AppliedLimit& limit : deps_.sharing->For(a.mode).Applies(slice)) add(std::move(limit));
  }
  for (AppliedLimit& limit : limits) {
    if (limit.variable.empty()) continue;
    auto given = env.find(limit.variable);
    limit.given = given == env.end() ? "" : given->second;
  }
  return limits;
}

bool JobRunner::Launch(JobRecord& job) {
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
  std::vector<AppliedLimit> limits = LimitsOf(job, *env);
  std::vector<std::string> entries;
  for (const auto& [k, v] : *env) entries.push_back(k + "=" + v);
  auto started = occupant.Start(job, std::move(entries));
  if (started.ok()) job.readback.limits = std::move(limits);  // each run's own (Start reset it)
  if (!started.ok()) {
    End(job, occupant.LaunchFailed(started.status().message()));
    return false;
  }
  ++starts_total_;
  return *started;
}

// ---- running jobs

void JobRunner::Pass(int64_t now_ms, const std::function<void(const char*)>& mark) {
  auto part = [&](const char* name) {
    if (mark) mark(name);
  };
  JobTable& jobs = *deps_.jobs;
  CheckpointsDone(now_ms);
  ApplyWatch();
  BoundOutput(now_ms);
  part("watch and output look");
  std::vector<JobId> running;
  for (const auto& [id, job] : jobs) {
    if (job.state == JobState::kRunning) running.push_back(id);
  }
  std::vector<std::pair<JobId, OccupantEnd>> ends;
  // The ends of one pass write at most about pass_record_bytes of records: the jobs past that are
  // polled by the next pass, which follows at once (Node::MoreDue). Their limits and signals
  // are seen to all the same.
  uint64_t end_bytes = 0;
  ends_left_ = false;
  for (JobId id : running) {
    JobRecord& job = jobs.at(id);
    if (auto pending = cut_pending_.find(id); pending != cut_pending_.end()) {
      if (output_.Ended(id)) {
        ends.emplace_back(id, std::move(pending->second));
        cut_pending_.erase(pending);
      }
      continue;
    }
    ends_left_ =
        ends_left_ || (!ends.empty() && end_bytes >= deps_.options->pass.pass_record_bytes);
    auto end = ends_left_ ? std::nullopt : OccupantOf(job).Poll(job, now_ms);
    if (end && end->exit && end->exit->kind == launch::ExitStatus::Kind::kOrphaned) {
      HandleOrphan(job);
      end.reset();  // still running: its processes live
    }
    if (end) {
      end_bytes += RecordBytes(job);
      ends.emplace_back(id, std::move(*end));
      continue;
    }
    std::optional<int64_t> deadline = lifecycle::TimeLimitDeadlineMs(job);
    // A job already being stopped or cancelled is left alone: the first stop wins.
    if (deadline && now_ms >= *deadline)
      StopJob(job, Reason::kTimeLimit, lifecycle::TimeLimitDetail(job));
    SendWarning(job, now_ms);
    SendDueSignals(job, now_ms);
  }
  // MPS events are read after the exits and before judging them: a fault's line is in the server
  // log before its victims exit, so every victim collected here is known as one.
  HandleSharingEvents();
  part("polls");
  if (ends.empty()) return;
  // The cuts owed are asked for first; a job whose cut is being made ends once it is made.
  std::erase_if(ends, [&](auto& e) {
    if (output_.Ended(e.first)) return false;
    cut_pending_.emplace(e.first, std::move(e.second));
    return true;
  });
  part("output cuts");
  if (ends.empty()) return;
  jobs.BeginEnds();
  for (const auto& [id, end] : ends) End(jobs.at(id), end);
  part("ends");
  jobs.CommitEnds();
  part("ends' commit");
}

void JobRunner::SendDueSignals(JobRecord& job, int64_t now_ms) {
  // A preemption's grace is over: the job is stopped as any stop (its MPS clients let go first).
  if (auto grace = preempt_at_ms_.find(job.id);
      grace != preempt_at_ms_.end() && now_ms >= grace->second) {
    preempt_at_ms_.erase(grace);
    if (job.stop_reason == Reason::kPreempted && !kill_at_ms_.count(job.id)) SafeStop(job);
  }
  if (term_pending_.count(job.id) && !deps_.sharing->Stopping(static_cast<uint64_t>(job.id)) &&
      OccupantOf(job).Signal(job, SIGTERM).code() != Code::kUnavailable)
    term_pending_.erase(job.id);
  if (auto every = signal_every_.find(job.id); every != signal_every_.end()) {
    auto [signal, since_ms] = every->second;
    bool due = (signal != SIGSTOP ||
                (job.suspend.phase == SuspendPhase::kSuspended && !kill_at_ms_.count(job.id))) &&
               now_ms - since_ms < kSignalEveryMs;
    // A suspend's stop is sent again each pass for its window, while the job is suspended and not
    // being stopped: a process forked as it went out, or one a look at the node's processes
    // missed, is stopped too. A continue, until it has reached them all.
    if (!due ||
        (OccupantOf(job).SignalAll(job, signal).code() != Code::kUnavailable && signal != SIGSTOP))
      signal_every_.erase(every);
  }
  auto kill = kill_at_ms_.find(job.id);
  if (kill == kill_at_ms_.end() || now_ms < kill->second) return;
  Status s = OccupantOf(job).Signal(job, SIGKILL);
  if (s.code() == Code::kUnavailable) return;  // not started yet: the next pass tries again
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
  kill->second = INT64_MAX;  // once
}

void JobRunner::SendWarning(JobRecord& job, int64_t now_ms) {
  if (job.request.signal == 0 || job.cancel_requested || warned_.count(job.id)) return;
  std::optional<int64_t> due = lifecycle::SignalDueMs(job);
  if (!due || now_ms < *due) return;
  Occupant& occupant = OccupantOf(job);
  int signal = job.request.signal;
  Status s = job.request.signal_leader_only ? occupant.SignalLeader(job, signal)
                                            : occupant.Signal(job, signal);
  if (s.code() == Code::kUnavailable) return;  // not started yet: the next pass tries again
  warned_.insert(job.id);                      // once, sent or not
  std::string to = job.request.signal_leader_only ? "its first process" : "its processes";
  std::string detail = s.ok() ? "sent signal " + std::to_string(signal) + " to " + to + ", " +
                                    std::to_string(job.request.signal_before_s) +
                                    " s before its time limit"
                              : "signal " + std::to_string(signal) + " not sent: " + s.message();
  if (!s.ok()) log::Warn("job {}: {}", job.id, detail);
  Status recorded = deps_.store->AppendEvent(store::JobEvent{job.id, now_ms, "signal", detail});
  if (!recorded.ok()) log::Warn("job {}: {}", job.id, recorded.ToString());
}

void JobRunner::ApplyWatch() {
  WatchFeedback::Found found = deps_.watch->Apply(*deps_.jobs, deps_.clock->NowMs());
  if (found.settled || found.holds_changed)
    Changed();  // freed slots, or the holders the reasons name
  // An Xid is the driver's word on a GPU: it confirms MPS fault claims of every device on it.
  for (const auto& [xid, time_ms] : found.xids) {
    log::Warn("GPU {}: critical Xid {} reported by the driver", xid.index, xid.xid);
    for (const auto& d : deps_.inventory->devices) {
      if (d.gpu_index == xid.index) deps_.faults->Xid(d.index, time_ms);
    }
  }
  for (const auto& over : found.over_budget) {
    auto it = deps_.jobs->find(over.id);
    if (it != deps_.jobs->end() && it->second.state == JobState::kRunning)
      StopJob(it->second, Reason::kGpuMemExceeded, OverBudgetDetail(over));
  }
}

void JobRunner::BoundOutput(int64_t now_ms) {
  for (const OutputEnd& end : output_.Look(*deps_.jobs, now_ms)) {
    auto it = deps_.jobs->find(end.id);
    if (it != deps_.jobs->end() && it->second.state == JobState::kRunning)
      StopJob(it->second, Reason::kOutputExceeded, end.detail);
  }
}

void JobRunner::HandleSharingEvents() {
  int64_t now = deps_.clock->NowMs();
  for (const auto& e : deps_.sharing->Poll(now)) {
    switch (e.kind) {
      case sharing::Event::Kind::kFault:
        deps_.faults->Claim(e, *deps_.jobs, *deps_.sharing, now);
        Changed();
        break;
      case sharing::Event::Kind::kServerDied:
        log::Error("{}: {}", SharingModeName(e.mode), e.detail);
        break;
      case sharing::Event::Kind::kServerQuit:
        log::Info("{}: {}", SharingModeName(e.mode), e.detail);
        Changed();  // a job of another user may wait for the device
        break;
      case sharing::Event::Kind::kServerReady:
        Changed();  // the jobs that waited for it start
        break;
      case sharing::Event::Kind::kServerStartFailed:
        Changed();  // the job that waited for it is told why
        break;
      case sharing::Event::Kind::kServerUnresponsive:
        // It was killed: the running jobs of its user it served there can no longer be served.
        log::Error("{}: {}", SharingModeName(e.mode), e.detail);
        for (auto& [id, job] : *deps_.jobs) {
          if (job.state != JobState::kRunning || job.uid != e.uid) continue;
          bool served_there =
              std::any_of(job.allocations.begin(), job.allocations.end(), [&](const Allocation& a) {
                return a.device_index == e.device_index && a.mode == e.mode;
              });
          if (served_there) StopJob(job, Reason::kMpsUnresponsive, e.detail);
        }
        Changed();  // the device is free again: the queue may move
        break;
    }
  }
  if (deps_.faults->Evaluate(deps_.inventory->devices, deps_.clock->NowMs())) Changed();
}

// ---- stops

void JobRunner::SafeStop(JobRecord& job) {
  // The backends let go of the job's processes before any signal reaches them (the MPS server
  // terminates its clients), so the neighbours on the device are never left in an undefined state.
  std::optional<std::vector<int64_t>> pids;
  auto processes = [&] {
    if (!pids) pids = OccupantOf(job).Processes(job);
    return *pids;
  };
  for (const auto& a : job.allocations) {
    Status t = deps_.sharing->For(a.mode).StopClients(SliceIn(deps_, job, a), processes);
    if (!t.ok()) log::Warn("job {}: stopping its clients: {}", job.id, t.message());
  }
  kill_at_ms_[job.id] = deps_.clock->NowMs() + deps_.options->launch.cancel_grace_ms;
  // The server's answer comes later (never waited on): Pass sends SIGTERM once it has come, or
  // once it is overdue; the SIGKILL deadline holds either way.
  if (deps_.sharing->Stopping(static_cast<uint64_t>(job.id))) {
    term_pending_.insert(job.id);
    return;
  }
  Status s = OccupantOf(job).Signal(job, SIGTERM);
  if (s.code() == Code::kUnavailable)
    term_pending_.insert(job.id);  // not started yet: Pass sends it
  else if (!s.ok())
    log::Warn("job {}: {}", job.id, s.ToString());
  // A suspended job's processes are stopped: they run again to take the signal.
  if (job.suspend.phase == SuspendPhase::kSuspended) SignalEveryProcess(job, SIGCONT);
}

void JobRunner::StopJob(JobRecord& job, Reason stop_reason, std::string detail) {
  if (!lifecycle::Stop(job, stop_reason, std::move(detail))) return;
  Status s = deps_.jobs->Persist(job, "stop", job.stop_detail);
  if (!s.ok()) log::Error("job {}: cannot record stop: {}", job.id, s.ToString());
  log::Warn("job {}: {}: stopping it", job.id, job.stop_detail);
  SafeStop(job);
}

bool JobRunner::Preempt(JobRecord& job, JobId by, int64_t grace_ms) {
  if (job.state != JobState::kRunning) return false;
  JobRecord before = job;
  if (!lifecycle::Stop(job, Reason::kPreempted, "preempted by job " + std::to_string(by)))
    return false;
  Status s = deps_.jobs->Persist(job, "preempt", job.stop_detail);
  if (!s.ok()) {
    log::Error("job {}: cannot record its preemption, leaving it running: {}", job.id,
               s.ToString());
    job = std::move(before);
    return false;
  }
  ++preemptions_total_;
  log::Warn("job {}: {}: its grace ends in {} s", job.id, job.stop_detail, grace_ms / 1000);
  int signal = job.request.signal != 0 ? job.request.signal : SIGTERM;
  Status sent = OccupantOf(job).Signal(job, signal);
  if (!sent.ok() && sent.code() != Code::kUnavailable)
    log::Warn("job {}: {}", job.id, sent.ToString());
  preempt_at_ms_[job.id] = deps_.clock->NowMs() + grace_ms;
  return true;
}

void JobRunner::HandleOrphan(JobRecord& job) {
  if (!orphans_.insert(job.id).second) return;
  log::Error(
      "job {}: its supervisor (pinpoint-shim, pid {}) died while the job's processes "
      "still run; they keep their resources until they are ended",
      job.id, job.pid);
  lifecycle::SupervisorLost(job);
  Status s = deps_.jobs->Persist(job, "supervisor-lost",
                                 "the supervisor died; ending the job's processes");
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.ToString());
  if (!kill_at_ms_.count(job.id)) SafeStop(job);
}

// ---- ends and requeues

void JobRunner::EndNeverStarting(const std::vector<sched::Wait>& never) {
  int64_t now = deps_.clock->NowMs();
  for (const sched::Wait& w : never) {
    auto it = deps_.jobs->find(w.id);
    if (it == deps_.jobs->end() || it->second.state != JobState::kPending) continue;
    JobRecord& job = it->second;
    JobRecord before = job;
    lifecycle::NeverStarts(job, w.reason, w.detail, now);
    Status s = deps_.jobs->Persist(job, "end", job.detail);
    if (!s.ok()) {
      log::Error("job {}: cannot record that it never starts, leaving it pending: {}", job.id,
                 s.ToString());
      job = std::move(before);
      continue;
    }
    log::Info("job {} never starts: {}", job.id, job.detail);
    Changed();  // jobs that depend on it are judged again
  }
}

void JobRunner::Requeue(JobRecord& job, const std::string& why, Reason reason,
                        bool release_resources) {
  if (release_resources) ReleaseResources(job);
  warned_.erase(job.id);
  lifecycle::Requeued(job, reason, why);
  PersistRequeue(job);
}

void JobRunner::PersistRequeue(const JobRecord& job) {
  Status s = deps_.jobs->Persist(job, "requeue", job.detail);
  if (!s.ok()) log::Error("job {}: {}", job.id, s.ToString());
  Changed();
}

void JobRunner::ReleaseResources(JobRecord& job) {
  // The watcher looks at its GPUs once more before they go to anyone else. A suspended job's went
  // to others when it was suspended: they settle only when its processes were last seen holding
  // device memory there (a breach of its suspension), so nothing else goes there while they do.
  if (job.suspend.phase != SuspendPhase::kSuspended || job.usage.gpu_mem_now_bytes > 0)
    deps_.watch->Settle(job, deps_.clock->NowMs());
  lifecycle::EndSuspend(job, deps_.clock->NowMs());
  for (const auto& a : job.allocations) deps_.sharing->For(a.mode).Release(SliceIn(deps_, job, a));
  OccupantOf(job).Release(job);
}

void JobRunner::Finish(JobRecord& job, const launch::ExitStatus& status) {
  // Its processes are gone: the cut its output is owed is asked for (Pass waits for it before
  // it ends a job; an end found otherwise, at a restart, does not).
  (void)output_.Ended(job.id);
  ReleaseResources(job);
  lifecycle::EndFacts facts;
  facts.exit = status;
  facts.mps_fault = deps_.faults->Leave(job, *deps_.sharing);
  facts.policy = deps_.options->watch.mps_fault_policy;
  facts.now_ms = deps_.clock->NowMs();
  if (const ServiceClass* sc =
          ClassOf(job, deps_.options->admission.qos, deps_.options->admission.default_qos))
    facts.preempt_mode = sc->preempt_mode;
  lifecycle::JobEnd end = lifecycle::DecideEnd(job, facts);
  lifecycle::ApplyEnd(end, job);
  if (end.requeue) {
    kill_at_ms_.erase(job.id);  // the deadline, the orphan and the warning were the ended run's
    preempt_at_ms_.erase(job.id);
    term_pending_.erase(job.id);
    signal_every_.erase(job.id);
    orphans_.erase(job.id);
    warned_.erase(job.id);
    PersistRequeue(job);  // resources were released above
    return;
  }
  PersistEnd(job);
}

void JobRunner::EndLease(JobRecord& job, Reason cause) {
  ReleaseResources(job);  // its occupant forgets its edits and removes its CDI spec
  bool faulted = deps_.faults->Leave(job, *deps_.sharing);
  lifecycle::ApplyEnd(lifecycle::DecideLeaseEnd(job, cause, faulted, deps_.clock->NowMs()), job);
  PersistEnd(job);
}

void JobRunner::End(JobRecord& job, const OccupantEnd& end) {
  if (end.exit)
    Finish(job, *end.exit);
  else
    EndLease(job, end.cause);
}

void JobRunner::PersistEnd(JobRecord& job) {
  kill_at_ms_.erase(job.id);
  preempt_at_ms_.erase(job.id);
  term_pending_.erase(job.id);
  signal_every_.erase(job.id);
  orphans_.erase(job.id);
  warned_.erase(job.id);
  Changed();
  deps_.jobs->PersistEnd(job);
}

}  // namespace pinpoint::daemon
