#include "daemon/node/node.h"

#include <chrono>
#include <utility>

#include "common/log.h"
#include "daemon/jobs/array_rest.h"
#include "daemon/jobs/enforcement.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/occupancy.h"
#include "daemon/jobs/sched_view.h"
#include "pinpoint/escape.h"

namespace pinpoint::daemon {

namespace {

// Where a pass's time went, said in the log when a pass takes kSlowPassMs or more (at most once
// every kSlowPassLogEveryMs): what a site reads when requests stall. Wall time, not the node's
// clock (a test's fake clock stands still).
constexpr int64_t kSlowPassMs = 100;
constexpr int64_t kSlowPassLogEveryMs = 10000;

class PassTimer {
 public:
  void Mark(const char* phase) {
    auto now = std::chrono::steady_clock::now();
    phases_.emplace_back(
        phase, std::chrono::duration_cast<std::chrono::milliseconds>(now - last_).count());
    last_ = now;
  }
  // `logged_ms`: when the last such line was written (steady clock ms), updated here.
  void LogIfSlow(size_t jobs, size_t ended, int64_t* logged_ms) const {
    int64_t total = 0;
    for (const auto& [phase, ms] : phases_) total += ms;
    if (total < kSlowPassMs) return;
    int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
    if (now_ms - *logged_ms < kSlowPassLogEveryMs) return;
    *logged_ms = now_ms;
    std::string parts;
    for (const auto& [phase, ms] : phases_)
      parts += (parts.empty() ? "" : ", ") + std::string(phase) + " " + std::to_string(ms) + " ms";
    log::Warn("a pass took {} ms ({}; {} active jobs, {} ended)", total, parts, jobs, ended);
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<const char*, int64_t>> phases_;
};

}  // namespace

Node::Node(NodeOptions options, NodeDeps deps)
    : options_(std::move(options)),
      devices_(std::exchange(options_.inventory, {})),
      deps_(deps),
      sharing_(deps_.sharing),
      users_(deps_.users != nullptr ? deps_.users : &cached_system_users_) {
  // The scheduler places by each device's rules, which are its mode's backend's.
  for (sched::Device& d : devices_.devices) d.rules = sharing_->For(d.mode).Rules();
}

Status Node::Recover() {
  store::ListFilter filter;
  filter.states = {JobState::kPending, JobState::kRunning};
  auto jobs = deps_.store->List(filter);
  if (!jobs.ok()) return jobs.status();
  // The GPUs ended jobs' processes held when pinpointd stopped stay taken; so do those of jobs
  // found ended below, whose end the watcher never saw.
  PP_RETURN_IF_ERROR(watch_.BeginRecovery());
  int adopted = 0, ended = 0, requeued = 0, pending = 0;
  for (JobRecord& job : *jobs) {
    if (job.state == JobState::kPending) {
      if (OccupancyOf(job.kind).pending_is_starting)
        starting_leases_.insert(job.id);  // it still waits for its MPS daemon
      jobs_.Add(job);
      ++pending;
      continue;
    }
    // A lease has no supervisor: it is adopted as it is, and Step polls its cgroup.
    auto status = runner_.OccupantOf(job).Found(job);
    bool orphaned = status && status->kind == launch::ExitStatus::Kind::kOrphaned;
    if (!status || orphaned) {
      runner_.Adopt(jobs_.Add(job), orphaned);
      ++adopted;
      continue;
    }
    JobRecord& found = jobs_.Add(job);
    if (status->kind == launch::ExitStatus::Kind::kNeverLaunched) {
      runner_.Requeue(found, "was never launched before the daemon stopped", Reason::kRequeued);
      ++requeued;
    } else {
      std::string why = lifecycle::SupervisorsReason(*status);
      if (!why.empty()) log::Warn("job {}: ended while pinpointd was down: {}", job.id, why);
      runner_.Finish(found, *status);
      ++(found.state == JobState::kPending ? requeued : ended);  // --requeue: lost, queued again
    }
  }
  watch_.EndRecovery();
  log::Info("recovered: {} pending, {} running adopted, {} ended while down, {} requeued", pending,
            adopted, ended, requeued);
  dirty_ = true;
  return Status::Ok();
}

std::vector<JobId> Node::Step() {
  PassTimer timer;
  starts_left_ = false;
  deps_.launcher->Reap();
  jobs_.RetryUnpersistedEnds();
  int64_t now = deps_.clock->NowMs();
  runner_.Pass(now, [&](const char* part) { timer.Mark(part); });
  ExpireStartingLeases(now);
  if (runner_.TakeChanged()) dirty_ = true;
  // A MIG reconfiguration done, or an idle instance past its minimums for a slice that waits.
  if (deps_.mig != nullptr && (deps_.mig->Poll(devices_, now) || deps_.mig->TakeDue(now)))
    dirty_ = true;
  timer.Mark("leases and MIG");
  // A slice waiting for its user's MPS affinity window: due again when the window closes.
  if (recheck_at_ms_ && now >= *recheck_at_ms_) dirty_ = true;
  if (dirty_) Schedule();
  timer.Mark("schedule and starts");
  // Every job that ended in this pass, polled or failed to launch inside Schedule.
  std::vector<JobId> ended = jobs_.CollectEnded([&](const JobRecord& job) {
    ended_total_[{job.state, job.reason}] += 1;
    CountDisagreements(job);
    if (job.reason != Reason::kLaunchFailed) return;
    recent_failures_.Add({job.id, job.uid, job.array.array_id, job.request.name, job.end_ms}, now);
  });
  watch_.Update(jobs_);
  timer.Mark("ends reported");
  timer.LogIfSlow(jobs_.size(), ended.size(), &slow_pass_logged_ms_);
  return ended;
}

void Node::MarkUnavailable(sched::Inventory& inventory) const {
  for (int device : faults_.RecoveringDevices())
    inventory.devices.at(static_cast<size_t>(device)).drained = true;
  for (const auto& [device, why] : watch_.Drained(*users_))
    if (device >= 0 && static_cast<size_t>(device) < inventory.devices.size())
      inventory.devices[static_cast<size_t>(device)].drained = true;
}

std::set<int> Node::KeptDevices() const {
  std::set<int> kept;
  for (const auto& [id, job] : jobs_)
    if (job.state == JobState::kRunning && job.suspend.phase == SuspendPhase::kSuspended)
      for (const Allocation& a : job.allocations) kept.insert(a.device_index);
  return kept;
}

sched::Snapshot Node::SchedSnapshot(bool with_pending) {
  sched::Snapshot snap;
  snap.inventory = devices_;
  snap.now_ms = deps_.clock->NowMs();
  MarkUnavailable(snap.inventory);
  // A MIG placement drained for a waiting slice: its busy small instances take no new job. A
  // suspended job's never (a drain chosen before it was suspended): it resumes there.
  if (deps_.mig != nullptr) {
    std::set<int> kept = KeptDevices();
    for (int device : deps_.mig->HeldDevices(snap.inventory, deps_.clock->NowMs()))
      if (!kept.count(device))
        snap.inventory.devices.at(static_cast<size_t>(device)).drained = true;
  }
  snap.user_limits.defaults = options_.pass.default_user_limit;
  for (auto& [id, job] : jobs_) {
    if (!options_.pass.user_limits.empty() && !IsFinal(job.state)) {
      auto limit = options_.pass.user_limits.find(job.user);
      if (limit != options_.pass.user_limits.end())
        snap.user_limits.by_uid[job.uid] = limit->second;
    }
    if (job.state == JobState::kPending && !job.cancel_requested) {
      if (!with_pending) continue;
      // A held job cannot start, and its reason was given when it was held: it costs a pass
      // nothing, however many a user holds (unless a dependency could end it).
      if (job.hold != Hold::kNone && job.request.afterok.empty()) {
        if (job.reason != Reason::kHeld)
          lifecycle::Waiting(job, Reason::kHeld, sched::HeldDetail(job.id, job.hold));
        continue;
      }
      // So does a job already waiting on jobs that all run: none of them can end in this pass.
      if (dependencies_.WaitsOnRunningJobs(job)) continue;
      snap.pending.push_back(DemandOf(job, &options_.admission.qos));
      // An array's rest stands for its first pending tasks in a pass, the first under its own id:
      // a pass starts at most kArrayTasksPerPass of one array, the next pass the next ones.
      if (const RestTasks* tasks = jobs_.TasksOfRest(id)) {
        std::vector<JobId> ids = tasks->FirstIds(kArrayTasksPerPass);
        sched::Demand first = snap.pending.back();
        for (size_t i = 1; i < ids.size(); ++i) {
          snap.pending.push_back(first);
          snap.pending.back().id = ids[i];
        }
      }
      continue;
    }
    if (job.state != JobState::kRunning) continue;  // ended in this pass, erased after it
    sched::RunningJob rj;
    rj.id = id;
    rj.uid = job.uid;
    rj.cpus = job.request.cpus;
    rj.mem_bytes = job.request.mem_bytes + job.suspend.host_bytes;
    rj.array_id = job.array.array_id;
    rj.start_ms = job.start_ms;
    // A suspended job's GPUs are free for others; it asks for them back once it may resume.
    if (job.suspend.phase != SuspendPhase::kSuspended) {
      rj.slots = SlotsOf(job);
    } else if (job.suspend.resume && with_pending && !job.cancel_requested &&
               job.stop_reason == Reason::kNone) {
      snap.pending.push_back(ResumeDemandOf(job));
    }
    snap.running.push_back(std::move(rj));
  }
  for (sched::RunningJob& settling : watch_.SettlingJobs())
    snap.running.push_back(std::move(settling));
  if (deps_.watcher != nullptr) {  // how busy each GPU was of late, for spreading slices
    std::map<int, int> busy = deps_.watcher->BusyByGpu();
    for (auto& d : snap.inventory.devices)
      if (auto it = busy.find(d.gpu_index); it != busy.end()) d.busy_pct = it->second;
  }
  return snap;
}

void Node::CountDisagreements(const JobRecord& job) {
  for (const Enforcement& e : EnforcementOf(job)) {
    // The job's own doing: counted apart, never the node's alarm.
    if (e.verdict == "overridden") overrides_total_[e.resource] += 1;
    if (e.verdict != "disagrees") continue;
    disagreements_total_[e.resource] += 1;
    log::Warn("job {}: {} was asked as '{}', applied as '{}'", job.id, e.resource,
              EscapeForTerminal(e.asked), EscapeForTerminal(e.applied));
  }
}

void Node::Schedule() {
  dirty_ = false;
  recheck_at_ms_.reset();
  sched::Snapshot snap = SchedSnapshot(/*with_pending=*/true);
  reservation_.reset();
  if (snap.pending.empty()) {
    reclaim_since_.clear();
    return;
  }
  snap.dependencies = dependencies_.StatesFor(snap.pending);
  sched::Plan plan = sched::Schedule(snap);
  reservation_ = plan.reservation;
  recheck_at_ms_ = plan.recheck_at_ms;
  runner_.EndNeverStarting(plan.never_start);
  // The tasks placed that a rest still stands for become jobs of their own first; one the store
  // did not take stays in its rest, for a later pass.
  // The starts of one pass write at most about pass_record_bytes of records (the task records
  // taken out of rests, the starts, the pids): the others are placed again by the next pass.
  uint64_t start_bytes = 0;
  for (size_t i = 0; i < plan.starts.size(); ++i) {
    const JobRecord* job = nullptr;
    if (auto it = jobs_.find(plan.starts[i].id); it != jobs_.end()) job = &it->second;
    if (job == nullptr) job = jobs_.RestHolding(plan.starts[i].id);
    if (i > 0 && start_bytes >= options_.pass.pass_record_bytes) {
      plan.starts.resize(i);
      starts_left_ = true;
      dirty_ = true;
      break;
    }
    start_bytes += job != nullptr ? RecordBytes(*job) : 0;
  }
  // A suspended job placed again resumes on its GPUs: no start of a job.
  std::erase_if(plan.starts, [&](const sched::Start& start) {
    auto it = jobs_.find(start.id);
    if (it == jobs_.end() || it->second.state != JobState::kRunning) return false;
    runner_.Resume(it->second);
    return true;
  });
  std::vector<JobId> placed;
  for (const auto& start : plan.starts) {
    placed.push_back(start.id);
    // A rest's next tasks are the next pass's (kArrayTasksPerPass a pass).
    auto it = jobs_.find(start.id);
    if (it == jobs_.end() || IsArrayRest(it->second)) dirty_ = true;
  }
  std::vector<Status> taken =
      TakeOutTasks(jobs_, *deps_.store, placed, nullptr, 0, /*rests_whole=*/false);
  for (size_t i = plan.starts.size(); i-- > 0;)
    if (!taken[i].ok()) plan.starts.erase(plan.starts.begin() + static_cast<std::ptrdiff_t>(i));
  std::string holds_note = plan.waits.empty() ? "" : watch_.HoldsNote(*users_);
  for (const auto& wait : plan.waits) {
    auto it = jobs_.find(wait.id);
    if (it == jobs_.end() || it->second.state != JobState::kPending) continue;  // a resume
    lifecycle::Waiting(it->second, wait.reason, WaitDetail(wait, *users_, holds_note));
  }
  runner_.Start(plan.starts);
  PreemptFor(snap, plan);
  // The one-device slices still waiting: MIG instances made for them on mig-dynamic GPUs. The
  // MPS control daemon of an instance about to go quits first. A suspended job's instances are
  // kept, never destroyed nor drained: it resumes on them (its processes are restored to those
  // devices).
  if (deps_.mig != nullptr)
    for (int device : deps_.mig->Plan(devices_, MigWants(snap, plan), JobsByDevice(snap),
                                      deps_.clock->NowMs(), KeptDevices()))
      sharing_->ResetDevice(device);
}

}  // namespace pinpoint::daemon
