#include "api/server_limits.h"

#include <string>

namespace pinpoint::api {

Status ConnectionLimits::Admit(uint32_t uid) const {
  if (total_ >= limits_.max_connections) {
    return Unavailable("pinpointd serves its maximum of " +
                       std::to_string(limits_.max_connections) + " connections; try again later");
  }
  if (uid == 0) return Status::Ok();
  size_t for_users = limits_.max_connections > limits_.root_reserved_connections
                         ? limits_.max_connections - limits_.root_reserved_connections
                         : 0;
  if (total_ >= for_users) {
    return Unavailable("pinpointd serves its maximum of " + std::to_string(for_users) +
                       " connections for users other than root; try again later");
  }
  size_t held = of_uid(uid);
  if (held >= limits_.max_connections_per_uid) {
    return Unavailable("too many connections from uid " + std::to_string(uid) + " (" +
                       std::to_string(held) + " open, at most " +
                       std::to_string(limits_.max_connections_per_uid) +
                       " per user, waits included); close some and try again");
  }
  return Status::Ok();
}

void ConnectionLimits::Opened(uint32_t uid) {
  ++total_;
  ++per_uid_[uid];
}

void ConnectionLimits::Closed(uint32_t uid) {
  auto it = per_uid_.find(uid);
  if (it == per_uid_.end()) return;
  --total_;
  if (--it->second == 0) per_uid_.erase(it);
}

size_t ConnectionLimits::of_uid(uint32_t uid) const {
  auto it = per_uid_.find(uid);
  return it == per_uid_.end() ? 0 : it->second;
}

bool IdleExpired(const ConnActivity& conn, int64_t now_ms, int64_t idle_timeout_ms) {
  if (idle_timeout_ms <= 0) return false;
  // Waiting on the daemon (a deferred reply) with nothing to write is not the client's idleness.
  if (conn.deferred_replies > 0 && conn.unsent_bytes == 0) return false;
  return now_ms - conn.last_progress_ms >= idle_timeout_ms;
}

}  // namespace pinpoint::api
