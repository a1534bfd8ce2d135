#include "sched/placement.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "sched/array_limits.h"
#include "sched/dependencies.h"
#include "sched/device_scan.h"
#include "sched/mps_shares.h"
#include "sched/node_limits.h"
#include "sched/node_state.h"
#include "sched/reservation.h"
#include "sched/user_usage.h"
#include "sched/wait_detail.h"

namespace pinpoint::sched {

namespace {

// The parts of a Demand that decide its outcome. Within one pass, two demands with the same key
// get the same result as long as the node state has not changed between them, which lets a
// queue of thousands of similar jobs behind a full node cost one device scan per shape.
struct ShapeKey {
  int gpus = 0;
  uint64_t gpu_mem_bytes = 0;
  int gpu_share_pct = 0;
  uint32_t uid = 0;  // only slices depend on it (MPS user rule)
  int cpus = 0;
  uint64_t mem_bytes = 0;
  std::vector<int> devices;
  bool operator==(const ShapeKey&) const = default;
};

ShapeKey KeyOf(const Demand& d) {
  ShapeKey key{d.gpus, d.gpu_mem_bytes, d.gpu_share_pct, d.uid, d.cpus, d.mem_bytes, d.devices};
  if (d.gpus == 0 || d.gpu_mem_bytes == 0) {
    key.gpu_share_pct = 0;
    key.uid = 0;
  }
  if (d.gpus == 0) {
    key.gpu_mem_bytes = 0;
  }
  return key;
}

struct ShapeHash {
  size_t operator()(const ShapeKey& k) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t v : {uint64_t(k.gpus), k.gpu_mem_bytes, uint64_t(k.gpu_share_pct),
                       uint64_t(k.uid), uint64_t(k.cpus), k.mem_bytes}) {
      h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    for (int v : k.devices) h ^= uint64_t(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
  }
};

struct CachedWait {
  uint64_t generation = 0;
  Reason reason = Reason::kNone;
  std::string detail;
  std::optional<uint32_t> mps_uid;
};

// One Schedule call. State only ever shrinks during a pass (placements and the reservation take
// capacity, nothing frees it), so `generation_` counts those changes to validate the cache.
class Pass {
 public:
  explicit Pass(const Snapshot& snapshot)
      : snapshot_(snapshot),
        state_(snapshot),
        limits_(snapshot.inventory),
        users_(snapshot),
        arrays_(snapshot.running) {}

  Plan Run();
  std::variant<Start, Wait> RunOne(const Demand& demand, const std::optional<Reservation>& held);

 private:
  void Consider(const Demand& demand);
  void StartOn(const Demand& demand, const std::vector<int>& devices);
  Wait Diagnose(const Demand& demand, const DeviceScan& scan, bool devices_ok, HostFit host) const;
  void Reserve(const Demand& demand, Wait* wait);
  // kAuto: what waiting whole-GPU jobs need of the empty GPUs, and how the others are shared out
  // between users (MpsShares). `alone`: a demand placed alone (RunOne), counted with the pending
  // ones, in place of its own record among them.
  void CountEmptyGpuDemand(const std::map<JobId, DependencyVerdict>& verdicts,
                           const Demand* alone = nullptr);
  // A slice that waits for its user's affinity window, or for a share of the empty GPUs.
  bool WaitsForShare(const Demand& demand, EmptyGpuUse use, const DeviceScan& scan,
                     bool devices_ok);
  std::string HeldFor() const { return "held for job " + std::to_string(plan_.reservation->id); }

  const Snapshot& snapshot_;
  NodeState state_;
  NodeLimits limits_;
  UserUsage users_;
  ArrayLimits arrays_;
  std::vector<SliceRank> ranks_;
  std::unordered_map<ShapeKey, CachedWait, ShapeHash> cache_;
  uint64_t generation_ = 0;
  Plan plan_;
  bool may_reserve_ = true;  // false when one demand is placed alone (PlaceOne)
  // What waiting demands need of the empty GPUs (kAuto): GPUs for whole-GPU and isolated jobs;
  // and the users' shares of them.
  int whole_need_ = 0;
  std::optional<MpsShares> shares_;
};

// Needs an empty device of its own: a whole-GPU or isolated demand the scheduler places.
bool NeedsEmptyGpus(const Demand& d) {
  return d.gpus > 0 && d.devices.empty() && (d.gpu_mem_bytes == 0 || d.isolated);
}

void Pass::CountEmptyGpuDemand(const std::map<JobId, DependencyVerdict>& verdicts,
                               const Demand* alone) {
  if (snapshot_.inventory.slice_placement != SlicePlacement::kAuto) return;
  // What may start in this pass: not held, its dependencies met, within its array's %K (an
  // array of 100 tasks at %2 needs two GPUs, not 100) and its user's limits. What cannot start
  // keeps no GPU from anyone.
  std::vector<const Demand*> startable;
  std::map<JobId, int> array_taken;
  auto count = [&](const Demand& d) {
    auto verdict = verdicts.find(d.id);
    bool met = verdict == verdicts.end() || verdict->second.kind == DependencyVerdict::Kind::kMet;
    if (d.hold != Hold::kNone || d.gpus == 0 || !d.devices.empty() || !met) return;
    if (d.array_id != 0 && d.array_limit > 0 && array_taken[d.array_id]++ >= arrays_.Room(d))
      return;
    if (users_.Exceeds(d, nullptr)) return;
    if (NeedsEmptyGpus(d)) whole_need_ += d.gpus;
    startable.push_back(&d);
  };
  for (const Demand& d : snapshot_.pending)
    if (alone == nullptr || d.id != alone->id) count(d);
  if (alone != nullptr) count(*alone);
  // What the site keeps for whole-GPU jobs to come (Inventory::keep_empty_gpus).
  whole_need_ = std::max(whole_need_, snapshot_.inventory.keep_empty_gpus);
  shares_.emplace(snapshot_, state_, startable);
}

bool Pass::WaitsForShare(const Demand& demand, EmptyGpuUse use, const DeviceScan& scan,
                         bool devices_ok) {
  std::string detail;
  if (use == EmptyGpuUse::kWindow && devices_ok) {
    bool takes_empty = false;
    for (int i : scan.chosen) {
      const DeviceState& d = state_.devices()[i];
      takes_empty = takes_empty || (d.jobs == 0 && !d.partition.is_mig());
    }
    if (!takes_empty) return false;
    int64_t end = shares_->WindowEnd(demand.uid);
    if (!plan_.recheck_at_ms || end < *plan_.recheck_at_ms) plan_.recheck_at_ms = end;
    detail = "an empty GPU stays free for another user's slices for " +
             std::to_string(std::max<int64_t>(0, end - snapshot_.now_ms)) +
             " ms more (mps_affinity_ms: its user's slices started on one GPU a moment ago)";
  } else if (use == EmptyGpuUse::kNever && !devices_ok && state_.empty_whole_free() > 0) {
    detail =
        "the empty GPUs are kept for other users' waiting slices (MPS serves one user per GPU; "
        "a user holds at most " +
        std::to_string(shares_->share()) + " GPU(s) while others wait)";
  } else {
    return false;
  }
  plan_.waits.push_back({demand.id, Reason::kResources, std::move(detail), std::nullopt});
  return true;
}

Plan Pass::Run() {
  std::vector<const Demand*> order;
  order.reserve(snapshot_.pending.size());
  for (const Demand& d : snapshot_.pending) {
    order.push_back(&d);
  }
  std::stable_sort(order.begin(), order.end(), [](const Demand* a, const Demand* b) {
    if (a->priority != b->priority) {
      return a->priority > b->priority;
    }
    return a->id < b->id;
  });
  std::map<JobId, DependencyVerdict> verdicts =
      JudgeDependencies(snapshot_.pending, snapshot_.dependencies);
  for (auto& [id, verdict] : verdicts) {
    if (verdict.kind == DependencyVerdict::Kind::kNever)
      plan_.never_start.push_back(
          {id, Reason::kDependencyNeverSatisfied, verdict.detail, std::nullopt});
  }
  CountEmptyGpuDemand(verdicts);
  for (const Demand* d : order) {
    auto verdict = verdicts.find(d->id);
    if (verdict != verdicts.end() && verdict->second.kind == DependencyVerdict::Kind::kNever)
      continue;
    if (d->hold != Hold::kNone) {
      plan_.waits.push_back({d->id, Reason::kHeld, HeldDetail(d->id, d->hold), std::nullopt});
      continue;
    }
    if (verdict != verdicts.end() && verdict->second.kind == DependencyVerdict::Kind::kWaiting) {
      plan_.waits.push_back({d->id, Reason::kDependency, verdict->second.detail, std::nullopt});
      continue;
    }
    if (std::optional<Wait> wait = arrays_.Check(*d)) {
      plan_.waits.push_back(std::move(*wait));
      continue;
    }
    Consider(*d);
  }
  return std::move(plan_);
}

std::variant<Start, Wait> Pass::RunOne(const Demand& demand,
                                       const std::optional<Reservation>& held) {
  if (demand.hold != Hold::kNone)
    return Wait{demand.id, Reason::kHeld, HeldDetail(demand.id, demand.hold), std::nullopt};
  if (held) {
    state_.Reserve(held->device_indices, held->cpus, held->mem_bytes);
    plan_.reservation = *held;
  }
  // The empty GPUs are shared out as in a pass: what the waiting demands and the site keep of
  // them, and each user's share, the demand's user among the others. Nothing else is started.
  CountEmptyGpuDemand(JudgeDependencies(snapshot_.pending, snapshot_.dependencies), &demand);
  may_reserve_ = false;
  Consider(demand);
  if (!plan_.starts.empty()) return std::move(plan_.starts.front());
  return std::move(plan_.waits.back());
}

void Pass::Consider(const Demand& demand) {
  // Before the cache, whose shapes leave users out: the least the demand could hold decides
  // whether it waits for its user, so a job over its user's limit never holds a reservation.
  if (auto over = users_.Exceeds(demand, nullptr)) {
    plan_.waits.push_back({demand.id, Reason::kUserLimit, std::move(*over), std::nullopt});
    return;
  }
  ShapeKey key = KeyOf(demand);
  if (auto it = cache_.find(key); it != cache_.end() && it->second.generation == generation_) {
    plan_.waits.push_back({demand.id, it->second.reason, it->second.detail, it->second.mps_uid});
    return;
  }
  // The host test is O(1): when it fails, the device scan only has to learn whether the devices
  // suffice (which decides the reason), not which ones are best.
  HostFit host = state_.FitHost(demand);
  DeviceScan scan;
  bool devices_ok = true;
  if (demand.gpus > 0) {
    EmptyGpuUse use = demand.gpu_mem_bytes > 0 && shares_
                          ? shares_->For(demand, state_.empty_whole_free(), whole_need_)
                          : EmptyGpuUse::kAny;
    // A lease (placed now or never) cannot wait for its user's window to close: it joins its
    // user's GPUs, and takes an empty one only where none of those has room.
    if (use == EmptyGpuUse::kWindow && !may_reserve_) use = EmptyGpuUse::kLast;
    scan = ScanDevices(
        state_, demand, host == HostFit::kFits, &ranks_, snapshot_.inventory.slice_placement,
        use == EmptyGpuUse::kLast || use == EmptyGpuUse::kNever, use == EmptyGpuUse::kNever);
    devices_ok = scan.fits >= demand.gpus;
    if (WaitsForShare(demand, use, scan, devices_ok && host == HostFit::kFits)) return;
  }
  if (devices_ok && host == HostFit::kFits && demand.gpus >= 0) {
    // Whole GPUs hold the memory of the very GPUs chosen, which may be more than the least.
    if (auto over = users_.Exceeds(demand, &scan.chosen)) {
      plan_.waits.push_back({demand.id, Reason::kUserLimit, std::move(*over), std::nullopt});
      return;
    }
    StartOn(demand, scan.chosen);
    return;
  }
  Wait wait{demand.id, Reason::kResources, "", std::nullopt};
  if (Status fits = limits_.Check(demand); !fits.ok()) {
    // Should have been refused at submit; it must not hold a reservation that never ends.
    wait.detail = fits.message();
  } else {
    wait = Diagnose(demand, scan, devices_ok, host);
    if (!plan_.reservation && may_reserve_) {
      Reserve(demand, &wait);
      plan_.waits.push_back(std::move(wait));
      return;
    }
  }
  cache_[key] = {generation_, wait.reason, wait.detail, wait.mps_uid};
  plan_.waits.push_back(std::move(wait));
}

void Pass::StartOn(const Demand& demand, const std::vector<int>& devices) {
  Start start{demand.id, {}};
  for (int i : devices) {
    if (demand.gpu_mem_bytes == 0) {
      start.slots.push_back({i, 0, 0});
    } else {
      start.slots.push_back({i, demand.gpu_mem_bytes, demand.gpu_share_pct, demand.isolated});
    }
  }
  int took_empty = 0;
  for (int i : devices) took_empty += state_.devices()[i].jobs == 0 ? 1 : 0;
  state_.Place(demand, start.slots);
  if (NeedsEmptyGpus(demand)) {
    whole_need_ = std::max(0, whole_need_ - demand.gpus);
  } else if (shares_) {
    shares_->Started(demand, took_empty);
  }
  users_.Add(demand, devices);
  arrays_.Started(demand);
  ++generation_;
  plan_.starts.push_back(std::move(start));
}

Wait Pass::Diagnose(const Demand& demand, const DeviceScan& scan, bool devices_ok,
                    HostFit host) const {
  if (!devices_ok) {
    if (plan_.reservation && scan.fits + scan.reserved >= demand.gpus) {
      return {demand.id, Reason::kReservation, "devices it could use are " + HeldFor(),
              std::nullopt};
    }
    if (scan.fits + scan.other_uid >= demand.gpus) {
      return {demand.id, Reason::kMpsUser,
              OtherUidDetail(snapshot_.inventory, state_, scan.first_other_uid),
              state_.devices()[scan.first_other_uid].uid};
    }
    return {demand.id, Reason::kResources, DeviceShortage(demand, scan), std::nullopt};
  }
  if (host == HostFit::kReserved) {
    return {demand.id, Reason::kReservation, "host CPUs and memory are " + HeldFor(), std::nullopt};
  }
  return {demand.id, Reason::kHostResources, HostShortage(demand, state_), std::nullopt};
}

void Pass::Reserve(const Demand& demand, Wait* wait) {
  std::optional<std::vector<int>> devices = ChooseReservedDevices(demand, state_);
  if (!devices) {
    return;
  }
  std::sort(devices->begin(), devices->end());
  int cpus = demand.cpus > 0 ? demand.cpus : 0;
  state_.Reserve(*devices, cpus, demand.mem_bytes);
  ++generation_;
  plan_.reservation = Reservation{demand.id, *devices, cpus, demand.mem_bytes};
  if (devices->empty()) {
    wait->detail += "; host CPUs and memory are held for it";
  } else {
    wait->detail += "; " + DeviceLabels(snapshot_.inventory, *devices) + " held for it";
  }
}

}  // namespace

Plan Schedule(const Snapshot& snapshot) { return Pass(snapshot).Run(); }

std::variant<Start, Wait> PlaceOne(const Snapshot& snapshot, const Demand& demand,
                                   const std::optional<Reservation>& held) {
  return Pass(snapshot).RunOne(demand, held);
}

std::string HeldDetail(JobId id, Hold hold) {
  if (hold == Hold::kRoot) return "held by root: only root can release it";
  return "held by its owner: pinpoint release " + std::to_string(id);
}

}  // namespace pinpoint::sched
