// Placement policy: pure. Takes a snapshot of the node (inventory, running jobs, pending queue)
// and returns which pending jobs start where, and why the others wait. No I/O, no clock, no
// global state; the same snapshot always gives the same plan.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"
#include "sched/inventory.h"
#include "sched/user_limits.h"

namespace pinpoint::sched {

using JobId = int64_t;

// What a job needs, in scheduler terms (see pinpoint::JobRequest for the request syntax).
//   gpus=0                 no device
//   gpus=N, gpu_mem=0      N whole devices (never MIG instances), each empty and held exclusively
//   gpus=N, gpu_mem=M>0    a slice of M bytes (+ optional SM share) on each of N distinct devices
struct Demand {
  JobId id = 0;  // also the submission order: lower ids were submitted first
  uint32_t uid = 0;
  int priority = 0;  // higher first; ties by lower id
  int gpus = 0;
  uint64_t gpu_mem_bytes = 0;
  int gpu_share_pct = 0;  // 0: reserves no share (no SM cap)
  int cpus = 1;
  uint64_t mem_bytes = 0;  // host memory; 0 reserves none
  // A slice that must run alone on its device (a suspect rerun after an MPS fault): it takes only
  // an empty device and keeps others off it while it runs.
  bool isolated = false;
  // When not empty, exactly these device indices (one per GPU, distinct): a batch system chose
  // them. Such a demand waits for them and for nothing else.
  std::vector<int> devices;
  // Held (`pinpoint hold`): never started and never holds a reservation; it waits "held".
  Hold hold = Hold::kNone;
  // Jobs it waits for (JobRequest::after, afterok; sched/dependencies.h): until they are met it
  // is never started and never holds a reservation; it waits "dependency".
  std::vector<JobId> after = {};
  std::vector<JobId> afterok = {};
  // A task of job array `array_id` (0: none) with a %K limit (`array_limit`, 0: none): it does
  // not start while `array_limit` tasks of its array run, those started in the same pass
  // included; it then waits "array-limit" and holds no reservation.
  JobId array_id = 0;
  int array_limit = 0;
  // Only a MIG instance of this profile takes it (JobRequest::mig_profile); "": any device.
  std::string mig_profile = "";
};

// One device held by a job. gpu_mem_bytes == 0 means the whole device.
struct Slot {
  int device_index = 0;
  uint64_t gpu_mem_bytes = 0;
  int gpu_share_pct = 0;
  bool isolated = false;  // the device takes no other job while this slot holds it
};

struct RunningJob {
  JobId id = 0;
  uint32_t uid = 0;
  int cpus = 0;
  uint64_t mem_bytes = 0;
  std::vector<Slot> slots;
  JobId array_id = 0;    // the job array it is a task of; 0: none
  int64_t start_ms = 0;  // when it started (the MPS affinity window); 0: long ago
};

struct Snapshot {
  Inventory inventory;
  std::vector<RunningJob> running;
  std::vector<Demand> pending;  // any order
  // The state of each job a pending demand depends on that is not itself in `pending`: running,
  // or how it ended. An id in neither is a job the store no longer has (JudgeDependencies).
  std::map<JobId, JobState> dependencies = {};
  UserLimits user_limits = {};  // none by default
  // The pass's time, for the MPS affinity window (Inventory::mps_affinity_ms); 0: no window.
  int64_t now_ms = 0;
};

struct Start {
  JobId id = 0;
  std::vector<Slot> slots;  // one per requested GPU, on distinct devices; empty for gpus=0
};

// Why a pending job was not started in this pass:
//   kResources       not enough free devices/memory/share/clients right now
//   kMpsUser         the only devices that could take it serve another Unix user's MPS clients
//   kHostResources   not enough free host CPUs or memory
//   kReservation     resources are held back for an earlier (higher-priority) job
//   kHeld            the job is held (Demand::hold); detail from HeldDetail
//   kDependency      a job it depends on has not ended (or completed); detail names it
//   kUserLimit       starting it would take its user past a user limit; detail names the limit
//   kArrayLimit      its job array already runs its %K tasks (Demand::array_limit)
// `detail` is one sentence for people, e.g. "GPU 0 MPS server belongs to uid 1001", "needs 2
// empty GPUs, 1 free", "devices it could use are held for job 17". The job holding the pass's
// reservation has its own reason, and its detail ends "; GPU 0, GPU 1 held for it".
// When both devices and host fall short, the reason names the devices.
struct Wait {
  JobId id = 0;
  Reason reason = Reason::kResources;
  std::string detail;
  std::optional<uint32_t> mps_uid;  // reason kMpsUser: the uid whose MPS server holds the device
};

// What one pass held back for the first pending job (in order) that could not start.
struct Reservation {
  JobId id = 0;
  std::vector<int> device_indices;  // ascending; took no later job; empty for gpus=0
  int cpus = 0;                     // host CPUs held back from later jobs
  uint64_t mem_bytes = 0;           // host memory held back from later jobs
};

struct Plan {
  std::vector<Start> starts;  // in the order they should be launched
  std::vector<Wait> waits;    // one per pending job not started, in the order considered
  std::optional<Reservation> reservation;  // none when no job was blocked (or none could hold)
  // Pending jobs that can never start: a job in their afterok ended without completing. Reason
  // Reason::kDependencyNeverSatisfied, and a detail naming that job; the daemon ends them
  // (cancelled). In ascending id order; they are in no other list.
  std::vector<Wait> never_start = {};
  // When a slice waits for its user's MPS affinity window to close: the time it closes, when a
  // pass should run again whether or not anything else changed.
  std::optional<int64_t> recheck_at_ms = std::nullopt;
};

// Computes the placement plan. Policy (for people: docs/scheduling.md):
//  - Pending jobs are taken by priority (desc), then id (asc); the order of `pending` does not
//    matter. Held jobs are passed over: they wait "held", start nothing and reserve nothing.
//  - Dependencies (JudgeDependencies, sched/dependencies.h) come first: a job that can never
//    start goes to never_start (held or not); one whose dependencies are not met is passed over
//    as a held job is, waiting "dependency".
//  - A task of a job array that already runs its %K tasks is passed over, waiting "array-limit".
//  - User limits (snapshot.user_limits): a job that would take its user past running_jobs or
//    gpu_mem, counting the user's running jobs and those started earlier in the pass, is passed
//    over, waiting "user-limit", and reserves nothing. A whole-GPU job counts the memory of the
//    GPUs it would take.
//  - Slices go best-fit: onto the device where they fit leaving the least free memory, preferring
//    devices already shared, MIG instances and partially used GPUs, so empty whole GPUs stay free
//    for whole-GPU and multi-GPU jobs. Whole GPUs: the lowest-index empty non-MIG devices.
//  - MPS serves one user per GPU (kAuto, one-device slices): empty GPUs are shared out between
//    the users with slices, a fair share each (the GPUs that take slices over the users running
//    or waiting with them). A slice whose user holds its share or more does not take an empty
//    GPU that another user below their share waits for; it goes to its user's GPUs or waits.
//    And for Inventory::mps_affinity_ms after a user's first slice starts (the affinity window),
//    the user's next slices do not take another empty GPU: they wait for the window to close
//    (Plan::recheck_at_ms), so that a user who arrives a moment later gets one.
//  - Each device follows its sharing::PlacementRules (Device::rules), never its mode: at most
//    max_jobs jobs; with one_user, one uid at a time (the uid of the first running or placed job
//    on it); with whole_device, one job; a whole-GPU slot fills any device.
//  - Sum of slice memory <= device memory, sum of shares <= 100, host cpus/mem respected.
//    Drained devices take nothing new.
//  - No starvation: the first job in order that cannot start gets a reservation of the devices
//    (and host resources) it would use when they drain; later jobs may only start (backfill) on
//    devices and host resources that the reservation does not need. Only that one job holds a
//    reservation per pass; a job that CheckFits refuses never holds one (it waits "resources"
//    with CheckFits' sentence as detail).
// Running jobs' slots that name no device of the inventory are ignored.
// Cost: O(pending x devices) in the worst case, with O(1) work per device; repeated job shapes
// behind a node that is full cost one scan per shape.
Plan Schedule(const Snapshot& snapshot);

// Places `demand` alone, now, by Schedule's rules (a lease: placed at once or never), against the
// running jobs of `snapshot` and `held`, the reservation of the last pass, which it never takes.
// No pending demand starts or waits because of it, but they count as in a pass for the empty
// GPUs (slice_placement auto): a slice placed alone takes no empty GPU that waiting whole-GPU
// jobs or keep_empty_gpus keep while another device takes it, nor one that another user below
// their fair share waits for once its user holds theirs (`demand`'s own record, if it is in
// `pending`, counts once). Where Schedule would make a slice wait for its user's affinity window,
// it goes to its user's GPUs, and to an empty one only where none has room. Returns the start,
// or the wait saying why not (a demand placed alone reserves nothing). Held demands wait "held";
// the demand's own dependencies and array limit are not looked at (the snapshot's `dependencies`
// decide which pending demands count). Cost: O(pending) and one device scan.
std::variant<Start, Wait> PlaceOne(const Snapshot& snapshot, const Demand& demand,
                                   const std::optional<Reservation>& held);

// The detail of a held job's wait: "held by its owner: pinpoint release 12" or "held by root:
// only root can release it".
std::string HeldDetail(JobId id, Hold hold);

// Whether `demand` alone fits its user's `limit` (gpu_mem; a whole-GPU demand counts at least
// its number of the smallest GPUs in service). Errors: kFailedPrecondition with a sentence
// ("needs 160GiB of device memory in all, more than the 80GiB its user may hold at once
// (user_limits gpu_mem)").
Status CheckUserLimit(const Demand& demand, const UserLimit& limit, const Inventory& inventory);

// Whether `demand` could run on this node when it is empty. Errors: kFailedPrecondition with a
// sentence naming what is lacking ("needs 3 whole GPUs, this node has 2"). Drained devices count
// as absent.
Status CheckFits(const Demand& demand, const Inventory& inventory);

}  // namespace pinpoint::sched
