// MigDynamic: the GPUs in mig-dynamic mode (issue 26; docs/scheduling.md "Dynamic MIG"). After a
// scheduling pass it plans their MIG layout for the one-device slices still waiting
// (sched::mig::PlanLayout) and carries the plan out on a thread of its own, one reconfiguration at
// a time: the main loop never waits on the driver. When that thread is done (WaitFd readable),
// Poll reads the layout it found afterwards into the inventory's slots (mig_slots.h) and records
// every change in the store (store::MigChange), so that a restart resumes: it adopts the
// instances it finds, makes nothing that exists, and counts each one's lifetime from its create.
//
// What it never does: touch an instance a job runs on (the planner never picks one, the slot of an
// instance it destroys is vacant from the plan on so no pass places a job there, and the backend
// refuses while a process runs there), or change a GPU's MIG mode.
//
// Not thread-safe: the main loop is its only caller. The thread it starts uses only the backend.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/mig/drain_clock.h"
#include "gpu/gpu_backend.h"
#include "pinpoint/job.h"
#include "sched/inventory.h"
#include "sched/mig_layout.h"
#include "sched/placement.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

// The one-device slices of a pass that still wait for room (resources, mps-user, reservation), in
// the order the pass considered them: what an instance made for them could serve. At most
// kMigWantsPerPass, so that a plan costs the same however many slices a user queues (a node has
// a few dozen instances at most).
inline constexpr size_t kMigWantsPerPass = 256;
std::vector<sched::mig::Want> MigWants(const sched::Snapshot& snapshot, const sched::Plan& plan);
// Running jobs per device index.
std::map<int, int> JobsByDevice(const sched::Snapshot& snapshot);

class MigDynamic {
 public:
  struct Gpu {
    int index = 0;  // NVML index
    sched::mig::Model model;
  };
  struct Options {
    sched::mig::Options plan;              // an instance's minimum idle time and lifetime
    int64_t deadline_ms = 120'000;         // a reconfiguration running longer is said, once
    int64_t retry_ms = 30'000;             // after a change failed, the next plan waits this long
    partition::MemoryReserve mem_reserve;  // config gpu_mem_reserve_bytes, as the slots have it
    // Once the plan's drain (sched::mig::Drain: a placement emptied for a waiting slice no
    // instance serves) has held this long for the same job, the slots in its placement take no
    // new job (HeldDevices), so busy small instances cannot starve it for ever. Config
    // mig_drain_after_s.
    int64_t drain_after_ms = 60'000;
  };
  // The latest changes kept for `gpus` and metrics.
  static constexpr size_t kRecentChanges = 32;

  // `backend` is used from the reconfiguration thread only, one call at a time: an instance no
  // other thread uses (NvmlBackend), or one safe across threads (SimulatedBackend). `store` may be
  // null (nothing recorded).
  MigDynamic(std::vector<Gpu> gpus, gpu::GpuBackend* backend, store::JobStore* store,
             Options options);
  ~MigDynamic();  // waits for a reconfiguration in flight: a driver call cannot be abandoned
  MigDynamic(const MigDynamic&) = delete;
  MigDynamic& operator=(const MigDynamic&) = delete;

  // Adopts the layout `gpus` (the backend's inventory) shows: refills the slots of `inventory`
  // and takes each instance as made when the store's last create of its MIG device says (one it
  // did not make: now) and idle from now. Called at start, before any Plan.
  Status Resume(const std::vector<gpu::GpuInfo>& gpus, sched::Inventory& inventory, int64_t now_ms);

  // After a pass: plans for `wants` with the running jobs `jobs_by_device`, keeping the instances
  // of the devices in `kept` (a suspended job's: sched::mig::Instance::kept). When the plan changes
  // the layout and no reconfiguration is in flight (nor a retry pending), starts one: the slots of
  // the instances it destroys become vacant in `inventory` at once. Returns those slots' device
  // indices (their MPS control daemons are to quit).
  std::vector<int> Plan(sched::Inventory& inventory, const std::vector<sched::mig::Want>& wants,
                        const std::map<int, int>& jobs_by_device, int64_t now_ms,
                        const std::set<int>& kept = {});

  // Takes a finished reconfiguration: records its changes, refills the slots of `inventory` from
  // the layout read after it. True when a reconfiguration finished (a pass is due). Never waits.
  bool Poll(sched::Inventory& inventory, int64_t now_ms);
  // The device indices of `inventory`'s slots that take no new job at now_ms: those whose instance
  // lies in the placement the latest plan drains for a waiting slice, once that drain has held
  // for drain_after_ms (an instance of the drained profile at the drained placement, the one
  // being made for it, is never held). Empty while nothing drains.
  std::vector<int> HeldDevices(const sched::Inventory& inventory, int64_t now_ms) const;
  // The waiting slice the drain holds its placement for at now_ms (HeldDevices not empty), or 0.
  JobId HoldingFor(int64_t now_ms) const {
    return drain_ && now_ms - drain_since_ms_ >= options_.drain_after_ms ? drain_->for_job : 0;
  }

  // Readable when a reconfiguration finished; -1 when none is in flight.
  int WaitFd() const { return in_flight_ ? event_fd_ : -1; }
  // When a pass is due though nothing else changed (an idle instance passes its minimums, a retry
  // waits): 0 for never.
  int64_t DueMs() const { return due_ms_; }
  // True once when DueMs has come (then none is due until a Plan says again).
  bool TakeDue(int64_t now_ms) {
    if (due_ms_ == 0 || now_ms < due_ms_) return false;
    due_ms_ = 0;
    return true;
  }

  const std::deque<store::MigChange>& recent() const { return recent_; }
  // Changes made and failed since the start, by action.
  const std::map<partition::MigAction, int64_t>& made() const { return made_; }
  const std::map<partition::MigAction, int64_t>& failed() const { return failed_; }
  bool overdue() const { return overdue_; }
  // The instances of each GPU now, by profile.
  std::map<std::pair<int, std::string>, int> InstanceCounts() const;
  const std::vector<Gpu>& gpus() const { return gpus_; }

 private:
  struct Instance {
    std::string uuid;
    std::string profile;
    uint32_t id = 0;
    int64_t created_ms = 0;
    int64_t idle_since_ms = 0;
  };
  struct Outcome {
    std::vector<store::MigChange> changes;
    Result<std::vector<gpu::GpuInfo>> layout = Unavailable("not read");
  };

  Status Adopt(const std::vector<gpu::GpuInfo>& gpus, sched::Inventory& inventory, int64_t now_ms);
  void StartThread(std::vector<store::MigChange> changes, int64_t now_ms);  // one at a time
  void Run(std::vector<store::MigChange> changes);                          // the thread
  int64_t NextEligibleMs(int64_t now_ms) const;
  void NoteDrain(const std::optional<sched::mig::Drain>& drain,
                 const std::vector<sched::mig::Want>& wants, int64_t now_ms);

  std::vector<Gpu> gpus_;
  gpu::GpuBackend* backend_;
  store::JobStore* store_;
  Options options_;
  int event_fd_ = -1;
  std::map<std::pair<int, int>, Instance> instances_;  // by (GPU, placement start)
  std::map<std::string, int64_t> created_by_uuid_;     // the store's creates, read at Resume
  std::optional<sched::mig::Drain> drain_;             // the latest plan's
  int64_t drain_since_ms_ = 0;                         // since when it drains for its job
  DrainClock drain_clock_;                             // by the slice drained for
  bool in_flight_ = false;
  int64_t started_ms_ = 0;
  bool overdue_ = false;
  std::thread worker_;
  std::atomic<bool> done_{false};
  std::unique_ptr<Outcome> outcome_;  // the worker's until done_, then the loop's
  int64_t due_ms_ = 0;
  int64_t retry_after_ms_ = 0;
  bool stale_ = false;  // the last read of the layout failed: the next Plan reads it again
  std::deque<store::MigChange> recent_;
  std::map<partition::MigAction, int64_t> made_;
  std::map<partition::MigAction, int64_t> failed_;
};

}  // namespace pinpoint::daemon
