#include "daemon/watch_feedback.h"

#include "common/log.h"
#include "daemon/sched_view.h"

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
      now[id] = std::to_string(job.pid) + " " + job.lease_cgroup;
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
  for (JobId id : update.settled) {
    if (settling_.erase(id) > 0) found.settled = true;
  }
  LogLingering(update.lingering);
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

void WatchFeedback::Settle(const JobRecord& job) {
  if (watcher_ == nullptr || !watched_.count(job.id) || job.allocations.empty()) return;
  settling_[job.id] = Settling{job.uid, SlotsOf(job)};
}

std::vector<sched::RunningJob> WatchFeedback::SettlingJobs() const {
  std::vector<sched::RunningJob> running;
  for (const auto& [id, s] : settling_) running.push_back({id, s.uid, 0, 0, s.slots});
  return running;
}

void WatchFeedback::LogLingering(const std::map<JobId, watch::Lingering>& lingering) {
  for (const auto& [id, left] : lingering) {
    auto it = settling_.find(id);
    if (it == settling_.end() || it->second.told) continue;
    it->second.told = true;
    if (!left.owned.empty())
      log::Warn("job {}: ended, but its process(es) {} still hold its GPUs: killed by the watcher; its slots stay taken until they exit",
                id, PidList(left.owned));
    if (!left.loose.empty())
      log::Warn("job {}: ended, but process(es) {} of uid {}, in no job, hold its GPUs; its slots stay taken until they exit",
                id, PidList(left.loose), it->second.uid);
  }
}

void WatchFeedback::SaveFinalUsage(JobTable& jobs, JobId id, const JobUsage& usage) {
  auto it = jobs.find(id);
  if (it != jobs.end()) {
    // Requeued (or ended in this very pass): its record carries the usage forward.
    JobUsage u = usage;
    u.final = IsFinal(it->second.state);
    it->second.usage = u;
    if (it->second.state != JobState::kRunning) {
      Status s = store_->Update(it->second);
      if (!s.ok()) log::Warn("job {}: cannot record usage: {}", id, s.message());
    }
    return;
  }
  auto stored = store_->Get(id);
  if (!stored.ok()) {
    log::Warn("job {}: final usage not recorded: {}", id, stored.status().message());
    return;
  }
  stored->usage = usage;
  stored->usage.final = IsFinal(stored->state);
  Status s = store_->Update(*stored);
  if (!s.ok()) log::Warn("job {}: cannot record final usage: {}", id, s.message());
  ++generation_;
}

}  // namespace pinpoint::daemon
