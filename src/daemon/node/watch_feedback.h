// WatchFeedback: the node's side of the watcher (watch/watcher.h). It tells the watcher which
// running jobs hold GPUs, writes the usage it measures into their records (to the store every
// usage_flush_ms, and a job's final usage once it has ended), keeps the slots of ended jobs whose
// processes may still be on their GPUs ("settling", until the watcher finds them gone) and hands
// Node what it must act on: budget breaches and the driver's Xids.
//
// A settling job whose GPUs a process still holds is a hold: stored (schema v8) from the first
// poll that finds the process until the GPUs are free, so a restart keeps the slots taken and the
// deadline (WatcherOptions::settle_deadline_ms) running from the job's end; and shown (Holds) in
// `pinpoint gpus`, the ended job's history and the waiting jobs' reasons.
//
// With no watcher every call does nothing. Not thread-safe: the daemon's main loop is its only
// caller.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/job_record.h"
#include "daemon/jobs/job_table.h"
#include "daemon/jobs/users.h"
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
      : watcher_(watcher),
        store_(store),
        cgroups_(cgroups),
        inventory_(inventory),
        usage_flush_ms_(usage_flush_ms) {}

  // Tells the watcher the running jobs of `jobs` that hold GPUs, when they changed since the
  // last call (a job's supervisor pid, lease cgroup or suspension counts as a change).
  void Update(const JobTable& jobs);

  // What the watcher found that Node acts on.
  struct Found {
    bool settled = false;                        // a settling job left its GPUs: its slots are free
    bool holds_changed = false;                  // a hold began, changed its processes or ended
    std::vector<watch::OverBudget> over_budget;  // breaches of jobs' device-memory budgets
    std::vector<std::pair<gpu::XidEvent, int64_t>> xids;  // critical Xids, with their poll's time
  };
  // Takes the watcher's news at now_ms: the usage of running jobs into their records, final
  // usage of ended or requeued ones into theirs (or into the store for jobs no longer in
  // `jobs`), settled jobs' slots freed, and processes still on an ended job's GPUs logged once.
  Found Apply(JobTable& jobs, int64_t now_ms);

  // `job`, watched until now, lets go of its GPUs at now_ms: its slots stay taken until the
  // watcher finds none of its processes (nor of its user in no job) on them. Nothing for an
  // unwatched job, except between BeginRecovery and EndRecovery (a job found ended at a restart:
  // the watcher is told of it then).
  void Settle(const JobRecord& job, int64_t now_ms);
  // `id` started again (a requeue): the watcher watches it as before, nothing settles.
  void Started(JobId id);
  // The settling jobs' slots, as running jobs for the scheduler's snapshot.
  std::vector<sched::RunningJob> SettlingJobs() const;

  // A restart: the holds stored before it settle again, each from its job's end (a job whose
  // record is gone, or that runs again, loses its hold). Until EndRecovery, Settle also takes
  // jobs the watcher was never told of. Errors: the store's, when the holds cannot be read.
  Status BeginRecovery();
  void EndRecovery() { recovering_ = false; }

  // A process that holds an ended job's GPUs, as the last poll saw it.
  struct Hold {
    JobId job = 0;
    uint32_t uid = 0;             // the job's user, whose process it is
    std::vector<int> devices;     // the job's devices, which stay taken
    std::map<int64_t, int> pids;  // the processes -> the NVML index each was seen on
    bool owned = false;           // the job's own (escaped its end): killed at once
    int64_t since_ms = 0;         // the job's end
    int64_t deadline_ms = -1;     // when its user's processes are killed; -1: never
    bool killed = false;          // they were sent SIGKILL (past the deadline)
    // Those that hold on although due to be killed: pinpointd may not kill them (set-user-id),
    // or they outlived their SIGKILL (watch::Lingering::unkillable). Their devices are drained.
    std::vector<int64_t> unkillable;
  };
  // Every hold, by job id.
  std::vector<Hold> Holds() const;
  // What a job waiting for devices is told of the holds, at most three named: "device 0 is held
  // by process 4242 of alice, in no job, since job 17 ended at ...; killed at ..."; "" with none.
  std::string HoldsNote(UserDirectory& users) const;
  // The devices held by a process that could not be killed (Hold::unkillable), each with why:
  // they take no job until it is gone.
  std::map<int, std::string> Drained(UserDirectory& users) const;
  // Changes when a final usage was stored for a job no longer in the table.
  int64_t generation() const { return generation_; }

 private:
  // Records each hold's news: stored at its first sight, logged and appended to the job's history
  // once at its first sight and once when its processes are killed. True when any changed.
  bool NoteLingering(const std::map<JobId, watch::Lingering>& lingering, int64_t now_ms);
  void SaveFinalUsage(JobTable& jobs, JobId id, const JobUsage& usage);
  // Applies `change` to job `id`'s record where it is: in the table (stored unless the job still
  // runs: its usage flush stores it), else in the store. `change` returns false to leave the
  // record as it is. `what` names the change in a warning.
  void ChangeRecord(JobTable& jobs, JobId id, const char* what,
                    const std::function<bool(JobRecord&)>& change);
  // What the watcher read of job `id`'s first process (its enforcement's "applied" on the GPU):
  // into its record while it runs, and into its stored record when it ended before the read was
  // handed over (its end's disagreement count has passed then: the record alone shows it).
  void SaveSeen(JobTable& jobs, JobId id, const watch::JobSeen& seen);

  watch::Watcher* watcher_;
  store::JobStore* store_;
  launch::Cgroups* cgroups_;
  const sched::Inventory* inventory_;
  int64_t usage_flush_ms_;
  std::map<JobId, std::string> watched_;  // jobs the watcher was last told of -> pid, lease cgroup
  struct Settling {
    uint32_t uid = 0;
    std::vector<sched::Slot> slots;
    bool stored = false;  // its hold is in the store (the first poll that found one)
    bool told = false;    // the hold was logged and put in the job's history (before a restart too)
    bool killed_told = false;                 // the kill past the deadline was logged
    bool unkillable_told = false;             // a holder that could not be killed was logged
    std::optional<watch::Lingering> holding;  // what the last poll found on its GPUs
  };
  std::map<JobId, Settling> settling_;
  bool recovering_ = false;
  int64_t last_usage_flush_ms_ = 0;
  int64_t generation_ = 0;
};

}  // namespace pinpoint::daemon
