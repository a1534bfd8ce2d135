// "logs" requests with "follow" that wait for new output (Service): at most kLogsMaxFollowers in
// all (root keeping a share, common/root_reserve.h) and kLogsMaxFollowersPerUid for one user other
// than root (pinpoint/api.h).
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "api/caller.h"
#include "api/server.h"
#include "pinpoint/api.h"

namespace pinpoint::daemon {

class LogFollowers {
 public:
  // Reads a job's log as the "logs" op does; sends a reply to a connection.
  using Read = std::function<Result<LogsReply>(const api::Caller&, const LogsRequest&)>;
  using Send = std::function<void(api::ConnId, const nlohmann::json&)>;

  // kUnavailable, with the line for the user, when `caller` may not follow one more log.
  Status MayFollow(const api::Caller& caller) const;
  // `conn` waits for output of `request`'s log from `request.from_offset` on.
  void Follow(api::ConnId conn, const api::Caller& caller, LogsRequest request);
  // Answers, through `send`, each follower whose log has new bytes, whose job has ended, or whose
  // read fails (e.g. the file became a link), and forgets it. Cost: one bounded read per follower.
  void Poll(const Read& read, const Send& send);
  // Forgets the followers of a connection that closed.
  void Closed(api::ConnId conn);
  size_t size() const { return followers_.size(); }

 private:
  struct Follower {
    api::ConnId conn;
    api::Caller caller;
    LogsRequest request;  // its from_offset: where to read next
  };
  std::vector<Follower> followers_;
};

}  // namespace pinpoint::daemon
