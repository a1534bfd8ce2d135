// Who may ask for which priority (docs/scheduling.md "Priority"). A higher priority runs first,
// so on a shared node raising it is a privilege: a user may lower their jobs' priority (be
// nice), not raise it above max_user_priority, unless the configuration names them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/caller.h"
#include "daemon/jobs/users.h"
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

}  // namespace pinpoint::daemon
