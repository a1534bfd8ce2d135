#include "daemon/node/dependencies.h"

#include "common/log.h"

namespace pinpoint::daemon {

Status Dependencies::Check(const api::Caller& caller, const JobRequest& request) const {
  for (const auto* list : {&request.after, &request.afterok}) {
    for (JobId id : *list) {
      Result<JobRecord> job = arrays_->Job(id);
      if (!job.ok() && job.status().code() != Code::kNotFound) return job.status();
      // Another user's job reads as no job at all: a submit must not tell which ids exist.
      if (!job.ok() || !api::MayControlJob(caller, job->uid))
        return NotFound("no job " + std::to_string(id));
      if (list != &request.afterok) continue;  // after: any end will do
      JobState state = StateOf(*job);
      if (IsFinal(state) && state != JobState::kCompleted) {
        return FailedPrecondition((IsArrayId(*job) ? "job array " : "job ") + std::to_string(id) +
                                  " has already ended " + JobStateName(state) +
                                  ": afterok on it can never be met (after waits for any end)");
      }
    }
  }
  return Status::Ok();
}

JobState Dependencies::StateOf(const JobRecord& job) const {
  return IsArrayId(job) ? arrays_->State(job) : job.state;
}

bool Dependencies::WaitsOnRunningJobs(const JobRecord& job) const {
  if (job.reason != Reason::kDependency) return false;  // judged once by a pass first
  if (job.request.after.empty() && job.request.afterok.empty()) return false;
  for (const auto* list : {&job.request.after, &job.request.afterok}) {
    for (JobId id : *list) {
      auto it = jobs_->find(id);
      if (it == jobs_->end() || it->second.state != JobState::kRunning) return false;
    }
  }
  return true;
}

std::map<JobId, JobState> Dependencies::StatesFor(const std::vector<sched::Demand>& pending) {
  std::map<JobId, JobState> states;
  std::map<JobId, JobState> still_needed;  // the part of ended_states_ kept for the next pass
  for (const sched::Demand& d : pending) {
    for (const auto* list : {&d.after, &d.afterok}) {
      for (JobId id : *list) {
        if (states.count(id)) continue;
        auto known = ended_states_.find(id);
        if (known != ended_states_.end()) {
          states[id] = still_needed[id] = known->second;
          continue;
        }
        Result<JobRecord> stored = arrays_->Job(id);
        if (!stored.ok()) {
          if (stored.status().code() == Code::kNotFound)
            continue;  // purged (sched::JudgeDependencies)
          // Unknown for now: the job waits rather than start or end on a guess.
          log::Warn("job {}: state of dependency {} unknown: {}", d.id, id,
                    stored.status().message());
          states[id] = JobState::kPending;
          continue;
        }
        JobState state = StateOf(*stored);
        states[id] = state;
        if (IsFinal(state)) still_needed[id] = state;
      }
    }
  }
  ended_states_ = std::move(still_needed);
  return states;
}

}  // namespace pinpoint::daemon
