#include "sched/start_estimate.h"

#include <algorithm>
#include <set>

namespace pinpoint::sched {

namespace {

// A running job of the play and when it ends (nullopt: never, here).
struct Playing {
  RunningJob job;
  std::optional<int64_t> end_ms;
};

}  // namespace

std::vector<StartEstimate> EstimateStarts(Snapshot snapshot,
                                          const std::map<JobId, int64_t>& ends_ms,
                                          const std::map<JobId, int64_t>& runs_ms, int64_t now_ms,
                                          int max_passes) {
  std::vector<StartEstimate> out;
  std::map<JobId, size_t> at;  // demand id -> its place in `out`
  for (const Demand& d : snapshot.pending) {
    at[d.id] = out.size();
    out.push_back({d.id, std::nullopt, ""});
  }
  std::vector<Playing> running;
  for (RunningJob& job : snapshot.running) {
    auto end = ends_ms.find(job.id);
    running.push_back({std::move(job), end == ends_ms.end()
                                           ? std::nullopt
                                           : std::optional(std::max(end->second, now_ms))});
  }
  std::vector<Demand> pending = std::move(snapshot.pending);
  snapshot.pending.clear();
  snapshot.dependencies.clear();
  int64_t t = now_ms;
  int passes = 0;
  for (; passes < max_passes && !pending.empty(); ++passes) {
    // Who is still there: a dependency on one of them is not met yet.
    std::set<JobId> present;
    for (const Playing& p : running) {
      present.insert(p.job.id);
      if (p.job.array_id != 0) present.insert(p.job.array_id);
    }
    for (const Demand& d : pending) {
      present.insert(d.id);
      if (d.array_id != 0) present.insert(d.array_id);
    }
    auto waits = [&](const Demand& d) {
      auto named = [&](const std::vector<JobId>& ids) {
        return std::any_of(ids.begin(), ids.end(),
                           [&](JobId id) { return id != d.id && present.count(id) > 0; });
      };
      return named(d.after) || named(d.afterok);
    };
    snapshot.pending.clear();
    for (const Demand& d : pending) {
      if (waits(d)) continue;
      Demand free = d;
      free.after.clear();
      free.afterok.clear();
      snapshot.pending.push_back(std::move(free));
    }
    snapshot.running.clear();
    for (const Playing& p : running) snapshot.running.push_back(p.job);
    Plan plan = Schedule(snapshot);
    std::set<JobId> started;
    for (const Start& s : plan.starts) {
      started.insert(s.id);
      out[at[s.id]].start_ms = t;
      auto demand = std::find_if(pending.begin(), pending.end(),
                                 [&](const Demand& d) { return d.id == s.id; });
      RunningJob job{s.id, demand->uid, demand->cpus, demand->mem_bytes, s.slots, demand->array_id};
      auto run = runs_ms.find(s.id);
      std::optional<int64_t> end;
      int64_t sum = 0;
      if (run != runs_ms.end() && run->second > 0 && !__builtin_add_overflow(t, run->second, &sum))
        end = sum;
      running.push_back({std::move(job), end});
    }
    std::erase_if(pending, [&](const Demand& d) { return started.count(d.id) > 0; });
    if (pending.empty()) break;
    // The next end: every job that ends then leaves, and the pass is made again.
    std::optional<int64_t> next;
    for (const Playing& p : running)
      if (p.end_ms && (!next || *p.end_ms < *next)) next = p.end_ms;
    if (!next) break;
    t = std::max(t, *next);
    std::erase_if(running, [&](const Playing& p) { return p.end_ms && *p.end_ms <= t; });
  }
  for (const Demand& d : pending) {
    StartEstimate& e = out[at[d.id]];
    if (d.hold != Hold::kNone)
      e.why = "held";
    else if (passes >= max_passes)
      e.why = "beyond the estimate's horizon";
    else if (running.empty())
      e.why = "does not start even once the running jobs end";
    else
      e.why = "waits for a job without a time limit to end";
  }
  return out;
}

}  // namespace pinpoint::sched
