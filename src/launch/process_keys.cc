#include "launch/process_keys.h"

#include <algorithm>
#include <chrono>
#include <string_view>

#include "common/process.h"
#include "launch/job_identity.h"

namespace pinpoint::launch {

ProcessKeys::ProcessKeys()
    : ProcessKeys([](int64_t pid) { return ReadProcFileBounded(pid, "environ", kMaxEnvironBytes); },
                  [] {
                    return std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                        .count();
                  }) {}

ProcessKeys::ProcessKeys(Reader reader, MicroClock clock)
    : reader_(std::move(reader)), clock_(std::move(clock)) {}

bool ProcessKeys::Allows(uint32_t uid) const {
  auto spent = user_spent_us_.find(uid);
  if (spent != user_spent_us_.end() && spent->second >= kUserBudgetUs) return false;
  return pass_spent_us_ < kPassBudgetUs || refused_last_.count(uid) > 0;
}

ProcessKeys::Answer ProcessKeys::Known(int64_t pid, uint64_t start_ticks,
                                       const std::string& key_entry) const {
  auto it = keys_.find(pid);
  if (it == keys_.end() || it->second.start_ticks != start_ticks) return Answer::kNotRead;
  for (const std::string& key : it->second.keys)
    if (key == key_entry) return Answer::kHolds;
  return Answer::kLacks;
}

ProcessKeys::Answer ProcessKeys::Check(int64_t pid, uint64_t start_ticks, uint32_t uid,
                                       const std::string& key_entry) {
  Answer known = Known(pid, start_ticks, key_entry);
  if (known != Answer::kNotRead) return known;
  if (!Allows(uid)) {
    refused_now_.insert(uid);
    return Answer::kNotRead;
  }
  int64_t start_us = clock_();
  std::string environ = reader_(pid);
  ++reads_;
  int64_t took_us = std::max<int64_t>(0, clock_() - start_us);
  pass_spent_us_ += took_us;
  user_spent_us_[uid] += took_us;
  if (environ.empty()) return Answer::kEmpty;
  Entry entry;
  entry.start_ticks = start_ticks;
  constexpr std::string_view kPrefix = kJobKeyPrefix;
  for (size_t at = 0; at < environ.size() && entry.keys.size() < kMaxKeysPerProcess;) {
    size_t end = environ.find('\0', at);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(at, kPrefix.size(), kPrefix) == 0)
      entry.keys.push_back(environ.substr(at, end - at));
    at = end + 1;
  }
  Entry& kept = keys_[pid] = std::move(entry);
  for (const std::string& key : kept.keys)
    if (key == key_entry) return Answer::kHolds;
  return Answer::kLacks;
}

void ProcessKeys::NewPass() {
  refused_last_ = std::move(refused_now_);
  refused_now_.clear();
  pass_spent_us_ = 0;
  user_spent_us_.clear();
}

void ProcessKeys::Retain(const std::map<int64_t, uint64_t>& alive) {
  for (auto it = keys_.begin(); it != keys_.end();) {
    auto now = alive.find(it->first);
    if (now == alive.end() || now->second != it->second.start_ticks) {
      it = keys_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace pinpoint::launch
