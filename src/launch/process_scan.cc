#include "launch/process_scan.h"

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "common/file_util.h"

namespace pinpoint::launch {

namespace {

// /proc, listed in pid order (the kernel lists processes by ascending pid). The directory stays
// open between passes; a new pass seeks back to just before the last pid taken, so the kernel
// lists afresh from there and a process started since with a higher pid is seen.
class ProcSource : public ProcessScan::Source {
 public:
  ~ProcSource() override {
    if (dir_ != nullptr) ::closedir(dir_);
  }

  void Rewind() override {
    if (dir_ == nullptr) dir_ = ::opendir("/proc");
    if (dir_ != nullptr) ::rewinddir(dir_);
    before_last_ = -1;
  }

  std::optional<int64_t> Next(int64_t after, bool resume) override {
    if (dir_ == nullptr) return std::nullopt;
    // The position before the last pid taken lists it again, then whatever follows it now.
    if (resume && before_last_ >= 0) ::seekdir(dir_, before_last_);
    for (;;) {
      long before = ::telldir(dir_);
      dirent* e = ::readdir(dir_);
      if (e == nullptr) return std::nullopt;
      char* end = nullptr;
      long long pid = std::strtoll(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0' || pid <= after) continue;
      before_last_ = before;
      return static_cast<int64_t>(pid);
    }
  }

  std::optional<ProcStat> Stat(int64_t pid, uint32_t* owner) override {
    return ReadProcStat(pid, owner);
  }

  int64_t LastPid() override {
    // "0.00 0.01 0.05 1/123 4567\n": the last field is the last pid given out. The kernel's file,
    // a line long: no user writes it.
    auto text = ReadFile("/proc/loadavg");
    if (!text.ok()) return 0;
    auto last = text->find_last_of(' ');
    return last == std::string::npos ? 0 : std::strtoll(text->c_str() + last + 1, nullptr, 10);
  }

 private:
  DIR* dir_ = nullptr;
  long before_last_ = -1;
};

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ProcessScan::ProcessScan() : ProcessScan(SteadyMicros) {}

ProcessScan::ProcessScan(MicroClock clock)
    : ProcessScan(std::make_unique<ProcSource>(), std::move(clock)) {}

ProcessScan::ProcessScan(std::unique_ptr<Source> source, MicroClock clock)
    : source_(std::move(source)), clock_(std::move(clock)) {}

ProcessScan::~ProcessScan() = default;
ProcessScan::ProcessScan(ProcessScan&&) noexcept = default;
ProcessScan& ProcessScan::operator=(ProcessScan&&) noexcept = default;

bool ProcessScan::Advance() {
  if (complete_) return true;
  if (!started_) {
    started_ = true;
    wrapped_ = false;
    resume_ = false;
    in_tail_ = false;
    last_taken_ = 0;
    tail_looked_ = 0;
    entries_.clear();
    taken_.clear();
    source_->Rewind();
    last_pid_ = source_->LastPid();
    round_first_pid_ = last_pid_;
  }
  for (;;) {
    if (spent_us_ >= kListingBudgetUs) {
      refused_ = true;
      return false;
    }
    int64_t start_us = clock_();
    bool more = Step();
    spent_us_ += std::max<int64_t>(0, clock_() - start_us);
    if (!more) {
      complete_ = true;
      ++rounds_;
      return true;
    }
  }
}

void ProcessScan::Take(int64_t pid) {
  if (!taken_.insert(pid).second) return;
  uint32_t owner = 0;
  if (auto stat = source_->Stat(pid, &owner); stat && stat->state != 'Z')
    entries_.push_back({pid, *stat, owner, {}, {}});
}

bool ProcessScan::Step() {
  if (!in_tail_) {
    std::optional<int64_t> pid = source_->Next(last_taken_, resume_);
    resume_ = false;
    if (pid) {
      last_taken_ = *pid;
      Take(*pid);
      return true;
    }
    // The listing is over. A process started since the round began may have a pid below where
    // the listing was when it started (the pids handed out wrap at pid_max, and old processes may
    // hold higher ones): each pid given out since is looked at.
    in_tail_ = true;
    tail_next_ = round_first_pid_ + 1;
    SeeWrap();
    tail_end_ = last_pid_;
    if (round_first_pid_ <= 0 || last_pid_ <= 0) return false;  // no last pid known: no tail
  }
  if (wrapped_) return false;
  if (tail_next_ <= tail_end_) {
    if (++tail_looked_ > kMaxTailPids) {
      wrapped_ = true;  // started faster than followed: not known to have seen them all
      return false;
    }
    Take(tail_next_++);
    return true;
  }
  // Looked at every pid given out until tail_end_: more since?
  SeeWrap();
  if (wrapped_ || last_pid_ == tail_end_) return false;
  tail_end_ = last_pid_;
  return true;
}

void ProcessScan::Restart() {
  started_ = false;
  complete_ = false;
}

bool ProcessScan::Spend(const std::function<void()>& read) {
  if (spent_us_ >= kPassBudgetUs) {
    refused_ = true;
    return false;
  }
  int64_t start_us = clock_();
  read();
  spent_us_ += std::max<int64_t>(0, clock_() - start_us);
  return true;
}

void ProcessScan::NewPass() {
  spent_us_ = 0;
  refused_ = false;
  if (complete_) Restart();
  // A round under way goes on where it stopped, listing afresh from there.
  resume_ = started_;
  if (started_ && !complete_) SeeWrap();
}

void ProcessScan::SeeWrap() {
  int64_t now = source_->LastPid();
  if (now > 0 && last_pid_ > 0 && now < last_pid_) wrapped_ = true;
  if (now > 0) last_pid_ = now;
}

}  // namespace pinpoint::launch
