#include "daemon/job_room.h"

#include <string>

namespace pinpoint::daemon {

Status CheckJobRoom(const std::map<JobId, JobRecord>& active, const JobRecord& job, size_t jobs,
                    size_t node_max, size_t user_max) {
  bool near_node = node_max > 0 && active.size() + jobs > node_max;
  bool near_user = user_max > 0 && active.size() + jobs > user_max;
  if (!near_node && !near_user) return Status::Ok();
  size_t held = 0, users = 0;
  for (const auto& [id, other] : active) {
    if (IsFinal(other.state)) continue;
    ++held;
    if (other.uid == job.uid) ++users;
  }
  std::string more = std::to_string(jobs) + " more";
  if (near_node && held + jobs > node_max) {
    return Unavailable("the node holds " + std::to_string(held) +
                       " jobs not yet ended and takes at most " + std::to_string(node_max) +
                       " (max_jobs); " + more + " must wait until some have ended");
  }
  if (near_user && users + jobs > user_max) {
    return Unavailable(job.user + " has " + std::to_string(users) +
                       " jobs not yet ended and a user may have at most " +
                       std::to_string(user_max) + " (max_jobs_per_user); " + more +
                       " must wait until some have ended");
  }
  return Status::Ok();
}

}  // namespace pinpoint::daemon
