#include "daemon/node/recent_failures.h"

namespace pinpoint::daemon {

void RecentFailures::DropOldest(Kept& kept) {
  kept.bytes -= FailureBytes(kept.failures.front());
  kept.failures.pop_front();
}

void RecentFailures::Add(RecentFailure failure, int64_t now_ms) {
  // Each user's failures end in order, so the expired ones are at the front: what is kept in all
  // is only what users failed within the window.
  for (auto it = by_uid_.begin(); it != by_uid_.end();) {
    Kept& kept = it->second;
    while (!kept.failures.empty() && Expired(kept.failures.front(), now_ms)) DropOldest(kept);
    it = kept.failures.empty() ? by_uid_.erase(it) : std::next(it);
  }
  Kept& mine = by_uid_[failure.uid];
  mine.bytes += FailureBytes(failure);
  mine.failures.push_back(std::move(failure));
  while (mine.failures.size() > kRecentFailuresPerUser ||
         (mine.bytes > kRecentFailureBytesPerUser && mine.failures.size() > 1))
    DropOldest(mine);
}

std::vector<const RecentFailure*> RecentFailures::Of(std::optional<uint32_t> uid,
                                                     int64_t now_ms) const {
  std::vector<const RecentFailure*> out;
  auto add = [&](const Kept& kept) {
    for (const RecentFailure& f : kept.failures)
      if (!Expired(f, now_ms)) out.push_back(&f);
  };
  if (uid) {
    auto it = by_uid_.find(*uid);
    if (it != by_uid_.end()) add(it->second);
    return out;
  }
  for (const auto& [_, kept] : by_uid_) add(kept);
  return out;
}

uint64_t RecentFailures::BytesOf(uint32_t uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? 0 : it->second.bytes;
}

}  // namespace pinpoint::daemon
