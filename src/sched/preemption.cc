#include "sched/preemption.h"

#include <algorithm>
#include <set>

namespace pinpoint::sched {

namespace {

// Whether `demand` starts with the running jobs in `gone` gone.
bool StartsWithout(const Snapshot& base, const Demand& demand, const std::set<JobId>& gone) {
  Snapshot trial;
  trial.inventory = base.inventory;
  trial.user_limits = base.user_limits;
  trial.now_ms = base.now_ms;
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

}  // namespace pinpoint::sched
