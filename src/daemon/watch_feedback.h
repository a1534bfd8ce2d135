// WatchFeedback: the node's side of the watcher (watch/watcher.h). It tells the watcher which
// running jobs hold GPUs, writes the usage it measures into their records (to the store every
// usage_flush_ms, and a job's final usage once it has ended), keeps the slots of ended jobs whose
// processes may still be on their GPUs ("settling", until the watcher finds them gone) and hands
// Node what it must act on: budget breaches and the driver's Xids.
//
// With no watcher every call does nothing. Not thread-safe: the daemon's main loop is its only
// caller.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/job_table.h"
#include "launch/cgroup.h"
#include "sched/inventory.h"
#include "sched/placement.h"
#include "store/job_store.h"
#include "watch/watcher.h"

namespace pinpoint::daemon {

class WatchFeedback {
 public:
  // Not owned; each must outlive it. `watcher` and `cgroups` may be null. `inventory` is the
  // node's (device indices -> GPUs).
  WatchFeedback(watch::Watcher* watcher, store::JobStore* store, launch::Cgroups* cgroups,
                const sched::Inventory* inventory, int64_t usage_flush_ms)
      : watcher_(watcher), store_(store), cgroups_(cgroups), inventory_(inventory),
        usage_flush_ms_(usage_flush_ms) {}

  // Tells the watcher the running jobs of `jobs` that hold GPUs, when they changed since the
  // last call (a job's supervisor pid or lease cgroup counts as a change).
  void Update(const JobTable& jobs);

  // What the watcher found that Node acts on.
  struct Found {
    bool settled = false;                        // a settling job left its GPUs: its slots are free
    std::vector<watch::OverBudget> over_budget;  // breaches of jobs' device-memory budgets
    std::vector<std::pair<gpu::XidEvent, int64_t>> xids;  // critical Xids, with their poll's time
  };
  // Takes the watcher's news at now_ms: the usage of running jobs into their records, final
  // usage of ended or requeued ones into theirs (or into the store for jobs no longer in
  // `jobs`), settled jobs' slots freed, and processes still on an ended job's GPUs logged once.
  Found Apply(JobTable& jobs, int64_t now_ms);

  // `job`, watched until now, lets go of its GPUs: its slots stay taken until the watcher finds
  // none of its processes (nor of its user in no job) on them. Nothing for an unwatched job.
  void Settle(const JobRecord& job);
  // `id` started again (a requeue): the watcher watches it as before, nothing settles.
  void Started(JobId id) { settling_.erase(id); }
  // The settling jobs' slots, as running jobs for the scheduler's snapshot.
  std::vector<sched::RunningJob> SettlingJobs() const;
  // Changes when a final usage was stored for a job no longer in the table.
  int64_t generation() const { return generation_; }

 private:
  void LogLingering(const std::map<JobId, watch::Lingering>& lingering);
  void SaveFinalUsage(JobTable& jobs, JobId id, const JobUsage& usage);

  watch::Watcher* watcher_;
  store::JobStore* store_;
  launch::Cgroups* cgroups_;
  const sched::Inventory* inventory_;
  int64_t usage_flush_ms_;
  std::map<JobId, std::string> watched_;  // jobs the watcher was last told of -> pid, lease cgroup
  struct Settling {
    uint32_t uid = 0;
    std::vector<sched::Slot> slots;
    bool told = false;  // what holds them was logged
  };
  std::map<JobId, Settling> settling_;
  int64_t last_usage_flush_ms_ = 0;
  int64_t generation_ = 0;
};

}  // namespace pinpoint::daemon
