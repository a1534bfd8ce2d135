#include "sched/reservation.h"

#include <algorithm>
#include <tuple>

namespace pinpoint::sched {

namespace {

// What must leave a device before the job fits there.
struct DrainCost {
  int other_uid = 0;  // 1: another uid's MPS server, which must drain entirely
  int jobs = 0;
  uint64_t bytes = 0;
  SliceRank rank;  // best-fit order among devices that take the slice now
  auto operator<=>(const DrainCost&) const = default;  // NOLINT(modernize-use-nullptr)
};

DrainCost DrainAll(const NodeState& state, int i, int other_uid) {
  DrainCost cost{other_uid, 0, 0, SliceRank{.index = i}};
  for (const SlotUse& use : state.uses(i)) {
    ++cost.jobs;
    cost.bytes += use.mem_bytes;
  }
  return cost;
}

// Drains the largest slices first until the slice fits: an estimate, not the true minimum.
DrainCost DrainUntilFits(const NodeState& state, int i, const Demand& demand) {
  const DeviceState& d = state.devices()[i];
  int64_t mem_short = static_cast<int64_t>(d.used_mem_bytes + demand.gpu_mem_bytes) -
                      static_cast<int64_t>(d.mem_bytes);
  int share_short = d.used_share_pct + demand.gpu_share_pct - 100;
  int clients_short = d.max_jobs >= 0 ? d.jobs + 1 - d.max_jobs : 0;
  std::vector<SlotUse> uses = state.uses(i);
  std::sort(uses.begin(), uses.end(), [](const SlotUse& a, const SlotUse& b) {
    return std::tie(a.mem_bytes, a.share_pct) > std::tie(b.mem_bytes, b.share_pct);
  });
  DrainCost cost{0, 0, 0, SliceRank{.index = i}};
  for (const SlotUse& use : uses) {
    if (mem_short <= 0 && share_short <= 0 && clients_short <= 0) {
      break;
    }
    ++cost.jobs;
    cost.bytes += use.mem_bytes;
    mem_short -= static_cast<int64_t>(use.mem_bytes);
    share_short -= use.share_pct;
    --clients_short;
  }
  return cost;
}

DrainCost SliceDrainCost(const NodeState& state, int i, const Demand& demand) {
  const DeviceState& d = state.devices()[i];
  if (state.FitSlice(i, demand) == DeviceFit::kFits) {
    return DrainCost{0, 0, 0, RankSlice(d, i, demand.gpu_mem_bytes)};
  }
  if (d.one_user && d.jobs > 0 && d.uid != demand.uid) {
    return DrainAll(state, i, 1);
  }
  if (d.full) {
    return DrainAll(state, i, 0);
  }
  return DrainUntilFits(state, i, demand);
}

std::vector<int> FirstN(std::vector<DrainCost>& costs, int n) {
  std::partial_sort(costs.begin(), costs.begin() + n, costs.end());
  std::vector<int> devices;
  devices.reserve(n);
  for (int k = 0; k < n; ++k) {
    devices.push_back(costs[k].rank.index);
  }
  return devices;
}

}  // namespace

std::optional<std::vector<int>> ChooseReservedDevices(const Demand& demand,
                                                      const NodeState& state) {
  if (demand.gpus <= 0) {
    return std::vector<int>{};
  }
  std::vector<DrainCost> costs;
  costs.reserve(state.devices().size());
  int n = static_cast<int>(state.devices().size());
  for (int i = 0; i < n; ++i) {
    if (!demand.devices.empty() &&
        std::find(demand.devices.begin(), demand.devices.end(), i) == demand.devices.end()) {
      continue;  // pinned by a batch system: only its own devices
    }
    const DeviceState& d = state.devices()[i];
    if (demand.gpu_mem_bytes == 0) {
      if (d.drained || d.partition.is_mig()) {
        continue;
      }
      costs.push_back(DrainAll(state, i, 0));
    } else if (state.SliceFitsEmpty(i, demand)) {
      costs.push_back(SliceDrainCost(state, i, demand));
    }
  }
  if (static_cast<int>(costs.size()) < demand.gpus) {
    return std::nullopt;
  }
  return FirstN(costs, demand.gpus);
}

}  // namespace pinpoint::sched
