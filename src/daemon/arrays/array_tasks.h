// ArrayTasks: a read-only view of the job arrays among a node's jobs (docs/api.md "submit",
// "cancel"): which tasks of an array have not ended, which of them a request still has to change,
// and the array's state as a dependency sees it. The tasks of one array have consecutive ids from
// the array's (its first task's), so the active ones are one run of the JobTable; the store is
// read only once an array has no active task left.
//
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <optional>
#include <vector>

#include "common/job_record.h"
#include "daemon/jobs/array_rest.h"
#include "daemon/jobs/job_table.h"
#include "pinpoint/api.h"
#include "pinpoint/job.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

class ArrayTasks {
 public:
  // Not owned; both must outlive the view.
  ArrayTasks(const JobTable* jobs, store::JobStore* store) : jobs_(jobs), store_(store) {}

  // Job `id` wherever it is: in the table, a task a rest in the table stands for (as
  // RestTasks::Task makes it), in the store, or a task a stored rest stands for. Errors:
  // kNotFound ("no job N"), the store's. Cost: O(log jobs + a rest's tasks), store lookups.
  // Without `with_env` its request.env is empty (JobStore::Get without env: what a view that
  // shows none needs, at a fraction of the cost for a large environment).
  Result<JobRecord> Job(JobId id, bool with_env = true) const;
  // How many tasks active job `id` stands for: a rest, each of its pending ones; any other 1.
  size_t TasksOf(JobId id) const { return jobs_->TasksOf(id); }

  // The ids of the tasks of job array `id` (its first task's id) that have not ended, ascending
  // (empty when all have); nullopt when `id` names no array (no such job, or a job that is not an
  // array's first task). Cost: O(log active jobs + tasks), and a store read when none is active.
  std::optional<std::vector<JobId>> Unfinished(JobId id) const;

  // An array's rest (array_rest.h) is one id among them, for all of its tasks.
  // The tasks of array `id` a request of `change` still has to change, ascending: kCancel those
  // not ended and not being cancelled; kHold the pending ones not yet held as `root` (or not) would
  // hold them; kRelease the held ones; kPending every pending one; kUpdate those `edit` still
  // changes (EditChanges, job_edit.h). nullopt as Unfinished. Cost: as Unfinished.
  enum class Change { kCancel, kHold, kRelease, kPending, kUpdate };
  std::optional<std::vector<JobId>> For(JobId id, Change change, bool root,
                                        const JobEdit& edit = {}) const;

  // The state of the job array whose first task is `first`: running while a task runs, pending
  // while any other has not ended; once all have, completed when all completed, else the state
  // of the first that did not (pending when the store cannot say for now). Cost: as Unfinished,
  // and a store range read once all ended.
  JobState State(const JobRecord& first) const;

 private:
  const JobTable* jobs_;
  store::JobStore* store_;
};

}  // namespace pinpoint::daemon
