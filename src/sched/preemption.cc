#include "sched/preemption.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "sched/mps_shares.h"
#include "sched/node_state.h"

namespace pinpoint::sched {

namespace {

// Whether `demand` starts with the running jobs in `gone` gone.
bool StartsWithout(const Snapshot& base, const Demand& demand, const std::set<JobId>& gone) {
  Snapshot trial;
  trial.inventory = base.inventory;
  trial.user_limits = base.user_limits;
  // No affinity window: it only delays a start by a moment (the job starts once it closes), and
  // asked during one (a user's first slice just started) it would hide every room.
  trial.now_ms = 0;
  trial.pending = {demand};
  trial.pending.front().after.clear();  // a job that waits on another is not asked about
  trial.pending.front().afterok.clear();
  for (const RunningJob& r : base.running)
    if (!gone.count(r.id)) trial.running.push_back(r);
  Plan plan = Schedule(trial);
  return std::any_of(plan.starts.begin(), plan.starts.end(),
                     [&](const Start& s) { return s.id == demand.id; });
}

}  // namespace

std::vector<JobId> PickVictims(const Snapshot& snapshot, const Demand& demand,
                               const std::vector<JobId>& candidates) {
  std::set<JobId> gone;
  if (StartsWithout(snapshot, demand, gone)) return {};
  std::vector<JobId> taken;
  bool starts = false;
  for (JobId id : candidates) {
    if (taken.size() >= kMaxPreemptionCandidates) break;
    if (!gone.insert(id).second) continue;
    taken.push_back(id);
    if ((starts = StartsWithout(snapshot, demand, gone))) break;
  }
  if (!starts) return {};
  // The fewest: each one taken is handed back, the last taken (the highest class, the oldest)
  // first, when the job still starts without it.
  for (size_t i = taken.size(); i-- > 0;) {
    gone.erase(taken[i]);
    if (StartsWithout(snapshot, demand, gone)) {
      taken.erase(taken.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      gone.insert(taken[i]);
    }
  }
  return taken;
}

std::vector<JobId> ReclaimCandidates(const Snapshot& snapshot, const Demand& demand,
                                     const std::function<bool(JobId)>& may_go) {
  if (!SharedSlice(demand)) return {};
  NodeState state(snapshot);
  const std::vector<DeviceState>& devices = state.devices();
  std::vector<int> mps;  // the GPUs that serve one user's MPS clients, as MpsShares counts them
  std::map<uint32_t, int> held;
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceState& d = devices[i];
    if (!d.one_user || d.partition.is_mig() || d.drained || d.max_jobs == 0) continue;
    mps.push_back(static_cast<int>(i));
    if (d.jobs > 0) ++held[d.uid];
  }
  if (mps.empty()) return {};
  std::set<uint32_t> users = {demand.uid};
  for (const auto& [uid, n] : held) users.insert(uid);
  for (const Demand& d : snapshot.pending)
    if (SharedSlice(d)) users.insert(d.uid);
  int share = std::max<int>(1, static_cast<int>(mps.size()) / static_cast<int>(users.size()));
  if (held[demand.uid] >= share) return {};
  std::map<int, std::vector<const RunningJob*>> on;  // device -> its jobs
  for (const RunningJob& r : snapshot.running)
    for (const Slot& s : r.slots) on[s.device_index].push_back(&r);
  struct Gpu {
    size_t jobs;
    int64_t newest_ms;
    int index;
  };
  std::vector<Gpu> gpus;
  for (int i : mps) {
    const DeviceState& d = devices[static_cast<size_t>(i)];
    if (d.jobs == 0 || d.uid == demand.uid || held[d.uid] <= share) continue;
    if (!state.SliceFitsEmpty(i, demand)) continue;
    const std::vector<const RunningJob*>& jobs = on[i];
    if (jobs.empty() ||
        !std::all_of(jobs.begin(), jobs.end(), [&](const RunningJob* r) { return may_go(r->id); }))
      continue;
    int64_t newest = 0;
    for (const RunningJob* r : jobs) newest = std::max(newest, r->start_ms);
    gpus.push_back({jobs.size(), newest, i});
  }
  std::sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
    return std::tie(a.jobs, b.newest_ms, a.index) < std::tie(b.jobs, a.newest_ms, b.index);
  });
  std::vector<JobId> out;
  std::set<JobId> seen;
  for (const Gpu& g : gpus) {
    std::vector<const RunningJob*> jobs = on[g.index];
    std::sort(jobs.begin(), jobs.end(), [](const RunningJob* a, const RunningJob* b) {
      return std::tie(b->start_ms, b->id) < std::tie(a->start_ms, a->id);
    });
    for (const RunningJob* r : jobs) {
      if (out.size() >= kMaxPreemptionCandidates) return out;
      if (seen.insert(r->id).second) out.push_back(r->id);
    }
  }
  return out;
}

}  // namespace pinpoint::sched
