// Preemption (issue 56 item 3; docs/scheduling.md "Preemption"): a waiting job of a class that may
// preempt others makes room by the fewest, youngest, lowest-class running jobs it needs gone.
#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "common/log.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/sched_view.h"
#include "daemon/node/node.h"
#include "sched/preemption.h"

namespace pinpoint::daemon {

namespace {

// The waiting jobs whose victims one pass looks for: each costs up to two placements per
// candidate (sched::PickVictims).
constexpr int kPreemptorsPerPass = 4;

// "5, 6": the jobs making room, for the waiting job's detail and the log.
std::string JoinIds(const std::vector<JobId>& ids) {
  std::string out;
  for (JobId id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

bool WaitsForRoom(Reason reason) {
  return reason == Reason::kResources || reason == Reason::kMpsUser ||
         reason == Reason::kHostResources;
}

}  // namespace

const ServiceClass* Node::PreemptibleClass(JobId id) const {
  auto v = jobs_.find(id);
  if (v == jobs_.end() || v->second.state != JobState::kRunning ||
      v->second.kind == JobKind::kLease || runner_.BeingPreempted(v->second) ||
      v->second.suspend.phase != SuspendPhase::kNone)
    return nullptr;
  const ServiceClass* theirs =
      ClassOf(v->second, options_.admission.qos, options_.admission.default_qos);
  return theirs != nullptr && theirs->preempt_mode != PreemptMode::kOff ? theirs : nullptr;
}

std::vector<JobId> Node::PreemptAll(const std::vector<JobId>& victims, JobId for_job,
                                    const std::string& no_suspend) {
  std::vector<JobId> preempted;
  for (JobId victim : victims) {
    JobRecord& v = jobs_.at(victim);
    const ServiceClass* theirs = ClassOf(v, options_.admission.qos, options_.admission.default_qos);
    int64_t grace_ms = theirs != nullptr ? theirs->grace_s * 1000 : 0;
    // Its class says suspend: suspended when it can be (it resumes by itself once its GPUs have
    // room), otherwise requeued, and its events say why.
    if (theirs != nullptr && theirs->preempt_mode == PreemptMode::kSuspend) {
      std::string why = no_suspend.empty() ? SuspendRefusal(v) : no_suspend;
      Status s = why.empty() ? runner_.Suspend(v, "job " + std::to_string(for_job),
                                               /*resume=*/true, DeviceBytesOf(v), for_job, grace_ms)
                             : FailedPrecondition(why);
      if (s.ok()) {
        preempted.push_back(victim);
        continue;
      }
      Status noted = jobs_.Persist(v, "suspend-refused", s.message() + ": requeued instead");
      if (!noted.ok()) log::Warn("job {}: {}", victim, noted.ToString());
    }
    if (runner_.Preempt(v, for_job, grace_ms)) preempted.push_back(victim);
  }
  return preempted;
}

void Node::PreemptFor(const sched::Snapshot& snap, const sched::Plan& plan) {
  auto class_of = [&](const JobRecord& job) {
    return ClassOf(job, options_.admission.qos, options_.admission.default_qos);
  };
  // Rooms being made whose victims are all gone are made: forgotten.
  for (auto it = making_room_.begin(); it != making_room_.end();) {
    bool any = std::any_of(it->second.begin(), it->second.end(), [&](JobId victim) {
      auto v = jobs_.find(victim);
      return v != jobs_.end() && runner_.BeingPreempted(v->second);
    });
    if (!any) reclaiming_.erase(it->first);
    it = any ? std::next(it) : making_room_.erase(it);
  }
  int asked = 0;
  for (const sched::Wait& wait : plan.waits) {
    if (asked >= kPreemptorsPerPass) break;
    if (!WaitsForRoom(wait.reason)) continue;
    auto it = jobs_.find(wait.id);
    // A task still in its array's rest preempts once a job; a suspended job's resume never.
    if (it == jobs_.end() || it->second.state != JobState::kPending) continue;
    JobRecord& job = it->second;
    const ServiceClass* mine = class_of(job);
    if (mine == nullptr || mine->preempts.empty()) continue;
    if (auto room = making_room_.find(job.id); room != making_room_.end()) {
      lifecycle::Waiting(job, wait.reason,
                         "its room is being made: job(s) " + JoinIds(room->second) + " preempted");
      continue;
    }
    auto demand = std::find_if(snap.pending.begin(), snap.pending.end(),
                               [&](const sched::Demand& d) { return d.id == job.id; });
    if (demand == snap.pending.end()) continue;
    // Those it may preempt: of the classes it names, whose mode is not off, not already being
    // preempted; the lowest class first, then the youngest.
    struct Candidate {
      int priority;
      int64_t start_ms;
      JobId id;
    };
    std::vector<Candidate> candidates;
    for (const sched::RunningJob& r : snap.running) {
      const ServiceClass* theirs = PreemptibleClass(r.id);
      if (theirs == nullptr || std::find(mine->preempts.begin(), mine->preempts.end(),
                                         theirs->name) == mine->preempts.end())
        continue;
      candidates.push_back({theirs->priority, jobs_.at(r.id).start_ms, r.id});
    }
    if (candidates.empty()) continue;
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.priority, b.start_ms, b.id) < std::tie(b.priority, a.start_ms, a.id);
    });
    std::vector<JobId> order;
    for (const Candidate& c : candidates) order.push_back(c.id);
    ++asked;
    std::vector<JobId> preempted = PreemptAll(sched::PickVictims(snap, *demand, order), job.id);
    if (preempted.empty()) continue;
    std::string ids = JoinIds(preempted);
    log::Info("job {} (class {}) preempts job(s) {} to start", job.id, mine->name, ids);
    lifecycle::Waiting(job, wait.reason, "its room is being made: job(s) " + ids + " preempted");
    making_room_[job.id] = std::move(preempted);
  }
  PreemptForMigDrain(snap, asked);
  ReclaimFor(snap, plan, asked);
}

void Node::PreemptForMigDrain(const sched::Snapshot& snap, int& asked) {
  if (deps_.mig == nullptr || asked >= kPreemptorsPerPass) return;
  const int64_t now = deps_.clock->NowMs();
  JobId for_job = deps_.mig->HoldingFor(now);
  auto it = jobs_.find(for_job);
  if (for_job == 0 || it == jobs_.end() || it->second.state != JobState::kPending ||
      making_room_.count(for_job))
    return;
  std::vector<int> held = deps_.mig->HeldDevices(devices_, now);
  std::set<int> held_devices(held.begin(), held.end());
  // The jobs on the held placement's instances whose class allows it; the others end by
  // themselves, as before.
  std::vector<JobId> victims;
  for (const sched::RunningJob& r : snap.running) {
    if (PreemptibleClass(r.id) == nullptr) continue;
    if (std::any_of(r.slots.begin(), r.slots.end(),
                    [&](const sched::Slot& s) { return held_devices.count(s.device_index) > 0; }))
      victims.push_back(r.id);
  }
  if (victims.empty()) return;
  ++asked;
  // Their instances are destroyed for the new one: a suspended job could not resume on them.
  std::vector<JobId> preempted =
      PreemptAll(victims, for_job,
                 "its MIG instance is to be reshaped for job " + std::to_string(for_job) +
                     ", and a suspended job resumes only on its own");
  if (preempted.empty()) return;
  std::string ids = JoinIds(preempted);
  log::Info("job {}: the MIG placement drained for it has held: job(s) {} on it preempted", for_job,
            ids);
  lifecycle::Waiting(it->second, it->second.reason,
                     "its room is being made: job(s) " + ids +
                         " preempted (the MIG placement drained for it held long enough)");
  making_room_[for_job] = std::move(preempted);
}

void Node::ReclaimFor(const sched::Snapshot& snap, const sched::Plan& plan, int asked) {
  const int64_t after_ms = options_.pass.mps_reclaim_ms;
  const int64_t now = deps_.clock->NowMs();
  std::map<JobId, int64_t> since;  // only slices still waiting keep their clock
  std::set<uint32_t> users;        // those a room is being made for already
  for (JobId id : reclaiming_)
    if (auto it = jobs_.find(id); it != jobs_.end()) users.insert(it->second.uid);
  auto may_go = [&](JobId id) { return PreemptibleClass(id) != nullptr; };
  std::optional<int64_t> due;
  for (const sched::Wait& wait : plan.waits) {
    if (after_ms <= 0) break;
    if (wait.reason != Reason::kMpsUser && wait.reason != Reason::kResources) continue;
    auto it = jobs_.find(wait.id);
    if (it == jobs_.end() || it->second.state != JobState::kPending) continue;
    JobRecord& job = it->second;
    auto demand = std::find_if(snap.pending.begin(), snap.pending.end(),
                               [&](const sched::Demand& d) { return d.id == job.id; });
    if (demand == snap.pending.end() || demand->gpus != 1 || demand->gpu_mem_bytes == 0) continue;
    auto first = reclaim_since_.find(job.id);
    int64_t from = since[job.id] = first != reclaim_since_.end() ? first->second : now;
    if (auto room = making_room_.find(job.id); room != making_room_.end()) {
      if (reclaiming_.count(job.id))
        lifecycle::Waiting(job, wait.reason,
                           "its room is being made: job(s) " + JoinIds(room->second) +
                               " preempted (the fair share between users of MPS GPUs)");
      continue;
    }
    if (now - from < after_ms) {
      due = std::min(due.value_or(from + after_ms), from + after_ms);
      continue;
    }
    if (asked >= kPreemptorsPerPass || users.count(job.uid)) continue;
    std::vector<JobId> order = sched::ReclaimCandidates(snap, *demand, may_go);
    if (order.empty()) continue;
    ++asked;
    std::vector<JobId> preempted = PreemptAll(sched::PickVictims(snap, *demand, order), job.id);
    if (preempted.empty()) continue;
    uint32_t holder = jobs_.at(preempted.front()).uid;
    std::string ids = JoinIds(preempted);
    log::Info(
        "job {} of uid {} waited {} s for an MPS GPU below its user's share: job(s) {} of uid {}, "
        "above theirs, preempted for it",
        job.id, job.uid, (now - from) / 1000, ids, holder);
    lifecycle::Waiting(job, wait.reason,
                       "its room is being made: job(s) " + ids +
                           " preempted (the fair share between users of MPS GPUs)");
    making_room_[job.id] = std::move(preempted);
    reclaiming_.insert(job.id);
    users.insert(job.uid);
  }
  reclaim_since_ = std::move(since);
  // A pass when the next clock runs out, though nothing else changes by then.
  if (due) recheck_at_ms_ = std::min(recheck_at_ms_.value_or(*due), *due);
}

}  // namespace pinpoint::daemon
