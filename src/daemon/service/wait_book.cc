#include "daemon/service/wait_book.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "pinpoint/api.h"

namespace pinpoint::daemon {

Status WaitBook::MayHold(const api::Caller& caller, size_t count) const {
  if (held_ + count > kWaitMaxHeldIds)
    return Unavailable("pinpointd already holds waits for " + std::to_string(held_) +
                       " jobs, its most is " + std::to_string(kWaitMaxHeldIds) +
                       "; try again later");
  if (caller.IsRoot()) return Status::Ok();
  auto it = held_by_uid_.find(caller.uid);
  size_t mine = it == held_by_uid_.end() ? 0 : it->second;
  if (mine + count > kWaitMaxHeldIdsPerUid)
    return Unavailable("uid " + std::to_string(caller.uid) + " already waits for " +
                       std::to_string(mine) + " jobs; one user may wait for at most " +
                       std::to_string(kWaitMaxHeldIdsPerUid) + " at once");
  return Status::Ok();
}

void WaitBook::WaitFor(api::ConnId conn, const api::Caller& caller, JobId id) {
  waiters_[id].push_back({conn, caller, 0});
  Hold(caller, 1);
}

void WaitBook::WaitForAll(api::ConnId conn, const api::Caller& caller, std::vector<JobId> ids,
                          const std::set<JobId>& running) {
  uint64_t group = next_group_++;
  Hold(caller, ids.size());
  groups_[group] = Group{conn, caller, std::move(ids), running.size()};
  for (JobId id : running) waiters_[id].push_back({conn, caller, group});
}

std::vector<WaitBook::Answer> WaitBook::JobEnded(JobId id) {
  std::vector<Answer> answers;
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return answers;
  std::vector<Waiter> waiters = std::move(it->second);
  waiters_.erase(it);
  for (Waiter& w : waiters) {
    if (w.group == 0) {
      Release(w.caller, 1);
      answers.push_back({w.conn, w.caller, {}});
      continue;
    }
    auto group = groups_.find(w.group);
    if (group == groups_.end() || --group->second.left > 0) continue;
    Group done = std::move(group->second);
    groups_.erase(group);
    Release(done.caller, done.ids.size());
    answers.push_back({done.conn, done.caller, std::move(done.ids)});
  }
  return answers;
}

void WaitBook::Closed(api::ConnId conn) {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    std::erase_if(it->second, [&](const Waiter& w) {
      if (w.conn != conn) return false;
      if (w.group == 0) Release(w.caller, 1);
      return true;
    });
    it = it->second.empty() ? waiters_.erase(it) : std::next(it);
  }
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (it->second.conn != conn) {
      ++it;
      continue;
    }
    Release(it->second.caller, it->second.ids.size());
    it = groups_.erase(it);
  }
}

void WaitBook::Hold(const api::Caller& caller, size_t count) {
  held_ += count;
  held_by_uid_[caller.uid] += count;
}

void WaitBook::Release(const api::Caller& caller, size_t count) {
  held_ -= std::min(held_, count);
  auto it = held_by_uid_.find(caller.uid);
  if (it == held_by_uid_.end()) return;
  it->second -= std::min(it->second, count);
  if (it->second == 0) held_by_uid_.erase(it);
}

}  // namespace pinpoint::daemon
