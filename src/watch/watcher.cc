#include "watch/watcher.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "common/file_util.h"

namespace pinpoint::watch {

Watcher::Watcher(WatcherOptions options, gpu::GpuBackend* backend, ProcessOwner* owner,
                 Clock* clock)
    : options_(std::move(options)),
      backend_(backend),
      owner_(owner),
      clock_(clock),
      accountant_(options_.accountant) {}

Watcher::~Watcher() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status Watcher::Start() {
  if (wake_fd_ < 0) {
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) return IoError("eventfd: " + ErrnoText(errno));
  }
  if (thread_.joinable()) return Status::Ok();
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void Watcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watcher::SetJobs(std::vector<WatchedJob> jobs) {
  std::lock_guard lock(mu_);
  std::set<JobId> now;
  for (const auto& j : jobs) now.insert(j.id);
  bool left = false;
  for (const auto& old : jobs_) {
    if (!now.count(old.id)) {
      closing_[old.id] = Closing{old, false, clock_->NowMs()};
      left = true;
    }
  }
  for (JobId id : now) closing_.erase(id);  // requeued and started again: watched as before
  // A job new to the set is looked at soon: what its first process was given is read before a
  // short job ends (NoteLeaders).
  bool started = false;
  for (const auto& j : jobs)
    started = started || std::none_of(jobs_.begin(), jobs_.end(),
                                      [&](const WatchedJob& old) { return old.id == j.id; });
  jobs_ = std::move(jobs);
  if (left || started) {
    poll_soon_ = true;
    stop_cv_.notify_all();
  }
}

void Watcher::Resume(WatchedJob job, int64_t since_ms) {
  std::lock_guard lock(mu_);
  JobId id = job.id;
  closing_[id] = Closing{std::move(job), true, since_ms};
  poll_soon_ = true;
  stop_cv_.notify_all();
}

WatchUpdate Watcher::Take() {
  std::lock_guard lock(mu_);
  WatchUpdate out = std::move(pending_);
  pending_ = WatchUpdate{};
  if (wake_fd_ >= 0) {
    uint64_t drained = 0;
    while (::read(wake_fd_, &drained, sizeof(drained)) > 0) {
    }
  }
  return out;
}

std::map<int, int> Watcher::BusyByGpu() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<int, int> busy;
  for (const auto& [gpu, account] : view_.accounts) {
    if (account.busy_pct >= 0) busy[gpu] = static_cast<int>(account.busy_pct + 0.5);
  }
  return busy;
}

WatchView Watcher::Latest() const {
  std::lock_guard lock(mu_);
  return view_;
}

Lingering Watcher::LingeringOn(const WatchedJob& job, const std::vector<GpuReading>& readings,
                               const std::map<int64_t, JobId>& owners,
                               const std::map<JobId, std::set<int>>& gpus_of) const {
  std::set<int> gpus;
  for (const auto& slot : job.slots) gpus.insert(slot.gpu_index);
  Lingering left;
  for (const auto& r : readings) {
    if (!gpus.count(r.gpu_index)) continue;
    for (const auto& p : r.sample.processes) {
      auto owner = owners.find(p.pid);
      bool owned = owner != owners.end() && owner->second == job.id;
      // Another job's process on a GPU of that job's is left alone; one that names a job of its
      // user (PINPOINT_JOB_ID, or a sibling's session) on a GPU that job does not hold is in
      // no job here: it holds this GPU like any process of the user (issue 55).
      if (owner != owners.end() && !owned) {
        auto held = gpus_of.find(owner->second);
        if (held != gpus_of.end() && held->second.count(r.gpu_index)) continue;
      }
      if (owned) {
        left.owned.push_back(p.pid);
      } else if (owner_->UsersOwnProcess(p.pid, job.uid)) {
        left.loose.push_back(p.pid);
      } else {
        continue;
      }
      left.gpu_of.emplace(p.pid, r.gpu_index);
    }
  }
  return left;
}

void Watcher::KillLeftovers(const WatchedJob& job, int64_t now_ms, Lingering* left) {
  // The job's own processes outlived it (the launcher kills them before it reports an end, so
  // one is seen only when it escaped that look): they go now.
  for (int64_t pid : left->owned) KillHolder(pid, job.uid, now_ms, left);
  // Its user's processes in no job go at the deadline: pidfd-pinned and only while every uid of
  // theirs is the user's, so another user's process or a set-user-id program is never hit.
  if (left->deadline_ms < 0 || now_ms < left->deadline_ms) return;
  for (int64_t pid : left->loose)
    if (KillHolder(pid, job.uid, now_ms, left)) left->killed.push_back(pid);
}

bool Watcher::KillHolder(int64_t pid, uint32_t uid, int64_t now_ms, Lingering* left) {
  // Reported as what happened: a process pinpointd may not signal, or one that outlived its
  // SIGKILL, is no "killed" holder; its GPU stays held and is drained (WatchFeedback).
  if (!owner_->KillUsersProcess(pid, uid)) {
    left->unkillable.push_back(pid);
    return false;
  }
  auto sent = kill_sent_ms_.emplace(pid, now_ms).first;
  if (now_ms - sent->second >= options_.kill_grace_ms) left->unkillable.push_back(pid);
  return true;
}

std::vector<JobId> Watcher::NoteSeen(const std::vector<GpuReading>& readings,
                                     const std::map<int64_t, JobId>& accounted,
                                     const std::vector<WatchedJob>& ownable) {
  std::set<JobId> changed;
  std::map<JobId, const WatchedJob*> jobs;
  for (const WatchedJob& job : ownable) jobs.emplace(job.id, &job);
  for (const GpuReading& r : readings) {
    for (const auto& p : r.sample.processes) {
      auto owner = accounted.find(p.pid);
      if (owner == accounted.end()) continue;
      JobId id = owner->second;
      JobSeen& seen = seen_[id];
      auto at = std::lower_bound(seen.gpus.begin(), seen.gpus.end(), r.gpu_index);
      if (at == seen.gpus.end() || *at != r.gpu_index) {
        seen.gpus.insert(at, r.gpu_index);
        changed.insert(id);
      }
      // Each of its GPU processes once: what it really runs with (a process can change what it
      // was given: an exec with another environment, a child that sets its own limit).
      auto job = jobs.find(id);
      if (job == jobs.end() || env_read_pids_[id].count(p.pid)) continue;
      auto values = ReadEnvironment(p.pid, *job->second, ownable, /*need_key=*/false);
      if (!values) continue;
      env_read_pids_[id].insert(p.pid);
      if (!seen.env_read) {
        seen.env_read = true;
        seen.env = *values;
      }
      ++seen.gpu_env_reads;
      for (const auto& [name, value] : *values) {
        std::vector<std::string>& known = seen.gpu_env[name];
        if (known.size() < Readback::kMaxValuesSeen &&
            std::find(known.begin(), known.end(), value) == known.end())
          known.push_back(value);
      }
      changed.insert(id);
    }
  }
  return {changed.begin(), changed.end()};
}

std::optional<std::map<std::string, std::string>> Watcher::ReadEnvironment(
    int64_t pid, const WatchedJob& job, const std::vector<WatchedJob>& ownable, bool need_key) {
  // A job whose processes never carry its key costs at most kMaxEnvReads reads, whatever it does.
  int& reads = env_reads_[job.id];
  if (reads >= kMaxEnvReads) return std::nullopt;
  ++reads;
  std::optional<std::string> environ = owner_->Environ(pid);
  if (!environ) return std::nullopt;
  // One pass over what may be MiBs: the job's key and the variables its limits name.
  std::string key = std::to_string(job.id);
  bool keyed = false;
  std::map<std::string, std::string> values;
  for (const std::string& name : job.env_vars) values[name] = "";
  std::string_view text = *environ;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\0', start), text.size());
    std::string_view entry = text.substr(start, end - start);
    start = end + 1;
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (name == "PINPOINT_JOB_ID") {
      keyed = value == key;
      continue;
    }
    auto wanted = values.find(std::string(name));
    if (wanted != values.end()) wanted->second = value;
  }
  if ((need_key && !keyed) || owner_->OwnerOf(pid, ownable) != job.id) return std::nullopt;
  return values;
}

std::vector<JobId> Watcher::NoteLeaders(const std::vector<WatchedJob>& running,
                                        const std::vector<WatchedJob>& ownable, bool window_only) {
  std::vector<JobId> changed;
  int64_t now = clock_->NowMs();
  // At most kLeadersPerCheck jobs a check, taken in turn from where the last check stopped: the
  // reads of many jobs started at once are spread out, and no user's jobs keep another's waiting.
  size_t tried = 0, n = 0;
  for (; n < running.size() && tried < kLeadersPerCheck; ++n) {
    const WatchedJob& job = running[(leader_cursor_ + n) % running.size()];
    if (job.session_id <= 0) continue;
    auto it = seen_.find(job.id);
    if (it != seen_.end() && it->second.env_read) continue;
    // Between polls only in its first kLeaderWindow; at each poll until read (a job whose first
    // process was not there yet, on a loaded node, is read later rather than never).
    auto first = first_seen_.find(job.id);
    if (first == first_seen_.end() || (window_only && now - first->second > kLeaderWindow.count()))
      continue;
    ++tried;
    for (int64_t child : owner_->ChildrenOf(job.session_id)) {
      auto values = ReadEnvironment(child, job, ownable, /*need_key=*/true);
      if (!values) continue;
      JobSeen& seen = seen_[job.id];
      seen.env_read = true;
      seen.env = std::move(*values);
      changed.push_back(job.id);
      break;
    }
  }
  if (!running.empty()) leader_cursor_ = (leader_cursor_ + n) % running.size();
  return changed;
}

Watcher::Round Watcher::BeginRound() {
  Round round;
  {
    std::lock_guard lock(mu_);
    poll_soon_ = false;
    round.watched = jobs_;
    round.running = jobs_;
    for (const auto& [id, c] : closing_) {
      if (!c.closed) round.watched.push_back(c.job);
      round.closing.push_back(c.job);
      round.since[id] = c.since_ms;
    }
  }
  for (const WatchedJob& j : round.watched) round.accounted_ids.insert(j.id);
  round.ownable = round.watched;
  for (const WatchedJob& j : round.closing)
    if (!round.accounted_ids.count(j.id)) round.ownable.push_back(j);
  return round;
}

std::vector<GpuReading> Watcher::ReadGpus() {
  std::vector<GpuReading> readings;
  for (int index : options_.gpu_indices) {
    GpuReading r;
    r.gpu_index = index;
    auto sample = backend_->Sample(index);
    if (sample.ok()) {
      r.ok = true;
      r.sample = std::move(sample).value();
    } else {
      r.error = sample.status().message();
    }
    readings.push_back(std::move(r));
  }
  return readings;
}

std::map<int64_t, JobId> Watcher::OwnersOf(const std::vector<GpuReading>& readings,
                                           const std::vector<WatchedJob>& ownable) {
  std::map<int64_t, JobId> owners;
  for (const auto& r : readings) {
    for (const auto& p : r.sample.processes) {
      if (owners.count(p.pid)) continue;
      auto owner = owner_->OwnerOf(p.pid, ownable);
      if (owner) owners[p.pid] = *owner;
    }
  }
  return owners;
}

std::map<JobId, Lingering> Watcher::LingeringOf(const Round& round,
                                                const std::vector<GpuReading>& readings,
                                                const std::map<int64_t, JobId>& owners,
                                                int64_t now_ms) {
  std::map<JobId, Lingering> lingering;
  std::map<JobId, std::set<int>> gpus_of;
  for (const WatchedJob& job : round.ownable)
    for (const auto& slot : job.slots) gpus_of[job.id].insert(slot.gpu_index);
  std::set<int64_t> holding;
  for (const WatchedJob& job : round.closing) {
    Lingering left = LingeringOn(job, readings, owners, gpus_of);
    if (left.owned.empty() && left.loose.empty()) continue;
    left.since_ms = round.since.at(job.id);
    if (options_.settle_deadline_ms >= 0)
      left.deadline_ms = left.since_ms + options_.settle_deadline_ms;
    KillLeftovers(job, now_ms, &left);
    for (const auto& [pid, gpu] : left.gpu_of) holding.insert(pid);
    lingering[job.id] = std::move(left);
  }
  std::erase_if(kill_sent_ms_, [&](const auto& sent) { return !holding.count(sent.first); });
  return lingering;
}

void Watcher::PollOnce() {
  Round round = BeginRound();
  int64_t first_ms = clock_->NowMs();
  std::set<JobId> running;
  for (const WatchedJob& job : round.running) {
    running.insert(job.id);
    first_seen_.emplace(job.id, first_ms);
  }
  for (auto it = first_seen_.begin(); it != first_seen_.end();) {
    if (running.count(it->first)) {
      ++it;
      continue;
    }
    env_reads_.erase(it->first);
    env_read_pids_.erase(it->first);
    it = first_seen_.erase(it);
  }
  auto started = std::chrono::steady_clock::now();
  std::vector<GpuReading> readings = ReadGpus();
  auto xids = backend_->TakeXidEvents();
  std::map<int64_t, JobId> owners = OwnersOf(readings, round.ownable);
  int64_t now = clock_->NowMs();
  // What still holds the GPUs of each job that left the set.
  std::map<JobId, Lingering> lingering = LingeringOf(round, readings, owners, now);
  std::map<int64_t, JobId> accounted;  // the processes of jobs whose usage is still charged
  for (const auto& [pid, id] : owners)
    if (round.accounted_ids.count(id)) accounted[pid] = id;
  PollResult result = accountant_.Update(now, round.watched, readings, accounted);
  std::vector<JobId> seen_changed = NoteSeen(readings, accounted, round.ownable);
  for (JobId id : NoteLeaders(round.running, round.ownable, /*window_only=*/false))
    seen_changed.push_back(id);
  auto duration_us = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::steady_clock::now() - started)
                         .count();

  std::lock_guard lock(mu_);
  view_.polls += 1;
  view_.poll_time_ms = now;
  view_.last_poll_duration_us = duration_us;
  view_.gpus = std::move(readings);
  view_.accounts = accountant_.gpus();
  PublishUsage(seen_changed);
  bool wake = PublishClosing(round.closing, lingering);
  if (xids.ok()) {
    for (const auto& x : *xids) {
      if (pending_.xids.size() >= WatchUpdate::kMaxPendingXids) break;
      pending_.xids.emplace_back(x, now);
    }
    if (!xids->empty()) wake = true;
  }
  std::set<JobId> closed_now;
  for (const WatchedJob& job : round.closing) closed_now.insert(job.id);
  for (const auto& o : result.over_budget) {
    if (closed_now.count(o.id)) continue;  // already ended
    pending_.over_budget.push_back(o);
    wake = true;
  }
  // What a job was given, read: the main loop takes it before the job can end unseen.
  if (wake || !seen_changed.empty()) Wake();
}

void Watcher::PublishUsage(const std::vector<JobId>& seen_changed) {
  view_.jobs.clear();
  view_.job_mem_by_gpu.clear();
  pending_.usage.clear();
  for (const auto& j : jobs_) {
    auto usage = accountant_.Usage(j.id);
    if (!usage) continue;
    view_.jobs[j.id] = *usage;
    view_.job_mem_by_gpu[j.id] = accountant_.MemByGpu(j.id);
    pending_.usage[j.id] = *usage;
  }
  for (JobId id : seen_changed) {
    if (auto it = seen_.find(id); it != seen_.end()) pending_.seen[id] = it->second;
  }
}

bool Watcher::PublishClosing(const std::vector<WatchedJob>& closing,
                             std::map<JobId, Lingering>& lingering) {
  bool wake = false;
  pending_.lingering.clear();
  for (const WatchedJob& job : closing) {
    const JobId id = job.id;
    // Still closing: SetJobs may have brought it back meanwhile.
    auto it = closing_.find(id);
    if (it == closing_.end()) continue;
    if (!it->second.closed) {
      auto usage = accountant_.Usage(id);
      if (usage) {
        usage->gpu_mem_now_bytes = 0;
        usage->final = true;
        pending_.closed[id] = *usage;
      }
      accountant_.Forget(id);
      seen_.erase(id);
      it->second.closed = true;
    }
    if (auto left = lingering.find(id); left != lingering.end()) {
      pending_.lingering[id] = std::move(left->second);
    } else {
      closing_.erase(it);
      pending_.settled.push_back(id);
    }
    wake = true;
  }
  return wake;
}

void Watcher::Run() {
  ::pthread_setname_np(::pthread_self(), "pp-watch");
  // Polls at once, so listings have readings right after a start, and then every interval.
  // A job that left the set is polled for at once (poll_soon_), so its GPUs settle quickly.
  // Between polls, while a job new to the set has not had its first process read, that alone is
  // looked at every kLeaderCheckMs (no GPU is sampled): a job that fails within a second is read.
  std::unique_lock lock(mu_);
  auto woken = [this] { return stopping_ || poll_soon_; };
  do {
    lock.unlock();
    PollOnce();
    bool leaders = LeadersDue();
    lock.lock();
    auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.interval_ms);
    while (leaders && std::chrono::steady_clock::now() < next) {
      if (stop_cv_.wait_for(lock, std::chrono::milliseconds(kLeaderCheckMs), woken)) break;
      lock.unlock();
      leaders = CheckLeaders();
      lock.lock();
    }
    stop_cv_.wait_until(lock, next, woken);
  } while (!stopping_);
}

bool Watcher::LeadersDue() const {
  int64_t now = clock_->NowMs();
  for (const auto& [id, since] : first_seen_) {
    auto seen = seen_.find(id);
    bool read = seen != seen_.end() && seen->second.env_read;
    if (!read && now - since <= kLeaderWindow.count()) return true;
  }
  return false;
}

bool Watcher::CheckLeaders() {
  std::vector<WatchedJob> running;
  std::vector<WatchedJob> ownable;
  {
    std::lock_guard lock(mu_);
    running = jobs_;
    ownable = jobs_;
  }
  std::vector<JobId> changed = NoteLeaders(running, ownable, /*window_only=*/true);
  if (!changed.empty()) {
    std::lock_guard lock(mu_);
    for (JobId id : changed) pending_.seen[id] = seen_[id];
    Wake();
  }
  return LeadersDue();
}

void Watcher::Wake() {
  if (wake_fd_ < 0) return;
  uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof(one)) < 0) {
    // The main loop still finds it at its next tick.
  }
}

}  // namespace pinpoint::watch
