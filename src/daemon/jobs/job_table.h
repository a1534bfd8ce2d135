// JobTable: the node's active jobs (pending and running, leases included, and ended ones until a
// pass has reported them) and their persistence: nothing else. Every change of a record goes to
// the store with its event, one at a time or many in one batch (one fsync); an end the store
// cannot take is kept in memory, answered from there and retried each pass.
//
// Lookups are a std::map's (ascending ids). Records are changed in place through find/at and then
// persisted; Add and Erase are the only ways in and out, so the bytes each user's jobs hold
// (HeldBytes) stay exact. A job array's rest (array_rest.h) is one record for its pending tasks;
// which tasks it stands for changes only by Erase and Add (array_take_out.h). A record's request
// changes in the table only with RequestChanged.
//
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/job_record.h"
#include "daemon/jobs/array_rest.h"
#include "daemon/jobs/job_room.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

class JobTable {
 public:
  using Map = std::map<JobId, JobRecord>;

  // Not owned; both must outlive the table.
  JobTable(store::JobStore* store, Clock* clock) : store_(store), clock_(clock) {}

  // ---- The records ----
  Map::iterator begin() { return jobs_.begin(); }
  Map::iterator end() { return jobs_.end(); }
  Map::const_iterator begin() const { return jobs_.begin(); }
  Map::const_iterator end() const { return jobs_.end(); }
  Map::iterator find(JobId id) { return jobs_.find(id); }
  Map::const_iterator find(JobId id) const { return jobs_.find(id); }
  Map::iterator lower_bound(JobId id) { return jobs_.lower_bound(id); }
  Map::const_iterator lower_bound(JobId id) const { return jobs_.lower_bound(id); }
  // The record of `id`, which must be in the table.
  JobRecord& at(JobId id) { return jobs_.at(id); }
  const JobRecord& at(JobId id) const { return jobs_.at(id); }
  size_t count(JobId id) const { return jobs_.count(id); }
  size_t size() const { return jobs_.size(); }
  const Map& map() const { return jobs_; }

  // Puts `job` (with its id) in the table, replacing a record of the same id. Stores nothing.
  JobRecord& Add(JobRecord job);
  // Takes `id` out of the table (nothing when absent). Stores nothing.
  void Erase(JobId id);
  // The record in the table changed its request from `before`'s (an update): its bytes follow.
  void RequestChanged(const JobRecord& before, const JobRecord& now) {
    size_t tasks = TasksOf(now.id);  // an update changes a rest's request, never its tasks
    held_bytes_.Remove(before, tasks);
    held_bytes_.Add(now, tasks);
  }
  // The request bytes (RequestBytes) of the jobs of `uid` in the table, a rest's once per task it
  // stands for. O(log users).
  uint64_t HeldBytesOf(uint32_t uid) const { return held_bytes_.Of(uid); }

  // The array's rest (array_rest.h) in the table that stands for task `id`; null when none does.
  // Cost: O(log arrays + log the rest's tasks).
  const JobRecord* RestHolding(JobId id) const;
  // The tasks of rest `id` of the table, read from its text once, when it entered the table (a
  // lookup of one of 10000 tasks does not parse the rest again); null when `id` is no rest of
  // the table, or one whose lists do not read.
  const RestTasks* TasksOfRest(JobId id) const {
    auto it = rest_tasks_.find(id);
    return it == rest_tasks_.end() ? nullptr : &it->second;
  }
  // How many tasks job `id` of the table stands for: a rest's pending ones, any other 1. O(log).
  size_t TasksOf(JobId id) const {
    const RestTasks* tasks = TasksOfRest(id);
    return tasks == nullptr ? 1 : tasks->size();
  }
  // The tasks the table's records stand for: a rest counts each of its pending tasks.
  size_t tasks() const { return jobs_.size() + extra_tasks_; }

  // Changes whenever a record is written (Persist) or a job enters or leaves.
  int64_t generation() const { return generation_; }
  void Touch() { ++generation_; }

  // ---- Persistence ----
  // Writes `job`'s record, with `event` (nullptr: none) and its detail, in one transaction.
  // Errors: the store's.
  Status Persist(const JobRecord& job, const char* event, const std::string& detail);
  // A store batch: writes until Commit are one transaction (JobStore::BeginBatch). Errors: the
  // store's (the caller then writes each record in its own transaction).
  Result<store::JobStore::Batch> BeginBatch() { return store_->BeginBatch(); }

  // Records a job's end (event "end"). When the store cannot take it (e.g. a full disk) the end
  // is kept in memory (the job stays in the table, answered from there) and retried by each
  // RetryUnpersistedEnds. Inside a batch opened by BeginEnds, the end is also noted, so that a
  // batch that fails to commit keeps all of its ends.
  void PersistEnd(const JobRecord& job);
  // Ends written from here to CommitEnds share one transaction where the store allows it. When
  // it cannot commit, every end written in it is kept in memory as PersistEnd keeps one.
  void BeginEnds();
  void CommitEnds();
  // Tries again to record the ends kept in memory; a job already reported leaves the table once
  // its end is stored.
  void RetryUnpersistedEnds();
  // The ended jobs of the table not reported yet: each is reported once (`report` is called with
  // its record, and its id returned, ascending) and leaves the table then, or once its end is
  // stored. Cost: O(jobs in the table).
  std::vector<JobId> CollectEnded(const std::function<void(const JobRecord&)>& report);

 private:
  void KeepUnpersistedEnd(const JobRecord& job, const Status& why);

  store::JobStore* store_;
  Clock* clock_;
  Map jobs_;
  HeldBytes held_bytes_;                   // of jobs_'s requests, by uid
  std::map<JobId, JobId> rests_;           // array id -> the id of its rest in jobs_
  std::map<JobId, RestTasks> rest_tasks_;  // a rest's id in jobs_ -> its tasks (RestTasks::Of)
  size_t extra_tasks_ = 0;                 // tasks the rests stand for beyond one each
  int64_t generation_ = 0;
  // Jobs whose end could not be stored yet -> whether CollectEnded has reported them.
  std::map<JobId, bool> unpersisted_ends_;
  // While a batch of ends is open (BeginEnds): the batch, and the ends written in it.
  std::optional<store::JobStore::Batch> ends_batch_;
  std::vector<JobId> ends_in_batch_;
};

}  // namespace pinpoint::daemon
