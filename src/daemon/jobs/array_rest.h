// An array's rest (docs/design.md "Job arrays"): while a job array waits, one record stands for
// every task of it not yet taken out as a job of its own, as Slurm keeps a pending array as one
// job. A task is taken out when it starts, or when a request names it alone (hold, cancel or
// update of `4_7`); it then gets its own record under the id its array reserved for it (the
// array's id plus the task's place among the indices), so ids stay what they were when each task
// was a record. The rest's id is that of its first pending task. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "common/job_record.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/job.h"

namespace pinpoint::daemon {

// Whether `r` is an array's rest (ArrayTask::pending set).
inline bool IsArrayRest(const JobRecord& r) { return !r.array.pending.empty(); }
// How many tasks `r` stands for: a rest's pending ones, any other job 1. Cost: O(the rest's text).
size_t TasksIn(const JobRecord& r);

// The rest of a new array: `job` (admitted, not stored) standing for every task of `spec`. Its id
// and array id are the store's (JobStore::InsertArray), its index the spec's first.
JobRecord NewArrayRest(const JobRecord& job, const ArraySpec& spec);

// The tasks of one rest, read once.
class RestTasks {
 public:
  // nullopt when `rest` is no rest or its lists do not read (a damaged record).
  static std::optional<RestTasks> Of(const JobRecord& rest);
  // The index of task `id` when it is one the rest stands for; nullopt otherwise. O(log tasks).
  std::optional<int> PendingIndexOf(JobId id) const;
  // The ids of the first `max` tasks the rest stands for, ascending.
  std::vector<JobId> FirstIds(size_t max) const;
  size_t size() const { return pending_.size(); }

  // Task `id` (PendingIndexOf has a value) as a job of its own: the rest's record with the
  // task's id and index, its rest lists cleared.
  JobRecord Task(const JobRecord& rest, JobId id) const;
  // Takes tasks `ids` (each PendingIndexOf) out of `rest`: their records, in the order given, and
  // the rest that stands for the others (its id that of the first of them), nullopt when none is
  // left.
  struct TakenOut {
    std::vector<JobRecord> tasks;
    std::optional<JobRecord> rest;
  };
  TakenOut TakeOut(const JobRecord& rest, const std::vector<JobId>& ids) const;

 private:
  JobId IdOf(int index) const;

  JobId array_id_ = 0;
  std::vector<int> all_;      // every index of the array, ascending: task id = array_id_ + place
  std::vector<int> pending_;  // those the rest stands for, ascending
};

}  // namespace pinpoint::daemon
