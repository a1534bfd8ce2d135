#include "sched/dependencies.h"

#include <algorithm>

namespace pinpoint::sched {

namespace {

using Kind = DependencyVerdict::Kind;

// How far one dependency is.
enum class Progress { kNotEnded, kCompleted, kEndedOtherwise };

std::string JobsLeft(size_t more) {
  if (more == 0) return "";
  return " (and " + std::to_string(more) + " more job" + (more == 1 ? "" : "s") + ")";
}

}  // namespace

std::map<JobId, DependencyVerdict> JudgeDependencies(const std::vector<Demand>& pending,
                                                     const std::map<JobId, JobState>& states) {
  std::vector<const Demand*> order;
  for (const Demand& d : pending) {
    if (!d.after.empty() || !d.afterok.empty()) order.push_back(&d);
  }
  if (order.empty()) return {};  // the usual pass: nothing more to build
  std::map<JobId, const Demand*> by_id;
  for (const Demand& d : pending) by_id[d.id] = &d;
  std::sort(order.begin(), order.end(),
            [](const Demand* a, const Demand* b) { return a->id < b->id; });
  std::map<JobId, DependencyVerdict> verdicts;
  auto progress = [&](JobId id, std::string* how) {
    if (by_id.count(id)) {
      auto v = verdicts.find(id);
      if (v != verdicts.end() && v->second.kind == Kind::kNever) {
        *how = "can never start";  // its own detail says why: chains stay one line long
        return Progress::kEndedOtherwise;
      }
      return Progress::kNotEnded;
    }
    auto s = states.find(id);
    if (s == states.end()) return Progress::kCompleted;  // purged after it ended
    if (!IsFinal(s->second)) return Progress::kNotEnded;
    if (s->second == JobState::kCompleted) return Progress::kCompleted;
    *how = JobStateName(s->second);
    return Progress::kEndedOtherwise;
  };
  for (const Demand* d : order) {
    DependencyVerdict verdict;
    std::vector<std::string> waits;  // one per job not ended yet
    for (JobId id : d->afterok) {
      std::string how;
      Progress p = progress(id, &how);
      if (p == Progress::kEndedOtherwise) {
        verdict = {Kind::kNever,
                   "job " + std::to_string(id) + " " + how + ", and afterok needs it to complete"};
        break;
      }
      if (p == Progress::kNotEnded)
        waits.push_back("waits for job " + std::to_string(id) + " to complete (afterok)");
    }
    if (verdict.kind != Kind::kNever) {
      for (JobId id : d->after) {
        std::string how;
        if (progress(id, &how) == Progress::kNotEnded)
          waits.push_back("waits for job " + std::to_string(id) + " to end (after)");
      }
      if (!waits.empty()) verdict = {Kind::kWaiting, waits.front() + JobsLeft(waits.size() - 1)};
    }
    verdicts[d->id] = std::move(verdict);
  }
  return verdicts;
}

}  // namespace pinpoint::sched
