#include "daemon/jobs/array_rest.h"

#include <algorithm>
#include <set>

namespace pinpoint::daemon {

namespace {

std::string Text(const std::vector<int>& indices) { return FormatArraySpec(ArraySpec{indices, 0}); }

std::optional<std::vector<int>> Indices(const std::string& text) {
  auto spec = ParseArraySpec(text);
  if (!spec.ok() || spec->limit != 0) return std::nullopt;
  return std::move(spec->indices);
}

}  // namespace

size_t TasksIn(const JobRecord& r) {
  if (!IsArrayRest(r)) return 1;
  auto pending = Indices(r.array.pending);
  return pending ? pending->size() : 1;
}

JobRecord NewArrayRest(const JobRecord& job, const ArraySpec& spec) {
  JobRecord rest = job;
  ArrayRecord& a = rest.array;
  a = ArrayRecord{};
  a.count = static_cast<int>(spec.indices.size());
  a.index = a.min_index = spec.indices.empty() ? 0 : spec.indices.front();
  a.max_index = spec.indices.empty() ? 0 : spec.indices.back();
  a.limit = spec.limit;
  a.indices = a.pending = Text(spec.indices);
  return rest;
}

std::optional<RestTasks> RestTasks::Of(const JobRecord& rest) {
  if (!IsArrayRest(rest)) return std::nullopt;
  auto all = Indices(rest.array.indices);
  auto pending = Indices(rest.array.pending);
  if (!all || !pending || all->size() != static_cast<size_t>(rest.array.count)) return std::nullopt;
  if (!std::includes(all->begin(), all->end(), pending->begin(), pending->end()))
    return std::nullopt;
  RestTasks tasks;
  tasks.array_id_ = rest.array.array_id;
  tasks.all_ = std::move(*all);
  tasks.pending_ = std::move(*pending);
  return tasks;
}

JobId RestTasks::IdOf(int index) const {
  auto at = std::lower_bound(all_.begin(), all_.end(), index);
  return array_id_ + static_cast<JobId>(at - all_.begin());
}

std::optional<int> RestTasks::PendingIndexOf(JobId id) const {
  if (id < array_id_ || id - array_id_ >= static_cast<JobId>(all_.size())) return std::nullopt;
  int index = all_[static_cast<size_t>(id - array_id_)];
  if (!std::binary_search(pending_.begin(), pending_.end(), index)) return std::nullopt;
  return index;
}

std::vector<JobId> RestTasks::FirstIds(size_t max) const {
  std::vector<JobId> ids;
  for (size_t i = 0; i < pending_.size() && ids.size() < max; ++i) ids.push_back(IdOf(pending_[i]));
  return ids;
}

JobRecord RestTasks::Task(const JobRecord& rest, JobId id) const {
  JobRecord task = rest;
  task.id = id;
  task.array.index = all_[static_cast<size_t>(id - array_id_)];
  task.array.pending.clear();
  task.array.indices.clear();
  return task;
}

RestTasks::TakenOut RestTasks::TakeOut(const JobRecord& rest, const std::vector<JobId>& ids) const {
  TakenOut out;
  std::set<int> taken;
  for (JobId id : ids) {
    out.tasks.push_back(Task(rest, id));
    taken.insert(out.tasks.back().array.index);
  }
  std::vector<int> left;
  for (int index : pending_)
    if (!taken.count(index)) left.push_back(index);
  if (left.empty()) return out;
  JobRecord next = rest;
  next.id = IdOf(left.front());
  next.array.index = left.front();
  next.array.pending = Text(left);
  out.rest = std::move(next);
  return out;
}

}  // namespace pinpoint::daemon
