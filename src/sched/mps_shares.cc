#include "sched/mps_shares.h"

#include <algorithm>

namespace pinpoint::sched {

bool SharedSlice(const Demand& d) {
  return d.gpus == 1 && d.gpu_mem_bytes > 0 && d.devices.empty() && !d.isolated &&
         d.mig_profile.empty();
}

MpsShares::MpsShares(const Snapshot& snapshot, const NodeState& state,
                     const std::vector<const Demand*>& pending)
    : now_ms_(snapshot.now_ms), window_ms_(snapshot.inventory.mps_affinity_ms) {
  if (snapshot.inventory.slice_placement != SlicePlacement::kAuto) return;
  int gpus = 0;
  for (const DeviceState& d : state.devices()) {
    if (!d.one_user || d.partition.is_mig() || d.drained || d.max_jobs == 0) continue;
    ++gpus;
    if (d.jobs > 0) ++held_[d.uid];
  }
  if (gpus == 0) return;
  on_ = true;
  for (const RunningJob& job : snapshot.running)
    for (const Slot& slot : job.slots)
      if (slot.gpu_mem_bytes > 0 && job.start_ms > 0) {
        auto [it, added] = first_ms_.emplace(job.uid, job.start_ms);
        if (!added) it->second = std::min(it->second, job.start_ms);
      }
  std::set<uint32_t> users;
  for (const auto& [uid, n] : held_) users.insert(uid);
  for (const Demand* d : pending) {
    if (!SharedSlice(*d)) continue;
    users.insert(d->uid);
    ++waiting_[d->uid];
  }
  share_ = std::max<int>(1, gpus / static_cast<int>(std::max<size_t>(1, users.size())));
}

int MpsShares::Deficit(uint32_t uid) const {
  auto waiting = waiting_.find(uid);
  if (waiting == waiting_.end() || waiting->second <= 0) return 0;
  auto held = held_.find(uid);
  int has = held == held_.end() ? 0 : held->second;
  return std::clamp(share_ - has, 0, waiting->second);
}

EmptyGpuUse MpsShares::For(const Demand& demand, int empty_free, int whole_need) const {
  if (!on_ || !SharedSlice(demand)) return EmptyGpuUse::kAny;
  int others = 0;  // the empty GPUs other users below their share wait for
  for (const auto& [uid, n] : waiting_)
    if (uid != demand.uid) others += Deficit(uid);
  auto held = held_.find(demand.uid);
  int has = held == held_.end() ? 0 : held->second;
  if (has >= share_ && empty_free <= others) return EmptyGpuUse::kNever;
  if (has > 0 && window_ms_ > 0 && now_ms_ > 0 && now_ms_ < WindowEnd(demand.uid))
    return EmptyGpuUse::kWindow;
  return empty_free <= whole_need + others ? EmptyGpuUse::kLast : EmptyGpuUse::kAny;
}

void MpsShares::Started(const Demand& demand, int took_empty) {
  if (!on_ || demand.gpus == 0 || demand.gpu_mem_bytes == 0) return;
  held_[demand.uid] += took_empty;
  if (SharedSlice(demand)) --waiting_[demand.uid];
  if (now_ms_ > 0) first_ms_.emplace(demand.uid, now_ms_);
}

int64_t MpsShares::WindowEnd(uint32_t uid) const {
  auto first = first_ms_.find(uid);
  // A user whose slices' starts are unknown (a snapshot without them): no window.
  return first == first_ms_.end() ? 0 : first->second + window_ms_;
}

}  // namespace pinpoint::sched
