#include "daemon/node.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "common/file_util.h"
#include "common/env_select.h"
#include "daemon/hold.h"
#include "daemon/job_array.h"
#include "daemon/job_room.h"
#include "daemon/lifecycle.h"
#include "daemon/log_text.h"
#include "launch/shim.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/rewrite_budget.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

using nlohmann::json;

namespace {

// A suspect after an MPS fault runs alone on its device until it has shown it is not the cause.
bool RunsIsolated(const JobRecord& r) { return r.fault_suspect && r.request.IsSlice(); }

// What a placed job holds, as the scheduler sees it.
std::vector<sched::Slot> SlotsOf(const JobRecord& job) {
  std::vector<sched::Slot> slots;
  for (const auto& a : job.allocations)
    slots.push_back({a.device_index, a.gpu_mem_bytes, a.gpu_share_pct, RunsIsolated(job)});
  return slots;
}

sched::Demand DemandOf(const JobRecord& r) {
  sched::Demand d;
  d.isolated = RunsIsolated(r);
  d.id = r.id;
  d.uid = r.uid;
  d.priority = r.request.priority;
  d.gpus = r.request.gpus;
  d.gpu_mem_bytes = r.request.gpu_mem_bytes;
  d.gpu_share_pct = r.request.gpu_share_pct;
  d.cpus = r.request.cpus;
  d.mem_bytes = r.request.mem_bytes;
  d.devices = r.request.devices;
  d.hold = r.hold;
  d.after = r.request.after;
  d.afterok = r.request.afterok;
  d.array_id = r.array.array_id;
  d.array_limit = r.array.limit;
  return d;
}

// Keys come from clients and are echoed in errors and stored: short printable ASCII only.
Status ValidateIdempotencyKey(const std::string& key) {
  constexpr size_t kMaxKeyBytes = 128;
  if (key.empty() || key.size() > kMaxKeyBytes ||
      !std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    return InvalidArgument("\"idempotency_key\" must be 1 to 128 printable ASCII characters "
                           "without spaces");
  }
  return Status::Ok();
}

}  // namespace

Node::Node(NodeOptions options, NodeDeps deps)
    : options_(std::move(options)),
      deps_(deps),
      users_(deps_.users != nullptr ? deps_.users : &cached_system_users_),
      faults_(options_.mps_fault_drain_after) {}

std::string Node::JobDir(JobId id) const {
  return options_.state_dir + "/jobs/" + std::to_string(id);
}

std::string Node::OutputFile(const JobRecord& r, const std::string& pattern) {
  if (pattern.empty()) return "";
  return OutputPathFor(pattern, r.id, r.user, r.request.name, r.request.cwd, r.array);
}

launch::JobHandle Node::Handle(const JobRecord& r) const {
  launch::JobHandle h;
  h.job_id = r.id;
  h.job_dir = JobDir(r.id);
  h.pid = r.pid;
  h.pid_start_ticks = r.pid_start_ticks;
  return h;
}

Status Node::Persist(const JobRecord& r, const char* event, const std::string& detail) {
  ++generation_;
  std::optional<store::JobEvent> e;
  if (event != nullptr) e = store::JobEvent{r.id, deps_.clock->NowMs(), event, detail};
  return deps_.store->Update(r, e);  // the record and its event: one transaction
}

Status Node::Recover() {
  store::ListFilter filter;
  filter.states = {JobState::kPending, JobState::kRunning};
  auto jobs = deps_.store->List(filter);
  if (!jobs.ok()) return jobs.status();
  int adopted = 0, ended = 0, requeued = 0, pending = 0;
  for (JobRecord& job : *jobs) {
    held_bytes_.Add(job);
    if (job.state == JobState::kPending) {
      active_[job.id] = job;
      ++pending;
      continue;
    }
    // A lease has no supervisor: it is adopted as it is, and Step polls its cgroup.
    auto status = job.kind == JobKind::kLease ? std::nullopt : deps_.launcher->Poll(Handle(job));
    bool orphaned = status && status->kind == launch::ExitStatus::Kind::kOrphaned;
    if (!status || orphaned) {
      active_[job.id] = job;
      for (const auto& a : job.allocations) {
        if (a.mode == AllocationMode::kMps) deps_.mps->AdoptClient(SliceOf(job, a));  // restarts a dead daemon
      }
      if (job.cancel_requested) kill_at_ms_[job.id] = deps_.clock->NowMs() + options_.cancel_grace_ms;
      store::JobEvent e{job.id, deps_.clock->NowMs(), "adopt", "re-adopted after daemon restart"};
      Status s = deps_.store->AppendEvent(e);
      if (!s.ok()) spdlog::warn("job {}: {}", job.id, s.ToString());
      if (orphaned) HandleOrphan(active_[job.id]);
      ++adopted;
      continue;
    }
    active_[job.id] = job;
    if (status->kind == launch::ExitStatus::Kind::kNeverLaunched) {
      Requeue(active_[job.id], "was never launched before the daemon stopped", lifecycle::kReasonRequeued);
      ++requeued;
    } else {
      Finish(active_[job.id], *status);
      ++ended;
    }
  }
  spdlog::info("recovered: {} pending, {} running adopted, {} ended while down, {} requeued",
               pending, adopted, ended, requeued);
  dirty_ = true;
  return Status::Ok();
}

Result<JobRecord> Node::Submit(const api::Caller& caller, JobRequest request,
                               const std::optional<std::string>& idempotency_key, bool hold) {
  // Before anything compares or stores it: the store never holds what env_deny names.
  std::vector<std::string> dropped = DropDenied(request.env, options_.env_deny);
  PP_RETURN_IF_ERROR(ValidateRequest(request));
  // Before the key's comparison: a retry is compared with the request as it was stored.
  PP_RETURN_IF_ERROR(ApplyTimeLimit(request));
  auto keyed = LookUpKey(caller, idempotency_key);
  if (!keyed.ok()) return keyed.status();
  std::optional<store::IdempotencyKey> key = keyed->key;
  if (keyed->first) return ResubmittedJob(*keyed->first, request);
  auto pending = NewPendingJob(caller, std::move(request), hold);
  if (!pending.ok()) return pending.status();
  JobRecord r = std::move(pending).value();
  auto id = deps_.store->Insert(r, key);
  if (!id.ok()) return id.status();
  r.id = *id;
  if (r.hold != Hold::kNone) lifecycle::Waiting(r, reason::kHeld, sched::HeldDetail(r.id, r.hold));
  if (!dropped.empty()) NoteDroppedEnv(r.id, dropped);
  held_bytes_.Add(r);
  active_[r.id] = r;
  dirty_ = true;
  ++generation_;
  return r;
}

Result<Node::KeyedSubmit> Node::LookUpKey(const api::Caller& caller,
                                          const std::optional<std::string>& idempotency_key) const {
  KeyedSubmit keyed;
  if (!idempotency_key) return keyed;
  PP_RETURN_IF_ERROR(ValidateIdempotencyKey(*idempotency_key));
  keyed.key = store::IdempotencyKey{caller.uid, *idempotency_key};
  auto first = deps_.store->FindByIdempotencyKey(*keyed.key);
  if (!first.ok()) return first.status();
  keyed.first = std::move(first).value();
  return keyed;
}

Result<JobRecord> Node::NewPendingJob(const api::Caller& caller, JobRequest request, bool hold,
                                      size_t jobs) {
  auto admitted = Admit(caller, std::move(request), jobs);
  if (!admitted.ok()) return admitted.status();
  JobRecord r = std::move(admitted).value();
  PP_RETURN_IF_ERROR(CheckDependencies(caller, r.request));
  lifecycle::Submitted(r, deps_.clock->NowMs());
  if (hold) r.hold = caller.IsRoot() ? Hold::kRoot : Hold::kUser;
  return r;
}

Result<JobRecord> Node::Admit(const api::Caller& caller, JobRequest request, size_t jobs) {
  PP_RETURN_IF_ERROR(api::CheckSubmitAs(caller, request.as_user));
  PP_RETURN_IF_ERROR(CheckPriority(options_.priority, caller, options_.daemon_uid, request.priority, *users_));
  auto user = request.as_user.empty() ? users_->ByUid(caller.uid) : users_->ByName(request.as_user);
  if (!user.ok()) {
    if (!request.as_user.empty()) return InvalidArgument(user.status().message());
    user = UserInfo{caller.uid, caller.gid, "uid " + std::to_string(caller.uid), {caller.gid}};
  }
  if (options_.daemon_uid != 0 && user->uid != options_.daemon_uid) {
    return PermissionDenied("pinpointd runs as uid " + std::to_string(options_.daemon_uid) +
                            " and cannot start jobs as " + user->name + "; run it as root");
  }
  JobRecord r;
  r.uid = user->uid;
  r.gid = user->gid;
  r.user = user->name;
  r.request = std::move(request);
  PP_RETURN_IF_ERROR(sched::CheckFits(DemandOf(r), options_.inventory));
  PP_RETURN_IF_ERROR(sched::CheckUserLimit(DemandOf(r), UserLimitOf(r.user), options_.inventory));
  PP_RETURN_IF_ERROR(CheckJobRoom(active_, r, jobs, options_.max_jobs,
                                  caller.IsRoot() ? 0 : options_.max_jobs_per_user, caller.IsRoot()));
  PP_RETURN_IF_ERROR(CheckRequestBytes(r, jobs, held_bytes_.Of(r.uid), options_.max_request_bytes,
                                       caller.IsRoot() ? 0 : options_.max_user_request_bytes));
  return r;
}

Result<JobRecord> Node::ResubmittedJob(const JobRecord& first, const JobRequest& request) const {
  if (first.array.array_id != 0 || ToJson(first.request) != ToJson(request)) {
    return FailedPrecondition("idempotency key already used for job " + std::to_string(first.id) +
                              ", which asked for something else; use a new key for a new job");
  }
  auto active = active_.find(first.id);
  return active != active_.end() ? active->second : first;
}

Result<JobRecord*> Node::ControlledJob(const api::Caller& caller, JobId id) {
  auto it = active_.find(id);
  if (it == active_.end()) {
    auto stored = deps_.store->Get(id);
    if (!stored.ok()) return NotFound("no job " + std::to_string(id));
    if (!api::MayControlJob(caller, stored->uid))
      return PermissionDenied("job " + std::to_string(id) + " belongs to " + stored->user);
    return FailedPrecondition("job " + std::to_string(id) + " already ended (" +
                              JobStateName(stored->state) + ")");
  }
  JobRecord& job = it->second;
  if (!api::MayControlJob(caller, job.uid))
    return PermissionDenied("job " + std::to_string(id) + " belongs to " + job.user);
  if (IsFinal(job.state))
    return FailedPrecondition("job " + std::to_string(id) + " already ended (" + JobStateName(job.state) + ")");
  return &job;
}

std::vector<Status> Node::Cancel(const api::Caller& caller, const std::vector<JobId>& ids,
                                 uint64_t max_rewrite_bytes) {
  std::vector<Status> out(ids.size());
  RewriteBudget budget(max_rewrite_bytes);
  std::string by = NameOrUid(*users_, caller.uid);
  // One batch for every cancel: the thousand tasks of a job array cost one fsync, not a thousand.
  // Without a batch (the store refused one) each is its own transaction: slower, as safe.
  auto batch = deps_.store->BeginBatch();
  struct Change {
    size_t at;
    JobRecord* job;
    JobRecord before;
  };
  std::vector<Change> changes;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto found = ControlledJob(caller, ids[i]);
    if (!found.ok()) {
      out[i] = found.status();
      continue;
    }
    JobRecord& job = **found;
    if (job.cancel_requested) continue;  // ok again
    if (!budget.Spend(RecordBytes(job))) {
      for (size_t k = i; k < ids.size(); ++k) out[k] = NotReached();
      break;
    }
    JobRecord before = job;
    lifecycle::Cancel(job, by, deps_.clock->NowMs());
    // A pending job ends at once; a running one is stopped once its cancel is recorded.
    Status s = IsFinal(job.state) ? Persist(job, "end", job.detail) : Persist(job, "cancel-request", "by " + by);
    if (!s.ok()) {
      job = std::move(before);  // not recorded: nothing changed, a later cancel tries again
      out[i] = s;
      continue;
    }
    changes.push_back({i, &job, std::move(before)});
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  for (Change& change : changes) {
    JobRecord& job = *change.job;
    if (!committed.ok()) {
      // A pending job stays pending rather than come back after a restart.
      job = std::move(change.before);
      out[change.at] = committed;
    } else if (IsFinal(job.state)) {
      dirty_ = true;  // stays in active_ until the next Step reports it ended, for its waiters
    } else {
      SafeStop(job);
    }
  }
  return out;
}

void Node::SafeStop(JobRecord& job) {
  // The MPS server lets go of the job's clients before any signal reaches them, so the server
  // and the neighbours on the device are never left in an undefined state.
  std::vector<int64_t> pids;
  for (const auto& a : job.allocations) {
    if (a.mode != AllocationMode::kMps) continue;
    if (pids.empty()) pids = ProcessesOf(job);
    Status t = deps_.mps->TerminateClients(SliceOf(job, a), pids, static_cast<uint64_t>(job.id));
    if (!t.ok()) spdlog::warn("job {}: terminate_client: {}", job.id, t.message());
  }
  kill_at_ms_[job.id] = deps_.clock->NowMs() + options_.cancel_grace_ms;
  // The server's answer comes later (never waited on): Step sends SIGTERM once it has come, or
  // once it is overdue; the SIGKILL deadline holds either way.
  if (deps_.mps->Terminating(static_cast<uint64_t>(job.id))) {
    term_pending_.insert(job.id);
    return;
  }
  Status s = SignalJob(job, SIGTERM);
  if (s.code() == Code::kUnavailable) term_pending_.insert(job.id);  // not started yet: Step sends it
  else if (!s.ok()) spdlog::warn("job {}: {}", job.id, s.ToString());
}

void Node::StopJob(JobRecord& job, const char* stop_reason, std::string detail) {
  if (!lifecycle::Stop(job, stop_reason, std::move(detail))) return;
  Status s = Persist(job, "stop", job.stop_detail);
  if (!s.ok()) spdlog::error("job {}: cannot record stop: {}", job.id, s.ToString());
  spdlog::warn("job {}: {}: stopping it", job.id, job.stop_detail);
  SafeStop(job);
}

Result<JobRecord> Node::Get(JobId id) const {
  auto it = active_.find(id);
  if (it != active_.end()) return it->second;
  auto r = deps_.store->Get(id);
  if (!r.ok() && r.status().code() == Code::kNotFound) return NotFound("no job " + std::to_string(id));
  return r;
}

namespace {

// A listing's copy of a job: everything but its environment, which only `show` carries. One
// environment is copied at a time, never a page of them.
JobRecord WithoutEnv(const JobRecord& job) {
  JobRecord copy = job;
  copy.request.env.clear();
  return copy;
}

}  // namespace

Result<Node::Page> Node::List(bool all, std::optional<uint32_t> uid, int offset, int limit,
                              const EndRange& ended) const {
  if (offset < 0 || limit <= 0) return InvalidArgument("a page needs offset >= 0 and limit > 0");
  Page page;
  bool by_end = ended.after_ms || ended.before_ms;
  if (all || by_end) {
    store::ListFilter filter;
    filter.uid = uid;
    if (by_end) {
      filter.states = {JobState::kCompleted, JobState::kFailed, JobState::kCancelled};
      filter.end_ms_min = ended.after_ms;
      filter.end_ms_max = ended.before_ms;
    }
    filter.limit = limit;
    filter.offset = offset;
    filter.omit_env = true;
    auto total = deps_.store->Count(filter);
    if (!total.ok()) return total.status();
    page.total = *total;
    auto ids = deps_.store->ListIds(filter);
    if (!ids.ok()) return ids.status();
    page.jobs.reserve(ids->size());
    for (JobId id : *ids) {
      // An active job from memory (which holds pending reasons), without reading its record.
      auto it = active_.find(id);
      if (it != active_.end()) {
        page.jobs.push_back(WithoutEnv(it->second));
        continue;
      }
      auto stored = deps_.store->Get(id);
      if (!stored.ok()) return stored.status();
      stored->request.env.clear();
      page.jobs.push_back(std::move(stored).value());
    }
    return page;
  }
  // Only the page is copied: a queue of 10,000 jobs costs one pass, not 10,000 records.
  for (const auto& [id, r] : active_) {
    if (uid && r.uid != *uid) continue;
    if (page.total >= offset && page.total < int64_t{offset} + limit) page.jobs.push_back(WithoutEnv(r));
    ++page.total;
  }
  return page;
}

Result<std::vector<store::JobEvent>> Node::Events(JobId id) const { return deps_.store->Events(id); }

Result<LogsReply> Node::Logs(const api::Caller& caller, const LogsRequest& request) const {
  auto job = Get(request.id);
  if (!job.ok()) return job.status();
  if (!api::MayControlJob(caller, job->uid))
    return PermissionDenied("job " + std::to_string(request.id) + " belongs to " + job->user);
  // A file the job's user chose is never read by pinpointd, which runs as root: the user reads it.
  bool out = request.stream == LogStream::kStdout;
  const std::string& pattern = out || job->request.error_path.empty() ? job->request.output_path
                                                                       : job->request.error_path;
  if (!pattern.empty())
    return FailedPrecondition("job " + std::to_string(request.id) + " writes its " +
                              LogStreamName(request.stream) + " to " + OutputFile(*job, pattern) +
                              " (submit -o/-e): read it there");
  LogsReply reply{request.id, request.stream, "", request.from_offset.value_or(0), IsFinal(job->state)};
  // The log files belong to the job's user: read without following a link, bounded.
  auto dir = OpenDirNoFollow(JobDir(request.id));
  if (!dir.ok() && dir.status().code() == Code::kNotFound) return reply;
  if (!dir.ok()) return dir.status();
  auto range = ReadFileRangeAt(dir->get(), LogStreamName(request.stream), request.from_offset, request.max_bytes);
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

std::vector<JobId> Node::Step() {
  std::vector<JobId> ended;
  deps_.launcher->Reap();
  RetryUnpersistedEnds();
  ApplyWatch();
  int64_t now = deps_.clock->NowMs();
  std::vector<JobId> running;
  for (const auto& [id, job] : active_) {
    if (job.state == JobState::kRunning) running.push_back(id);
  }
  std::vector<std::pair<JobId, launch::ExitStatus>> exits;
  std::vector<std::pair<JobId, std::string>> lease_ends;
  for (JobId id : running) {
    JobRecord& job = active_[id];
    if (job.kind == JobKind::kLease) {
      auto cause = PollLease(job, now);
      if (cause) {
        lease_ends.emplace_back(id, *cause);
        continue;
      }
    }
    auto status = job.kind == JobKind::kLease ? std::nullopt : deps_.launcher->Poll(Handle(job));
    if (status && status->kind == launch::ExitStatus::Kind::kOrphaned) {
      HandleOrphan(job);
      status.reset();  // still running: its processes live
    }
    if (status) {
      exits.emplace_back(id, *status);
      continue;
    }
    EnforceTimeLimit(job, now);
    if (term_pending_.count(id) && !deps_.mps->Terminating(static_cast<uint64_t>(id)) &&
        SignalJob(job, SIGTERM).code() != Code::kUnavailable)
      term_pending_.erase(id);
    auto kill = kill_at_ms_.find(id);
    if (kill != kill_at_ms_.end() && now >= kill->second) {
      Status s = SignalJob(job, SIGKILL);
      if (s.code() != Code::kUnavailable) {  // not started yet: the next pass tries again
        if (!s.ok()) spdlog::warn("job {}: {}", id, s.ToString());
        kill->second = INT64_MAX;  // once
      }
    }
  }
  // MPS events are read after the exits and before judging them: a fault's line is in the server
  // log before its victims exit, so every victim collected here is known as one.
  HandleMpsEvents();
  RecordEnds(exits, lease_ends);
  if (dirty_) Schedule();
  // Collects every job that ended in this pass, polled or failed to launch inside Schedule.
  for (auto it = active_.begin(); it != active_.end();) {
    if (!IsFinal(it->second.state)) {
      ++it;
      continue;
    }
    auto unpersisted = unpersisted_ends_.find(it->first);
    if (unpersisted == unpersisted_ends_.end() || !unpersisted->second) {
      ended.push_back(it->first);
      ended_total_[{JobStateName(it->second.state), it->second.reason}] += 1;
    }
    if (unpersisted != unpersisted_ends_.end()) {
      unpersisted->second = true;  // reported once; kept in memory until it is stored
      ++it;
    } else {
      held_bytes_.Remove(it->second);
      it = active_.erase(it);
    }
  }
  UpdateWatchedJobs();
  return ended;
}

void Node::Schedule() {
  dirty_ = false;
  sched::Snapshot snap;
  snap.inventory = options_.inventory;
  for (const auto& [device, jobs] : recovering_) snap.inventory.devices.at(static_cast<size_t>(device)).drained = true;
  snap.user_limits.defaults = options_.default_user_limit;
  for (auto& [id, job] : active_) {
    if (!options_.user_limits.empty() && !IsFinal(job.state)) {
      auto limit = options_.user_limits.find(job.user);
      if (limit != options_.user_limits.end()) snap.user_limits.by_uid[job.uid] = limit->second;
    }
    if (job.state == JobState::kPending && !job.cancel_requested) {
      // A held job cannot start, and its reason was given when it was held: it costs a pass
      // nothing, however many a user holds (unless a dependency could end it).
      if (job.hold != Hold::kNone && job.request.afterok.empty()) {
        if (job.reason != reason::kHeld) lifecycle::Waiting(job, reason::kHeld, sched::HeldDetail(job.id, job.hold));
        continue;
      }
      // So does a job already waiting on jobs that all run: none of them can end in this pass.
      if (WaitsOnRunningJobs(job)) continue;
      snap.pending.push_back(DemandOf(job));
      continue;
    }
    if (job.state != JobState::kRunning) continue;  // ended in this pass, erased after it
    sched::RunningJob rj;
    rj.id = id;
    rj.uid = job.uid;
    rj.cpus = job.request.cpus;
    rj.mem_bytes = job.request.mem_bytes;
    rj.array_id = job.array.array_id;
    rj.slots = SlotsOf(job);
    snap.running.push_back(std::move(rj));
  }
  for (const auto& [id, s] : settling_) snap.running.push_back({id, s.uid, 0, 0, s.slots});
  if (snap.pending.empty()) return;
  if (deps_.watcher != nullptr) {  // how busy each GPU was of late, for spreading slices
    std::map<int, int> busy = deps_.watcher->BusyByGpu();
    for (auto& d : snap.inventory.devices)
      if (auto it = busy.find(d.gpu_index); it != busy.end()) d.busy_pct = it->second;
  }
  snap.dependencies = DependencyStates(snap.pending);
  sched::Plan plan = sched::Schedule(snap);
  EndNeverStarting(plan.never_start);
  for (const auto& wait : plan.waits) {
    auto it = active_.find(wait.id);
    if (it == active_.end()) continue;
    std::string detail = wait.detail;
    if (wait.mps_uid) detail += "; uid " + std::to_string(*wait.mps_uid) + " is " + NameOrUid(*users_, *wait.mps_uid);
    lifecycle::Waiting(it->second, wait.reason, std::move(detail));
  }
  // Two store transactions (two fsyncs) for the starts of a pass, however many: the records
  // before any launch, the supervisors' pids after the last.
  std::vector<JobId> launched;
  for (JobId id : RecordStarts(plan.starts)) {
    if (LaunchJob(active_.at(id))) launched.push_back(id);
  }
  RecordPids(launched);
}

std::vector<Allocation> Node::AllocationsFor(const std::vector<sched::Slot>& slots) const {
  std::vector<Allocation> allocations;
  for (const auto& slot : slots) {
    const sched::Device& d = options_.inventory.devices.at(static_cast<size_t>(slot.device_index));
    Allocation a;
    a.device_index = d.index;
    a.uuid = d.uuid;
    a.gpu_mem_bytes = slot.gpu_mem_bytes;
    a.gpu_share_pct = slot.gpu_share_pct;
    a.mode = d.mode == sched::SharingMode::kMps ? AllocationMode::kMps : AllocationMode::kTimeslice;
    if (slot.gpu_mem_bytes == 0 || d.mode == sched::SharingMode::kExclusive)
      a.mode = AllocationMode::kExclusive;
    // One process can be the client of one MPS server only (docs/design.md).
    if (a.mode == AllocationMode::kMps && slots.size() > 1) a.mode = AllocationMode::kTimeslice;
    allocations.push_back(a);
  }
  return allocations;
}

std::vector<JobId> Node::RecordStarts(const std::vector<sched::Start>& starts) {
  std::vector<std::pair<JobId, JobRecord>> pending;  // each started job as it was before
  // Without a batch (the store refused one) each start is its own transaction: slower, as safe.
  auto batch = deps_.store->BeginBatch();
  for (const auto& start : starts) {
    auto it = active_.find(start.id);
    if (it == active_.end()) continue;
    JobRecord& job = it->second;
    JobRecord before = job;
    lifecycle::Started(job, AllocationsFor(start.slots), deps_.clock->NowMs());
    settling_.erase(job.id);  // requeued and started again: the watcher watches it as before
    Status s = Persist(job, "start", "");
    if (!s.ok()) {
      spdlog::error("job {}: cannot record start, leaving it pending: {}", job.id, s.ToString());
      job = std::move(before);
      dirty_ = true;  // tried again next pass
      continue;
    }
    pending.emplace_back(job.id, std::move(before));
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  std::vector<JobId> started;
  for (auto& [id, before] : pending) {
    if (committed.ok()) {
      started.push_back(id);
      continue;
    }
    spdlog::error("job {}: cannot record start, leaving it pending: {}", id, committed.ToString());
    active_[id] = std::move(before);
    dirty_ = true;
  }
  return started;
}

void Node::RecordPids(const std::vector<JobId>& launched) {
  if (launched.empty()) return;
  auto batch = deps_.store->BeginBatch();
  std::vector<JobId> recorded;
  for (JobId id : launched) {
    Status s = Persist(active_.at(id), nullptr, "");
    if (s.ok()) recorded.push_back(id);
    else spdlog::error("job {}: cannot record pid: {}", id, s.ToString());
  }
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  if (committed.ok()) return;
  // The job runs all the same; a restarted daemon finds it through its directory's lock.
  for (JobId id : recorded) spdlog::error("job {}: cannot record pid: {}", id, committed.ToString());
}

Result<std::vector<std::string>> Node::JobEnvironment(const JobRecord& job) {
  std::map<std::string, std::string> env = job.request.env;
  std::string visible;
  for (const auto& a : job.allocations) visible += (visible.empty() ? "" : ",") + a.uuid;
  env["CUDA_VISIBLE_DEVICES"] = visible;  // empty for CPU-only jobs: they see no GPU
  env["PINPOINT_JOB_ID"] = std::to_string(job.id);
  env["PINPOINT_GPU_UUIDS"] = visible;
  SetArrayEnvironment(job.array, env);
  for (const char* name : {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY",
                           "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"}) {
    env.erase(name);  // a client never chooses its own MPS server or limits
  }
  // One process can be the client of one MPS server only, so only single-device slices use MPS;
  // multi-device slices are time-sliced (docs/design.md).
  if (job.allocations.size() == 1 && job.allocations[0].mode == AllocationMode::kMps) {
    const Allocation& a = job.allocations[0];
    auto mps_env = deps_.mps->PrepareClient(SliceOf(job, a));
    if (!mps_env.ok()) return mps_env.status();
    for (const auto& [k, v] : *mps_env) env[k] = v;
  }
  if (job.request.gpu_mem_bytes > 0) env["PINPOINT_GPU_MEM_BYTES"] = std::to_string(job.request.gpu_mem_bytes);
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

bool Node::LaunchJob(JobRecord& job) {
  auto env = JobEnvironment(job);
  launch::ExitStatus failed;
  failed.kind = launch::ExitStatus::Kind::kLaunchFailed;
  if (!env.ok() && env.status().code() == Code::kFailedPrecondition) {
    // The device's MPS server still serves another user: wait rather than fail.
    Requeue(job, env.status().message(), lifecycle::kReasonMpsUser, /*release_resources=*/false);
    return false;
  }
  if (!env.ok()) {
    failed.error = env.status().message();
    job.allocations.clear();  // it never became a client: nothing to release
    if (job.kind == JobKind::kLease) {
      EndLease(job, reason::kLaunchFailed);
      return false;
    }
    Finish(job, failed);
    return false;
  }
  if (job.kind == JobKind::kLease) {
    StartLease(job, *env);
    return false;  // no supervisor, no pid
  }
  launch::LaunchSpec spec;
  spec.job_id = job.id;
  spec.argv = job.request.argv;
  spec.cwd = job.request.cwd;
  spec.umask = job.request.umask >= 0 ? job.request.umask : 077;
  spec.env = std::move(env).value();
  spec.switch_user = options_.daemon_uid == 0 && job.uid != 0;
  spec.uid = job.uid;
  spec.gid = job.gid;
  if (spec.switch_user) {
    auto user = users_->ByUid(job.uid);
    spec.groups = user.ok() ? user->groups : std::vector<uint32_t>{job.gid};
  }
  spec.job_dir = JobDir(job.id);
  spec.stdout_path = OutputFile(job, job.request.output_path);
  spec.stderr_path = job.request.error_path.empty() ? spec.stdout_path : OutputFile(job, job.request.error_path);
  if (deps_.cgroups != nullptr && deps_.cgroups->enabled()) {
    auto dir = deps_.cgroups->CreateJobGroup(job.id, job.request.cpus, job.request.mem_bytes);
    if (dir.ok()) spec.cgroup_dir = *dir;
    else spdlog::warn("job {}: running without host limits: {}", job.id, dir.status().message());
  }
  auto handle = deps_.launcher->Launch(spec);
  if (!handle.ok()) {
    failed.error = handle.status().message();
    Finish(job, failed);
    return false;
  }
  job.pid = handle->pid;
  job.pid_start_ticks = handle->pid_start_ticks;
  ++starts_total_;
  return true;
}

void Node::Requeue(JobRecord& job, const std::string& why, const char* reason_code,
                   bool release_resources) {
  if (release_resources) ReleaseResources(job);
  lifecycle::Requeued(job, reason_code, why);
  PersistRequeue(job);
}

void Node::PersistRequeue(const JobRecord& job) {
  Status s = Persist(job, "requeue", job.detail);
  if (!s.ok()) spdlog::error("job {}: {}", job.id, s.ToString());
  dirty_ = true;
}

void Node::ReleaseResources(const JobRecord& job) {
  // The watcher looks at its GPUs once more before they go to anyone else.
  if (deps_.watcher != nullptr && watched_.count(job.id) && !job.allocations.empty()) {
    settling_[job.id] = Settling{job.uid, SlotsOf(job)};
  }
  for (const auto& a : job.allocations) {
    if (a.mode == AllocationMode::kMps) deps_.mps->ReleaseClient(SliceOf(job, a));
  }
  if (deps_.cgroups != nullptr && deps_.cgroups->enabled() && job.kind == JobKind::kJob) {
    Status s = deps_.cgroups->RemoveJobGroup(job.id);
    if (!s.ok()) spdlog::warn("job {}: {}", job.id, s.message());
  }
}

void Node::Finish(JobRecord& job, const launch::ExitStatus& status) {
  ReleaseResources(job);
  lifecycle::EndFacts facts;
  facts.exit = status;
  facts.mps_fault = LeaveFaultRecovery(job);
  facts.policy = options_.mps_fault_policy;
  facts.now_ms = deps_.clock->NowMs();
  lifecycle::JobEnd end = lifecycle::DecideEnd(job, facts);
  lifecycle::ApplyEnd(end, job);
  if (end.requeue) {
    kill_at_ms_.erase(job.id);  // the deadline and the orphan were the ended run's
    term_pending_.erase(job.id);
    orphans_.erase(job.id);
    PersistRequeue(job);  // resources were released above
    return;
  }
  PersistEnd(job);
}

void Node::RecordEnds(const std::vector<std::pair<JobId, launch::ExitStatus>>& exits,
                      const std::vector<std::pair<JobId, std::string>>& lease_ends) {
  if (exits.empty() && lease_ends.empty()) return;
  // Jobs that end together (N equal jobs of a batch) cost one fsync, not one each. Without a
  // batch (the store refused one) each end is its own transaction.
  auto batch = deps_.store->BeginBatch();
  std::vector<JobId> ends;
  if (batch.ok()) ends_in_batch_ = &ends;
  for (const auto& [id, status] : exits) Finish(active_[id], status);
  for (const auto& [id, cause] : lease_ends) EndLease(active_[id], cause);
  ends_in_batch_ = nullptr;
  Status committed = batch.ok() ? batch->Commit() : Status::Ok();
  if (committed.ok()) return;
  spdlog::error("cannot record the ends and requeues of this pass: {}", committed.ToString());
  for (JobId id : ends) KeepUnpersistedEnd(active_[id], committed);
}

void Node::PersistEnd(JobRecord& job) {
  kill_at_ms_.erase(job.id);
  term_pending_.erase(job.id);
  orphans_.erase(job.id);
  dirty_ = true;
  Status s = Persist(job, "end", job.detail);
  if (!s.ok()) return KeepUnpersistedEnd(job, s);
  if (ends_in_batch_ != nullptr) ends_in_batch_->push_back(job.id);
}

void Node::KeepUnpersistedEnd(const JobRecord& job, const Status& why) {
  // The end is known (the shim's exit status stays on disk too): answer from memory and retry.
  spdlog::error("job {}: cannot record its end ({}) yet: {}; kept in memory, retried each pass",
                job.id, JobStateName(job.state), why.ToString());
  unpersisted_ends_.emplace(job.id, false);
}

void Node::RetryUnpersistedEnds() {
  for (auto it = unpersisted_ends_.begin(); it != unpersisted_ends_.end();) {
    auto job = active_.find(it->first);
    if (job == active_.end()) {
      it = unpersisted_ends_.erase(it);
      continue;
    }
    if (!Persist(job->second, "end", job->second.detail).ok()) {
      ++it;
      continue;
    }
    spdlog::info("job {}: its end ({}) is recorded now", it->first,
                 JobStateName(job->second.state));
    if (it->second) {  // already reported as ended
      held_bytes_.Remove(job->second);
      active_.erase(job);
    }
    it = unpersisted_ends_.erase(it);
  }
}

void Node::HandleOrphan(JobRecord& job) {
  if (!orphans_.insert(job.id).second) return;
  spdlog::error("job {}: its supervisor (pinpoint-shim, pid {}) died while the job's processes "
                "still run; they keep their resources until they are ended", job.id, job.pid);
  lifecycle::SupervisorLost(job);
  Status s = Persist(job, "supervisor-lost", "the supervisor died; ending the job's processes");
  if (!s.ok()) spdlog::warn("job {}: {}", job.id, s.ToString());
  if (!kill_at_ms_.count(job.id)) SafeStop(job);
}

}  // namespace pinpoint::daemon
