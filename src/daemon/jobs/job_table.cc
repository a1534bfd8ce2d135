#include "daemon/jobs/job_table.h"

#include "common/log.h"

namespace pinpoint::daemon {

JobRecord& JobTable::Add(JobRecord job) {
  Erase(job.id);
  JobId id = job.id;
  size_t tasks = 1;
  if (IsArrayRest(job)) {
    rests_[job.array.array_id] = id;
    // A rest's lists are read here once; which tasks it stands for changes only by Erase and Add.
    if (auto read = RestTasks::Of(job)) {
      tasks = read->size();
      rest_tasks_.insert_or_assign(id, std::move(*read));
    }
    extra_tasks_ += tasks - 1;
  }
  held_bytes_.Add(job, tasks);
  ++generation_;
  return jobs_[id] = std::move(job);
}

void JobTable::Erase(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  size_t tasks = TasksOf(id);
  held_bytes_.Remove(it->second, tasks);
  if (IsArrayRest(it->second)) {
    auto rest = rests_.find(it->second.array.array_id);
    if (rest != rests_.end() && rest->second == id) rests_.erase(rest);
    extra_tasks_ -= std::min(extra_tasks_, tasks - 1);
  }
  rest_tasks_.erase(id);
  jobs_.erase(it);
  ++generation_;
}

const JobRecord* JobTable::RestHolding(JobId id) const {
  auto after = rests_.upper_bound(id);  // arrays with ids above `id` cannot hold it
  if (after == rests_.begin()) return nullptr;
  JobId rest = std::prev(after)->second;
  const RestTasks* tasks = TasksOfRest(rest);
  return tasks != nullptr && tasks->PendingIndexOf(id) ? &jobs_.at(rest) : nullptr;
}

Status JobTable::Persist(const JobRecord& job, const char* event, const std::string& detail) {
  ++generation_;
  std::optional<store::JobEvent> e;
  if (event != nullptr) e = store::JobEvent{job.id, clock_->NowMs(), event, detail};
  return store_->Update(job, e);  // the record and its event: one transaction
}

void JobTable::PersistEnd(const JobRecord& job) {
  Status s = Persist(job, "end", job.detail);
  if (!s.ok()) return KeepUnpersistedEnd(job, s);
  if (ends_batch_) ends_in_batch_.push_back(job.id);
}

void JobTable::BeginEnds() {
  ends_in_batch_.clear();
  // Jobs that end together (N equal jobs of a batch) cost one fsync, not one each. Without a
  // batch (the store refused one) each end is its own transaction.
  auto batch = store_->BeginBatch();
  if (batch.ok()) ends_batch_.emplace(std::move(batch).value());
}

void JobTable::CommitEnds() {
  if (!ends_batch_) return;
  Status committed = ends_batch_->Commit();
  ends_batch_.reset();
  if (committed.ok()) return;
  log::Error("cannot record the ends and requeues of this pass: {}", committed.ToString());
  for (JobId id : ends_in_batch_) {
    if (auto it = jobs_.find(id); it != jobs_.end()) KeepUnpersistedEnd(it->second, committed);
  }
  ends_in_batch_.clear();
}

void JobTable::KeepUnpersistedEnd(const JobRecord& job, const Status& why) {
  // The end is known (the shim's exit status stays on disk too): answer from memory and retry.
  log::Error("job {}: cannot record its end ({}) yet: {}; kept in memory, retried each pass",
             job.id, JobStateName(job.state), why.ToString());
  unpersisted_ends_.emplace(job.id, false);
}

void JobTable::RetryUnpersistedEnds() {
  for (auto it = unpersisted_ends_.begin(); it != unpersisted_ends_.end();) {
    auto job = jobs_.find(it->first);
    if (job == jobs_.end()) {
      it = unpersisted_ends_.erase(it);
      continue;
    }
    if (!Persist(job->second, "end", job->second.detail).ok()) {
      ++it;
      continue;
    }
    log::Info("job {}: its end ({}) is recorded now", it->first, JobStateName(job->second.state));
    bool reported = it->second;
    it = unpersisted_ends_.erase(it);
    if (reported) Erase(job->first);
  }
}

std::vector<JobId> JobTable::CollectEnded(const std::function<void(const JobRecord&)>& report) {
  std::vector<JobId> ended;
  std::vector<JobId> leaving;
  for (const auto& [id, job] : jobs_) {
    if (!IsFinal(job.state)) continue;
    auto unpersisted = unpersisted_ends_.find(id);
    if (unpersisted != unpersisted_ends_.end() && unpersisted->second) continue;
    ended.push_back(id);
    report(job);
    if (unpersisted == unpersisted_ends_.end()) {
      leaving.push_back(id);
    } else {
      unpersisted->second = true;  // reported once; kept in memory until it is stored
    }
  }
  for (JobId id : leaving) Erase(id);
  return ended;
}

}  // namespace pinpoint::daemon
