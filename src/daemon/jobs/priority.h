// Who may ask for which priority (docs/scheduling.md "Priority"). A higher priority runs first,
// so on a shared node raising it is a privilege: a user may lower their jobs' priority (be
// nice), not raise it above max_user_priority, unless the configuration names them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/caller.h"
#include "daemon/jobs/users.h"
#include "pinpoint/service_class.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

struct PriorityPolicy {
  int max_user_priority = 0;                // the most a user not named below may ask for
  std::vector<std::string> priority_users;  // user names and "@group"s who may ask for any
};

// Ok when `caller` may submit a job with `priority`: any priority up to max_user_priority; any
// at all for root, for the daemon's own user when it does not run as root (it runs only that
// user's jobs), and for a user named in priority_users by name or through a group they belong
// to (looked up in `users` only when it is needed). Groups or users that do not exist name nobody.
// Errors: kPermissionDenied, one line saying what may be asked and who may ask for more.
Status CheckPriority(const PriorityPolicy& policy, const api::Caller& caller, uint32_t daemon_uid,
                     int priority, UserDirectory& users);

// Whether `uid` is named in `names` (user names, and "@group" for a group's members), looked up
// in `users`. Groups or users that do not exist name nobody.
bool NamesUser(const std::vector<std::string>& names, uint32_t uid, UserDirectory& users);

// Ok when `caller` may submit a job in service class `qos` of `classes` (config qos): a class
// whose users list is empty is everyone's; root and the daemon's own user may use any.
// Errors: kInvalidArgument: no such class (naming those there are); kPermissionDenied: one line
// naming the class and who may use it.
Status CheckQos(const std::vector<ServiceClass>& classes, const api::Caller& caller,
                uint32_t daemon_uid, const std::string& qos, UserDirectory& users);

}  // namespace pinpoint::daemon
