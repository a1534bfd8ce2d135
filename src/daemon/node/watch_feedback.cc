#include "daemon/node/watch_feedback.h"

#include <set>

#include "common/log.h"
#include "common/utc_time.h"
#include "daemon/jobs/enforcement.h"
#include "daemon/jobs/sched_view.h"

namespace pinpoint::daemon {

namespace {

// The job's cgroup as /proc/<pid>/cgroup names it: its directory below the cgroup2 mount.
std::string CgroupPath(const launch::Cgroups* cgroups, JobId id) {
  if (cgroups == nullptr || !cgroups->enabled()) return "";
  constexpr std::string_view kMount = "/sys/fs/cgroup";
  std::string dir = cgroups->JobDir(id);
  if (dir.rfind(kMount, 0) != 0) return "";
  return dir.substr(kMount.size());
}

// What the watcher read of a job's process (watch::JobSeen) into its read-back, each value
// bounded.
void Fill(Readback& back, const watch::JobSeen& seen) {
  back.env_read = seen.env_read;
  back.env.clear();
  for (const auto& [name, value] : seen.env) back.env[name] = Bounded(value);
  back.gpu_env_reads = seen.gpu_env_reads;
  back.gpu_env.clear();
  for (const auto& [name, values] : seen.gpu_env)
    for (const std::string& value : values) back.gpu_env[name].push_back(Bounded(value));
  back.gpus_seen = seen.gpus;
}

std::string PidList(const std::vector<int64_t>& pids) {
  std::string text;
  for (int64_t pid : pids) text += (text.empty() ? "" : ", ") + std::to_string(pid);
  return text;
}

}  // namespace

void WatchFeedback::Update(const JobTable& jobs) {
  if (watcher_ == nullptr) return;
  std::map<JobId, std::string> now;  // -> what tells its processes apart: pid, lease cgroup
  for (const auto& [id, job] : jobs)
    if (job.state == JobState::kRunning && !job.allocations.empty())
      now[id] = std::to_string(job.pid) + " " + job.lease_cgroup +
                (job.suspend.phase == SuspendPhase::kSuspended ? " suspended" : "");
  if (now == watched_) return;
  std::vector<watch::WatchedJob> watched;
  for (const auto& [id, pid] : now)
    watched.push_back(watch::WatchedJobOf(jobs.at(id), *inventory_, CgroupPath(cgroups_, id)));
  watcher_->SetJobs(std::move(watched));
  watched_ = std::move(now);
}

WatchFeedback::Found WatchFeedback::Apply(JobTable& jobs, int64_t now_ms) {
  Found found;
  if (watcher_ == nullptr) return found;
  watch::WatchUpdate update = watcher_->Take();
  for (const auto& [id, usage] : update.usage) {
    auto it = jobs.find(id);
    if (it != jobs.end() && it->second.state == JobState::kRunning) it->second.usage = usage;
  }
  for (const auto& [id, usage] : update.closed) SaveFinalUsage(jobs, id, usage);
  for (const auto& [id, seen] : update.seen) SaveSeen(jobs, id, seen);
  for (JobId id : update.settled) {
    auto it = settling_.find(id);
    if (it == settling_.end()) continue;
    found.settled = true;
    if (it->second.holding) {
      found.holds_changed = true;
      log::Info("job {}: its GPUs are free again", id);
      Status s = store_->AppendEvent(
          store::JobEvent{id, now_ms, "gpu-released", "no process holds its GPUs any more"});
      if (!s.ok()) log::Warn("job {}: {}", id, s.ToString());
    }
    if (it->second.stored) {
      Status s = store_->DeleteGpuHold(id);
      if (!s.ok()) log::Warn("job {}: cannot forget its GPU hold: {}", id, s.ToString());
    }
    settling_.erase(it);
  }
  if (NoteLingering(update.lingering, now_ms)) found.holds_changed = true;
  found.over_budget = std::move(update.over_budget);
  found.xids = std::move(update.xids);
  if (now_ms - last_usage_flush_ms_ < usage_flush_ms_) return found;
  last_usage_flush_ms_ = now_ms;
  for (const auto& [id, job] : jobs) {
    if (job.state != JobState::kRunning || job.usage.samples == 0) continue;
    Status s = store_->Update(job);
    if (!s.ok()) log::Warn("job {}: cannot record usage: {}", id, s.message());
  }
  return found;
}

void WatchFeedback::Settle(const JobRecord& job, int64_t now_ms) {
  if (watcher_ == nullptr || job.allocations.empty()) return;
  bool watched = watched_.count(job.id) > 0;
  if (!watched && !recovering_) return;
  settling_[job.id] = Settling{job.uid, SlotsOf(job), false, false, false, false, std::nullopt};
  // Ended while pinpointd was down: the watcher never saw it leave.
  if (!watched)
    watcher_->Resume(watch::WatchedJobOf(job, *inventory_, CgroupPath(cgroups_, job.id)), now_ms);
}

void WatchFeedback::Started(JobId id) {
  auto it = settling_.find(id);
  if (it == settling_.end()) return;
  if (it->second.stored) {
    Status s = store_->DeleteGpuHold(id);
    if (!s.ok()) log::Warn("job {}: cannot forget its GPU hold: {}", id, s.ToString());
  }
  settling_.erase(it);
}

Status WatchFeedback::BeginRecovery() {
  if (watcher_ == nullptr) return Status::Ok();
  recovering_ = true;
  auto holds = store_->GpuHolds();
  if (!holds.ok()) return holds.status();
  for (const auto& [id, since_ms] : *holds) {
    auto job = store_->Get(id);
    if (!job.ok() || !IsFinal(job->state) || job->allocations.empty()) {
      log::Info("job {}: its stored GPU hold is dropped: the job {}", id,
                job.ok() ? "runs again" : "is gone");
      Status s = store_->DeleteGpuHold(id);
      if (!s.ok()) log::Warn("job {}: cannot forget its GPU hold: {}", id, s.ToString());
      continue;
    }
    settling_[id] = Settling{job->uid, SlotsOf(*job), true, true, false, false, std::nullopt};
    watcher_->Resume(watch::WatchedJobOf(*job, *inventory_, CgroupPath(cgroups_, id)), since_ms);
    log::Info(
        "job {}: its GPUs were held by a process when pinpointd stopped; they stay taken until it "
        "is gone",
        id);
  }
  return Status::Ok();
}

std::vector<sched::RunningJob> WatchFeedback::SettlingJobs() const {
  std::vector<sched::RunningJob> running;
  for (const auto& [id, s] : settling_) running.push_back({id, s.uid, 0, 0, s.slots});
  return running;
}

std::vector<WatchFeedback::Hold> WatchFeedback::Holds() const {
  std::vector<Hold> holds;
  for (const auto& [id, s] : settling_) {
    if (!s.holding) continue;
    const watch::Lingering& left = *s.holding;
    Hold h{id,
           s.uid,
           {},
           left.gpu_of,
           !left.owned.empty(),
           left.since_ms,
           left.deadline_ms,
           !left.killed.empty(),
           left.unkillable};
    for (const sched::Slot& slot : s.slots) h.devices.push_back(slot.device_index);
    holds.push_back(std::move(h));
  }
  return holds;
}

std::string WatchFeedback::HoldsNote(UserDirectory& users) const {
  constexpr size_t kNamed = 3;
  std::vector<Hold> holds = Holds();
  std::string note;
  for (size_t i = 0; i < holds.size() && i < kNamed; ++i) {
    const Hold& h = holds[i];
    std::string devices, pids;
    for (int d : h.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
    for (const auto& [pid, gpu] : h.pids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
    note += (note.empty() ? "" : "; ") +
            std::string(h.devices.size() == 1 ? "device " : "devices ") + devices +
            (h.devices.size() == 1 ? " is" : " are") + " held by process " + pids + " of " +
            NameOrUid(users, h.uid);
    if (!h.unkillable.empty()) {
      note += ", left by job " + std::to_string(h.job) + ": it could not be killed (process " +
              PidList(h.unkillable) + "); drained until it exits";
      continue;
    }
    if (h.owned) {
      note += ", left by job " + std::to_string(h.job) + " (killed)";
      continue;
    }
    note +=
        ", in no job, since job " + std::to_string(h.job) + " ended at " + UtcTimeText(h.since_ms);
    if (h.killed)
      note += "; sent SIGKILL at the settle deadline";
    else if (h.deadline_ms >= 0)
      note += "; killed at " + UtcTimeText(h.deadline_ms) + " if still there";
  }
  if (holds.size() > kNamed)
    note += "; and " + std::to_string(holds.size() - kNamed) + " more held";
  return note;
}

std::map<int, std::string> WatchFeedback::Drained(UserDirectory& users) const {
  std::map<int, std::string> drained;
  for (const Hold& h : Holds()) {
    if (h.unkillable.empty()) continue;
    std::string why = "held by process " + PidList(h.unkillable) + " of " +
                      NameOrUid(users, h.uid) + ", left by job " + std::to_string(h.job) +
                      ", that pinpointd could not kill (set-user-id, or still there after "
                      "SIGKILL): drained until it exits";
    // The devices of the GPUs such a process is on: a job's other devices are only held.
    std::set<int> gpus;
    for (int64_t pid : h.unkillable)
      if (auto on = h.pids.find(pid); on != h.pids.end()) gpus.insert(on->second);
    for (int device : h.devices)
      if (device >= 0 && static_cast<size_t>(device) < inventory_->devices.size() &&
          gpus.count(inventory_->devices[static_cast<size_t>(device)].gpu_index))
        drained.emplace(device, why);
  }
  return drained;
}

bool WatchFeedback::NoteLingering(const std::map<JobId, watch::Lingering>& lingering,
                                  int64_t now_ms) {
  bool changed = false;
  for (const auto& [id, left] : lingering) {
    auto it = settling_.find(id);
    if (it == settling_.end()) continue;
    Settling& s = it->second;
    if (!s.holding || s.holding->gpu_of != left.gpu_of ||
        s.holding->killed.empty() != left.killed.empty() ||
        s.holding->unkillable != left.unkillable)
      changed = true;
    s.holding = left;
    if (!s.stored) {
      Status put = store_->PutGpuHold(id, left.since_ms);
      if (put.ok())
        s.stored = true;
      else
        log::Warn("job {}: cannot store its GPU hold (a restart would forget it): {}", id,
                  put.ToString());
    }
    if (!s.told) {
      s.told = true;
      std::string detail;
      if (!left.owned.empty())
        detail = "its process(es) " + PidList(left.owned) + " still hold its GPUs: killed";
      if (!left.loose.empty())
        detail += (detail.empty() ? "" : "; ") + std::string("process(es) ") + PidList(left.loose) +
                  " of uid " + std::to_string(s.uid) + ", in no job, hold its GPUs" +
                  (left.deadline_ms < 0
                       ? ""
                       : "; killed " + std::to_string((left.deadline_ms - left.since_ms) / 1000) +
                             " s after the job ended if still there (settle_deadline_s)");
      log::Warn("job {}: ended, but {}; its slots stay taken until they exit", id, detail);
      Status e = store_->AppendEvent(store::JobEvent{id, now_ms, "gpu-held", detail});
      if (!e.ok()) log::Warn("job {}: {}", id, e.ToString());
    }
    if (!left.unkillable.empty() && !s.unkillable_told) {
      s.unkillable_told = true;
      std::string detail = "process(es) " + PidList(left.unkillable) + " of uid " +
                           std::to_string(s.uid) +
                           " hold its GPUs and could not be killed (set-user-id, or still there " +
                           "after SIGKILL): its devices are drained until they exit";
      log::Warn("job {}: {}", id, detail);
      Status e = store_->AppendEvent(store::JobEvent{id, now_ms, "gpu-hold-unkillable", detail});
      if (!e.ok()) log::Warn("job {}: {}", id, e.ToString());
    }
    if (!left.killed.empty() && !s.killed_told) {
      s.killed_told = true;
      std::string detail =
          "process(es) " + PidList(left.killed) + " of uid " + std::to_string(s.uid) +
          ", in no job, held its GPUs past the settle deadline: sent SIGKILL (a process in no "
          "job on a managed node; docs/security.md)";
      log::Warn("job {}: {}", id, detail);
      Status e = store_->AppendEvent(store::JobEvent{id, now_ms, "gpu-hold-killed", detail});
      if (!e.ok()) log::Warn("job {}: {}", id, e.ToString());
    }
  }
  return changed;
}

void WatchFeedback::SaveSeen(JobTable& jobs, JobId id, const watch::JobSeen& seen) {
  // Read just before the job ended and handed over in a pass after: its record takes it still.
  // A job requeued since is read again in its next run.
  ChangeRecord(jobs, id, "what its process was given", [&](JobRecord& job) {
    if (job.state == JobState::kPending) return false;
    Fill(job.readback, seen);
    return true;
  });
}

void WatchFeedback::SaveFinalUsage(JobTable& jobs, JobId id, const JobUsage& usage) {
  // Requeued (or ended in this very pass): its record carries the usage forward.
  ChangeRecord(jobs, id, "its final usage", [&](JobRecord& job) {
    job.usage = usage;
    job.usage.final = IsFinal(job.state);
    return true;
  });
}

void WatchFeedback::ChangeRecord(JobTable& jobs, JobId id, const char* what,
                                 const std::function<bool(JobRecord&)>& change) {
  auto it = jobs.find(id);
  if (it != jobs.end()) {
    if (!change(it->second) || it->second.state == JobState::kRunning) return;
    Status s = store_->Update(it->second);
    if (!s.ok()) log::Warn("job {}: cannot record {}: {}", id, what, s.message());
    return;
  }
  auto stored = store_->Get(id);
  if (!stored.ok()) {
    log::Warn("job {}: {} not recorded: {}", id, what, stored.status().message());
    return;
  }
  if (!change(*stored)) return;
  Status s = store_->Update(*stored);
  if (!s.ok()) log::Warn("job {}: cannot record {}: {}", id, what, s.message());
  ++generation_;
}

}  // namespace pinpoint::daemon
