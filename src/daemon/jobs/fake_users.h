// FakeUserDirectory: a UserDirectory for tests. Knows only the users and groups it is given;
// records every lookup it answers. State is per instance.
#pragma once

#include <string>
#include <vector>

#include "daemon/jobs/users.h"

namespace pinpoint::daemon {

class FakeUserDirectory : public UserDirectory {
 public:
  // A user whose groups are its primary group plus `groups`.
  void AddUser(uint32_t uid, uint32_t gid, std::string name, std::vector<uint32_t> groups = {}) {
    groups.insert(groups.begin(), gid);
    users_.push_back({uid, gid, std::move(name), std::move(groups)});
  }
  void AddGroup(std::string name, uint32_t gid) { groups_.push_back({std::move(name), gid}); }

  Result<UserInfo> ByUid(uint32_t uid) override {
    lookups_.push_back("uid " + std::to_string(uid));
    for (const auto& u : users_)
      if (u.uid == uid) return u;
    return NotFound("no user with uid " + std::to_string(uid));
  }
  Result<UserInfo> ByName(const std::string& name) override {
    lookups_.push_back("user " + name);
    for (const auto& u : users_)
      if (u.name == name) return u;
    return NotFound("no user named '" + name + "'");
  }
  Result<uint32_t> GroupByName(const std::string& name) override {
    lookups_.push_back("group " + name);
    for (const auto& [group, gid] : groups_)
      if (group == name) return gid;
    return NotFound("no group named '" + name + "'");
  }

  // Every lookup so far: "uid 1000", "user ana", "group gpu".
  const std::vector<std::string>& lookups() const { return lookups_; }

 private:
  std::vector<UserInfo> users_;
  std::vector<std::pair<std::string, uint32_t>> groups_;
  std::vector<std::string> lookups_;
};

}  // namespace pinpoint::daemon
