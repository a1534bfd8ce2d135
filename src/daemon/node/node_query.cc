// Node's answers about jobs (node.h): one job, a listing page, events and a piece of the logs.
// Reads only: the job table first, then the store.
#include <algorithm>
#include <map>

#include "common/file_util.h"
#include "daemon/jobs/array_rest.h"
#include "daemon/jobs/log_text.h"
#include "daemon/jobs/sched_view.h"
#include "daemon/node/node.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {

Result<JobRecord> Node::Get(JobId id, bool with_env) const { return arrays_.Job(id, with_env); }

namespace {

// A listing's copy of a job: everything but its environment, which only `show` carries. One
// environment is copied at a time, never a page of them.
JobRecord WithoutEnv(const JobRecord& job) {
  JobRecord copy = job;
  copy.request.env.clear();
  return copy;
}

// Whether `value` is in `list`, or the list is empty (a selection not given selects all).
template <typename List, typename Value>
bool SelectedBy(const List& list, const Value& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

// Whether active job `job` of `table` matches `f` (ListQuery).
bool Matches(const JobRecord& job, const ListQuery& f, const JobTable& table) {
  bool id = f.ids.empty() || SelectedBy(f.ids, job.id) ||
            (job.array.array_id != 0 && SelectedBy(f.ids, job.array.array_id));
  if (!id && IsArrayRest(job)) {  // a task the rest stands for selects the rest's row
    const RestTasks* tasks = table.TasksOfRest(job.id);
    id = tasks != nullptr && std::any_of(f.ids.begin(), f.ids.end(), [&](JobId t) {
           return tasks->PendingIndexOf(t).has_value();
         });
  }
  return id && SelectedBy(f.names, job.request.name) && SelectedBy(f.states, job.state);
}

// The ids a filter names, for the store: each job's own, and an array's id the range of its
// tasks' (consecutive) ids. Cost: a lookup per id (kQueueMaxIds at most).
std::vector<std::pair<JobId, JobId>> IdRanges(const Node& node, const std::vector<JobId>& ids) {
  std::vector<std::pair<JobId, JobId>> ranges;
  for (JobId id : ids) {
    auto job = node.Get(id);
    int count = job.ok() && job->array.array_id == id ? job->array.count : 1;
    ranges.emplace_back(id, id + std::max(count, 1) - 1);
  }
  return ranges;
}

// When pending jobs would start (ListQuery::estimate_starts): the node played forward
// (sched::EstimateStarts) from its running jobs and its first kStartEstimateJobs pending ones in
// the scheduler's order.
std::map<JobId, sched::StartEstimate> PlayStarts(const JobTable& jobs, sched::Inventory inventory,
                                                 const std::vector<ServiceClass>& classes,
                                                 int64_t now_ms) {
  sched::Snapshot snap;
  snap.inventory = std::move(inventory);
  std::map<JobId, int64_t> ends, runs;
  std::vector<const JobRecord*> pending;
  for (const auto& [id, job] : jobs) {
    int64_t limit_ms = job.request.time_limit_s > 0 ? job.request.time_limit_s * 1000 : 0;
    if (job.state == JobState::kRunning) {
      // As the scheduler sees it (Node::SchedSnapshot): a suspended job holds no GPU, and the
      // device memory it keeps in host memory is host memory taken.
      bool suspended = job.suspend.phase == SuspendPhase::kSuspended;
      snap.running.push_back(
          {id, job.uid, job.request.cpus, job.request.mem_bytes + job.suspend.host_bytes,
           suspended ? std::vector<sched::Slot>{} : SlotsOf(job), job.array.array_id});
      if (auto end = lifecycle::TimeLimitDeadlineMs(job)) ends[id] = *end;
    } else if (job.state == JobState::kPending && !job.cancel_requested) {
      pending.push_back(&job);
      if (limit_ms > 0) runs[id] = limit_ms;
    }
  }
  // The scheduler's order (placement.h): priority (the class's added) first, then submission.
  auto priority = [&classes](const JobRecord* r) { return PriorityOf(*r, &classes); };
  auto first = [&priority](const JobRecord* a, const JobRecord* b) {
    int pa = priority(a), pb = priority(b);
    return pa != pb ? pa > pb : a->id < b->id;
  };
  size_t played = std::min(pending.size(), kStartEstimateJobs);
  std::partial_sort(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(played),
                    pending.end(), first);
  for (size_t i = 0; i < played; ++i) snap.pending.push_back(DemandOf(*pending[i], &classes));
  std::map<JobId, sched::StartEstimate> by_id;
  for (auto& e : sched::EstimateStarts(std::move(snap), ends, runs, now_ms, kStartEstimatePasses))
    by_id[e.id] = e;
  return by_id;
}

}  // namespace

Result<Node::Page> Node::List(bool all, std::optional<uint32_t> uid, int offset, int limit,
                              const EndRange& ended, const ListQuery& select) const {
  if (offset < 0 || limit <= 0) return InvalidArgument("a page needs offset >= 0 and limit > 0");
  bool by_end = ended.after_ms || ended.before_ms;
  if (all || by_end) {
    if (!select.names.empty())
      return InvalidArgument("a name selects among active jobs: leave out --all and the end times");
    return ListStored(uid, offset, limit, ended, select);
  }
  int64_t now_ms = deps_.clock->NowMs();
  Page page;
  PP_RETURN_IF_ERROR(ListActive(uid, offset, limit, select, now_ms, page));
  if (select.estimate_starts) AddStartEstimates(now_ms, page);
  return page;
}

Result<Node::Page> Node::ListStored(std::optional<uint32_t> uid, int offset, int limit,
                                    const EndRange& ended, const ListQuery& select) const {
  Page page;
  bool by_end = ended.after_ms || ended.before_ms;
  store::ListFilter filter;
  filter.uid = uid;
  filter.states = select.states;
  if (by_end) {
    std::erase_if(filter.states, [](JobState state) { return !IsFinal(state); });
    if (filter.states.empty() != select.states.empty())
      return page;  // only active states asked: none ended
    if (filter.states.empty())
      filter.states = {JobState::kCompleted, JobState::kFailed, JobState::kCancelled};
    filter.end_ms_min = ended.after_ms;
    filter.end_ms_max = ended.before_ms;
  }
  if (!select.ids.empty()) filter.id_ranges = IdRanges(*this, select.ids);
  filter.limit = limit;
  filter.offset = offset;
  filter.omit_env = true;
  auto total = deps_.store->Count(filter);
  if (!total.ok()) return total.status();
  page.total = *total;
  auto ids = deps_.store->ListIds(filter);
  if (!ids.ok()) return ids.status();
  page.jobs.reserve(ids->size());
  page.tasks_after = std::max<int64_t>(0, page.total - offset - static_cast<int64_t>(ids->size()));
  // Newest first: the rests of the table older than the page stand for more tasks than rows.
  if (!ids->empty() && !by_end)
    page.tasks_after += TasksOfOlderRests(*std::min_element(ids->begin(), ids->end()), uid, select);
  for (JobId id : *ids) {
    // An active job from memory (which holds pending reasons), without reading its record.
    auto it = jobs_.find(id);
    if (it != jobs_.end()) {
      page.jobs.push_back(WithoutEnv(it->second));
      continue;
    }
    auto stored = deps_.store->Get(id, /*with_env=*/false);
    if (!stored.ok()) return stored.status();
    page.jobs.push_back(std::move(stored).value());
  }
  return page;
}

int64_t Node::TasksOfOlderRests(JobId oldest, std::optional<uint32_t> uid,
                                const ListQuery& select) const {
  int64_t tasks = 0;
  for (auto it = jobs_.begin(); it != jobs_.end() && it->first < oldest; ++it) {
    const JobRecord& r = it->second;
    bool state = select.states.empty() || std::find(select.states.begin(), select.states.end(),
                                                    r.state) != select.states.end();
    if (IsArrayRest(r) && (!uid || r.uid == *uid) && state &&
        Matches(r, {{}, {}, select.ids}, jobs_))
      tasks += static_cast<int64_t>(jobs_.TasksOf(it->first)) - 1;
  }
  return tasks;
}

Status Node::ListActive(std::optional<uint32_t> uid, int offset, int limit, const ListQuery& select,
                        int64_t now_ms, Page& page) const {
  // Jobs that failed to launch of late are listed too, with their reason, in id order among the
  // active ones (kRecentFailureMs): a job that cannot start does not vanish from the queue.
  std::vector<JobId> failed;
  for (const RecentFailure* f : recent_failures_.Of(uid, now_ms)) {
    if (jobs_.count(f->id) > 0) continue;
    bool id = select.ids.empty() || SelectedBy(select.ids, f->id) ||
              (f->array_id != 0 && SelectedBy(select.ids, f->array_id));
    if (id && SelectedBy(select.names, f->name) && SelectedBy(select.states, JobState::kFailed))
      failed.push_back(f->id);
  }
  std::sort(failed.begin(), failed.end());
  auto next_failed = failed.begin();
  auto row = [&](JobId id, const JobRecord* active) -> Status {
    if (page.total >= offset && page.total < int64_t{offset} + limit) {
      if (active != nullptr) {
        page.jobs.push_back(WithoutEnv(*active));
      } else {
        auto stored = deps_.store->Get(id, /*with_env=*/false);
        if (stored.ok())
          page.jobs.push_back(std::move(stored).value());
        else
          return Status::Ok();  // purged since: not a row
      }
    } else if (page.total >= int64_t{offset} + limit) {
      page.tasks_after += active != nullptr ? static_cast<int64_t>(jobs_.TasksOf(id)) : 1;
    }
    ++page.total;
    return Status::Ok();
  };
  // Only the page is copied: a queue of 10,000 jobs costs one pass, not 10,000 records.
  for (const auto& [id, r] : jobs_) {
    for (; next_failed != failed.end() && *next_failed < id; ++next_failed)
      PP_RETURN_IF_ERROR(row(*next_failed, nullptr));
    if ((uid && r.uid != *uid) || !Matches(r, select, jobs_)) continue;
    PP_RETURN_IF_ERROR(row(id, &r));
  }
  for (; next_failed != failed.end(); ++next_failed) PP_RETURN_IF_ERROR(row(*next_failed, nullptr));
  return Status::Ok();
}

void Node::AddStartEstimates(int64_t now_ms, Page& page) const {
  StartEstimates& cache = start_estimates_;
  // One play at most every kStartEstimateReuseMs, whatever changed in between: no stream of
  // requests (and changes to one's own jobs between them) makes the loop play more often.
  if (!cache.played || now_ms - cache.at_ms >= kStartEstimateReuseMs || now_ms < cache.at_ms) {
    sched::Inventory inventory = devices_;
    MarkUnavailable(inventory);
    cache = {true, now_ms, PlayStarts(jobs_, std::move(inventory), options_.admission.qos, now_ms)};
  }
  for (const JobRecord& job : page.jobs) {
    if (job.state != JobState::kPending) continue;
    auto it = cache.by_id.find(job.id);
    if (it != cache.by_id.end()) {
      page.starts.push_back(it->second);
    } else if (job.submit_ms >= cache.at_ms) {
      page.starts.push_back(
          {job.id, std::nullopt, "submitted after the last estimate: ask again in a few seconds"});
    } else {
      page.starts.push_back({job.id, std::nullopt, "beyond the estimate's horizon"});
    }
  }
}

Result<std::vector<store::JobEvent>> Node::Events(JobId id) const {
  // A task its array's rest still stands for has the rest's history.
  const JobRecord* rest = jobs_.RestHolding(id);
  return deps_.store->Events(rest != nullptr ? rest->id : id);
}

Result<LogsReply> Node::Logs(const api::Caller& caller, const LogsRequest& request) const {
  auto job = Get(request.id);
  if (!job.ok()) return job.status();
  if (!api::MayControlJob(caller, job->uid))
    return PermissionDenied("job " + std::to_string(request.id) + " belongs to " + job->user);
  // A file the job's user chose is never read by pinpointd, which runs as root: the user reads it.
  bool out = request.stream == LogStream::kStdout;
  const std::string& pattern =
      out || job->request.error_path.empty() ? job->request.output_path : job->request.error_path;
  if (!pattern.empty())
    return FailedPrecondition(
        "job " + std::to_string(request.id) + " writes its " + LogStreamName(request.stream) +
        " to " + ShimOccupant::OutputFile(*job, pattern) + " (submit -o/-e): read it there");
  LogsReply reply{request.id, request.stream, "", request.from_offset.value_or(0),
                  IsFinal(job->state)};
  // The log files belong to the job's user: read without following a link, bounded.
  auto dir = OpenDirNoFollow(ShimOccupant::JobDir(options_, request.id));
  if (!dir.ok() && dir.status().code() == Code::kNotFound) return reply;
  if (!dir.ok()) return dir.status();
  auto range = ReadFileRangeAt(dir->get(), LogStreamName(request.stream), request.from_offset,
                               request.max_bytes);
  if (!range.ok() && range.status().code() == Code::kNotFound) return reply;
  if (!range.ok()) return range.status();
  std::string_view data = range->data;
  uint64_t end = range->begin + data.size();
  bool at_end = end >= range->size;
  // A character cut at the end waits for its rest, unless no rest can come.
  if (!(at_end && reply.ended)) data = data.substr(0, CompleteUtf8Length(data));
  size_t skip = request.from_offset ? 0 : LastLinesStart(data, request.tail_lines);
  reply.data = std::string(data.substr(skip));
  reply.end_offset = range->begin + data.size();
  reply.ended = reply.ended && reply.end_offset >= range->size;
  return reply;
}

}  // namespace pinpoint::daemon
