#include "daemon/jobs/priority.h"

#include <algorithm>

namespace pinpoint::daemon {

namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

}  // namespace

bool NamesUser(const std::vector<std::string>& names, uint32_t uid, UserDirectory& users) {
  auto user = users.ByUid(uid);
  if (!user.ok()) return false;
  for (const std::string& entry : names) {
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

Status CheckQos(const std::vector<ServiceClass>& classes, const api::Caller& caller,
                uint32_t daemon_uid, const std::string& qos, UserDirectory& users) {
  const ServiceClass* sc = FindServiceClass(classes, qos);
  if (!sc) {
    std::vector<std::string> names;
    for (const ServiceClass& c : classes) names.push_back(c.name);
    return InvalidArgument("no service class '" + qos + "' on this node (qos: " + Joined(names) +
                           "; `pinpoint qos` lists them)");
  }
  if (sc->users.empty() || caller.IsRoot() || caller.uid == daemon_uid) return Status::Ok();
  if (NamesUser(sc->users, caller.uid, users)) return Status::Ok();
  return PermissionDenied("service class '" + qos + "' is only for " + Joined(sc->users) +
                          " (and root)");
}

Status CheckPriority(const PriorityPolicy& policy, const api::Caller& caller, uint32_t daemon_uid,
                     int priority, UserDirectory& users) {
  if (priority <= policy.max_user_priority) return Status::Ok();
  if (caller.IsRoot() || caller.uid == daemon_uid) return Status::Ok();
  if (NamesUser(policy.priority_users, caller.uid, users)) return Status::Ok();
  return PermissionDenied("priority " + std::to_string(priority) + " is above " +
                          std::to_string(policy.max_user_priority) +
                          ", the most a user may ask for; only root and the users in the "
                          "configuration's priority_users may raise a job's priority (a lower "
                          "one is always allowed)");
}

}  // namespace pinpoint::daemon
