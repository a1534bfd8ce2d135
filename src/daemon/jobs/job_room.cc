#include "daemon/jobs/job_room.h"

#include <algorithm>
#include <string>

#include "common/root_reserve.h"
#include "daemon/jobs/array_rest.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

Status CheckJobRoom(const std::map<JobId, JobRecord>& active, size_t active_tasks,
                    const JobRecord& job, size_t jobs, size_t node_cap, size_t user_max,
                    bool root) {
  size_t node_max = CapFor(node_cap, root);
  bool near_node = node_max > 0 && active_tasks + jobs > node_max;
  bool near_user = user_max > 0 && active_tasks + jobs > user_max;
  if (!near_node && !near_user) return Status::Ok();
  size_t held = 0, users = 0;
  for (const auto& [id, other] : active) {
    if (IsFinal(other.state)) continue;
    size_t tasks = TasksIn(other);
    held += tasks;
    if (other.uid == job.uid) users += tasks;
  }
  std::string more = std::to_string(jobs) + " more";
  if (near_node && held + jobs > node_max) {
    std::string most = root || node_max == node_cap
                           ? std::to_string(node_max) + " (max_jobs)"
                           : std::to_string(node_max) + " of users other than root (max_jobs " +
                                 std::to_string(node_cap) + ", the rest kept for root)";
    return Unavailable("the node holds " + std::to_string(held) +
                       " jobs not yet ended and takes at most " + most + "; " + more +
                       " must wait until some have ended");
  }
  if (near_user && users + jobs > user_max) {
    return Unavailable(job.user + " has " + std::to_string(users) +
                       " jobs not yet ended and a user may have at most " +
                       std::to_string(user_max) + " (max_jobs_per_user); " + more +
                       " must wait until some have ended");
  }
  return Status::Ok();
}

void HeldBytes::Add(const JobRecord& job, size_t tasks) {
  by_uid_[job.uid] += RequestBytes(job.request) * tasks;
}

void HeldBytes::Remove(const JobRecord& job, size_t tasks) {
  auto it = by_uid_.find(job.uid);
  if (it == by_uid_.end()) return;
  uint64_t bytes = RequestBytes(job.request) * tasks;
  it->second -= std::min(it->second, bytes);
  if (it->second == 0) by_uid_.erase(it);
}

uint64_t HeldBytes::Of(uint32_t uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? 0 : it->second;
}

Status CheckRequestBytes(const JobRecord& job, size_t jobs, uint64_t held, uint64_t request_max,
                         uint64_t user_max) {
  uint64_t bytes = RequestBytes(job.request);
  if (request_max > 0 && bytes > request_max) {
    return InvalidArgument("the request's command, environment and paths take " +
                           FormatSize(bytes) + "; this node takes at most " +
                           FormatSize(request_max) +
                           " (max_request_bytes): pass less environment (submit --export)");
  }
  if (user_max == 0) return Status::Ok();
  uint64_t adding = bytes * jobs;  // jobs <= max_array_tasks, bytes <= a message: no overflow
  if (held + adding > user_max) {
    return Unavailable(job.user + "'s jobs not yet ended take " + FormatSize(held) +
                       " and a user's may take at most " + FormatSize(user_max) +
                       " (max_user_request_bytes); " + FormatSize(adding) +
                       " more must wait until some have ended");
  }
  return Status::Ok();
}

}  // namespace pinpoint::daemon
