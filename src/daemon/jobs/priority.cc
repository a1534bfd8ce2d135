#include "daemon/jobs/priority.h"

#include <algorithm>

namespace pinpoint::daemon {

namespace {

bool Named(const PriorityPolicy& policy, uint32_t uid, UserDirectory& users) {
  auto user = users.ByUid(uid);
  if (!user.ok()) return false;
  for (const std::string& entry : policy.priority_users) {
    if (entry.rfind('@', 0) != 0) {
      if (entry == user->name) return true;
      continue;
    }
    auto gid = users.GroupByName(entry.substr(1));
    if (gid.ok() && std::find(user->groups.begin(), user->groups.end(), *gid) != user->groups.end())
      return true;
  }
  return false;
}

}  // namespace

Status CheckPriority(const PriorityPolicy& policy, const api::Caller& caller, uint32_t daemon_uid,
                     int priority, UserDirectory& users) {
  if (priority <= policy.max_user_priority) return Status::Ok();
  if (caller.IsRoot() || caller.uid == daemon_uid) return Status::Ok();
  if (Named(policy, caller.uid, users)) return Status::Ok();
  return PermissionDenied("priority " + std::to_string(priority) + " is above " +
                          std::to_string(policy.max_user_priority) +
                          ", the most a user may ask for; only root and the users in the "
                          "configuration's priority_users may raise a job's priority (a lower "
                          "one is always allowed)");
}

}  // namespace pinpoint::daemon
