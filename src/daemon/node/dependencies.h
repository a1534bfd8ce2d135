// Dependencies: the node's side of --after and --afterok (docs/scheduling.md "Dependencies").
// The rule that judges them is the scheduler's (sched/dependencies.h); here a submit's
// dependencies are checked, and each pass gets the states of the jobs its pending jobs depend on,
// from memory or the store, before the pass: the pure scheduler reads no store.
//
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <map>
#include <vector>

#include "api/caller.h"
#include "common/job_record.h"
#include "daemon/arrays/array_tasks.h"
#include "daemon/jobs/job_table.h"
#include "pinpoint/job.h"
#include "sched/placement.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

class Dependencies {
 public:
  // Not owned; each must outlive it. Stored jobs are read through `arrays` (ArrayTasks::Job).
  Dependencies(const JobTable* jobs, const ArrayTasks* arrays) : jobs_(jobs), arrays_(arrays) {}

  // Every dependency of `request` names a job the caller may see (its own; root: any), and no
  // afterok names one that has already ended without completing (for a job array's id: all its
  // tasks ended and one did not complete). Errors: kNotFound ("no job N", for another user's job
  // too: ids of others are not revealed), kFailedPrecondition (that afterok can never be met),
  // kIo.
  Status Check(const api::Caller& caller, const JobRequest& request) const;

  // The states of the jobs `pending` depends on (sched::Snapshot::dependencies), from the table,
  // the ended states kept from the last pass, or the store; a job array's id stands for all its
  // tasks (ArrayTasks::State). A job the store no longer has is left out (a met dependency); one
  // the store cannot read now reads as pending. Only ended states still depended on are kept for
  // the next pass, so a pass asks the store once per such job.
  std::map<JobId, JobState> StatesFor(const std::vector<sched::Demand>& pending);

  // `job` is pending, already waiting kDependency, and every job it depends on runs: its
  // verdict cannot change in a pass, so the pass may leave it out (10000 tasks after one running
  // job cost nothing).
  bool WaitsOnRunningJobs(const JobRecord& job) const;

 private:
  const JobTable* jobs_;
  const ArrayTasks* arrays_;
  // A job array's id names the first task's record and stands for every task, as Slurm's does
  // (ArrayTasks::State); any other job is its own state.
  static bool IsArrayId(const JobRecord& job) { return job.array.array_id == job.id; }
  JobState StateOf(const JobRecord& job) const;

  std::map<JobId, JobState> ended_states_;
};

}  // namespace pinpoint::daemon
