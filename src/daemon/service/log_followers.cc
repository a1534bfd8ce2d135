#include "daemon/service/log_followers.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "api/protocol.h"
#include "common/root_reserve.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {

Status LogFollowers::MayFollow(const api::Caller& caller) const {
  size_t most = CapFor(kLogsMaxFollowers, caller.IsRoot());
  if (followers_.size() >= most)
    return Unavailable("pinpointd already holds " + std::to_string(followers_.size()) +
                       " log followers, " +
                       (caller.IsRoot() ? "its most" : "the most for users other than root") +
                       "; try again later");
  if (caller.IsRoot()) return Status::Ok();
  size_t mine = std::count_if(followers_.begin(), followers_.end(),
                              [&](const Follower& f) { return f.caller.uid == caller.uid; });
  if (mine >= kLogsMaxFollowersPerUid)
    return Unavailable("uid " + std::to_string(caller.uid) + " already follows " +
                       std::to_string(kLogsMaxFollowersPerUid) + " logs, the most one user may");
  return Status::Ok();
}

void LogFollowers::Follow(api::ConnId conn, const api::Caller& caller, LogsRequest request) {
  followers_.push_back({conn, caller, std::move(request)});
}

void LogFollowers::Poll(const Read& read, const Send& send) {
  for (auto it = followers_.begin(); it != followers_.end();) {
    auto reply = read(it->caller, it->request);
    if (reply.ok() && reply->data.empty() && !reply->ended) {
      it->request.from_offset = reply->end_offset;
      ++it;
      continue;
    }
    if (send)
      send(it->conn, reply.ok() ? api::OkReply(ToJson(*reply)) : api::ErrorReply(reply.status()));
    it = followers_.erase(it);
  }
}

void LogFollowers::Closed(api::ConnId conn) {
  std::erase_if(followers_, [&](const Follower& f) { return f.conn == conn; });
}

}  // namespace pinpoint::daemon
