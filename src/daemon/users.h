// Unix user lookups (getpwuid_r / getpwnam_r / getgrouplist).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::daemon {

struct UserInfo {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string name;
  std::vector<uint32_t> groups;  // supplementary groups, the primary one included
};

// Errors: kNotFound ("no user with uid 1234" / "no user named 'x'").
Result<UserInfo> LookupUid(uint32_t uid);
Result<UserInfo> LookupName(const std::string& name);
// A group's id by name (getgrnam_r). Errors: kNotFound ("no group named 'x'").
Result<uint32_t> LookupGroup(const std::string& name);

}  // namespace pinpoint::daemon
