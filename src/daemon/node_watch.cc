// Node's side of the watcher: telling it which jobs run, and acting on what it finds.

#include "common/log.h"
#include "daemon/node.h"
#include "pinpoint/units.h"

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

}  // namespace

void Node::UpdateWatchedJobs() {
  if (deps_.watcher == nullptr) return;
  std::map<JobId, std::string> now;  // -> what tells its processes apart: pid, lease cgroup
  for (const auto& [id, job] : jobs_)
    if (job.state == JobState::kRunning && !job.allocations.empty())
      now[id] = std::to_string(job.pid) + " " + job.lease_cgroup;
  if (now == watched_) return;
  std::vector<watch::WatchedJob> jobs;
  for (const auto& [id, pid] : now)
    jobs.push_back(watch::WatchedJobOf(jobs_.at(id), options_.inventory, CgroupPath(deps_.cgroups, id)));
  deps_.watcher->SetJobs(std::move(jobs));
  watched_ = std::move(now);
}

void Node::ApplyWatch() {
  if (deps_.watcher == nullptr) return;
  watch::WatchUpdate update = deps_.watcher->Take();
  for (const auto& [id, usage] : update.usage) {
    auto it = jobs_.find(id);
    if (it != jobs_.end() && it->second.state == JobState::kRunning) it->second.usage = usage;
  }
  for (const auto& [id, usage] : update.closed) SaveFinalUsage(id, usage);
  for (JobId id : update.settled) {
    if (settling_.erase(id) > 0) dirty_ = true;
  }
  ApplyLingering(update.lingering);
  // An Xid is the driver's word on a GPU: it confirms MPS fault claims of every device on it.
  for (const auto& [xid, time_ms] : update.xids) {
    log::Warn("GPU {}: critical Xid {} reported by the driver", xid.index, xid.xid);
    for (const auto& d : options_.inventory.devices) {
      if (d.gpu_index == xid.index) faults_.Xid(d.index, time_ms);
    }
  }
  for (const auto& over : update.over_budget) {
    auto it = jobs_.find(over.id);
    if (it != jobs_.end()) StopOverBudget(it->second, over);
  }
  int64_t now = deps_.clock->NowMs();
  if (now - last_usage_flush_ms_ < options_.usage_flush_ms) return;
  last_usage_flush_ms_ = now;
  for (const auto& [id, job] : jobs_) {
    if (job.state != JobState::kRunning || job.usage.samples == 0) continue;
    Status s = deps_.store->Update(job);
    if (!s.ok()) log::Warn("job {}: cannot record usage: {}", id, s.message());
  }
}

void Node::ApplyLingering(const std::map<JobId, watch::Lingering>& lingering) {
  for (const auto& [id, left] : lingering) {
    auto it = settling_.find(id);
    if (it == settling_.end()) continue;
    Settling& s = it->second;
    if (s.told) continue;
    s.told = true;
    auto pids = [](const std::vector<int64_t>& list) {
      std::string text;
      for (int64_t pid : list) text += (text.empty() ? "" : ", ") + std::to_string(pid);
      return text;
    };
    if (!left.owned.empty())
      log::Warn("job {}: ended, but its process(es) {} still hold its GPUs: killed by the watcher; its slots stay taken until they exit",
                id, pids(left.owned));
    if (!left.loose.empty())
      log::Warn("job {}: ended, but process(es) {} of uid {}, in no job, hold its GPUs; its slots stay taken until they exit",
                id, pids(left.loose), s.uid);
  }
}

void Node::SaveFinalUsage(JobId id, const JobUsage& usage) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    // Requeued (or ended in this very pass): its record carries the usage forward.
    JobUsage u = usage;
    u.final = IsFinal(it->second.state);
    it->second.usage = u;
    if (it->second.state != JobState::kRunning) {
      Status s = deps_.store->Update(it->second);
      if (!s.ok()) log::Warn("job {}: cannot record usage: {}", id, s.message());
    }
    return;
  }
  auto stored = deps_.store->Get(id);
  if (!stored.ok()) {
    log::Warn("job {}: final usage not recorded: {}", id, stored.status().message());
    return;
  }
  stored->usage = usage;
  stored->usage.final = IsFinal(stored->state);
  Status s = deps_.store->Update(*stored);
  if (!s.ok()) log::Warn("job {}: cannot record final usage: {}", id, s.message());
  ++generation_;
}

void Node::StopOverBudget(JobRecord& job, const watch::OverBudget& over) {
  if (job.state != JobState::kRunning) return;
  std::string who = over.processes == 1 ? "its process" : "its " + std::to_string(over.processes) + " processes";
  std::string detail = who + " used " + FormatSize(over.used_bytes) + " of device memory on GPU " +
                       std::to_string(over.gpu_index) + ", over its " + FormatSize(over.budget_bytes);
  StopJob(job, Reason::kGpuMemExceeded, std::move(detail));
}

}  // namespace pinpoint::daemon
