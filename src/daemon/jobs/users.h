// Unix users and groups: the NSS lookups (getpwuid_r / getpwnam_r / getgrouplist / getgrnam_r)
// behind an interface, so the daemon's main loop asks NSS (files, LDAP, sssd...) at most once a
// minute per user, and tests need no real accounts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
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

// Who the users and groups are. Not thread-safe: the daemon's main loop owns it.
class UserDirectory {
 public:
  virtual ~UserDirectory() = default;
  // Errors: kNotFound ("no user with uid 1234").
  virtual Result<UserInfo> ByUid(uint32_t uid) = 0;
  // Errors: kNotFound ("no user named 'x'").
  virtual Result<UserInfo> ByName(const std::string& name) = 0;
  // Errors: kNotFound ("no group named 'x'").
  virtual Result<uint32_t> GroupByName(const std::string& name) = 0;
};

// The user's name, or "uid N" when the directory does not know the uid.
std::string NameOrUid(UserDirectory& users, uint32_t uid);

// The system's directory: each call asks NSS (LookupUid, LookupName, LookupGroup).
class SystemUserDirectory : public UserDirectory {
 public:
  Result<UserInfo> ByUid(uint32_t uid) override { return LookupUid(uid); }
  Result<UserInfo> ByName(const std::string& name) override { return LookupName(name); }
  Result<uint32_t> GroupByName(const std::string& name) override { return LookupGroup(name); }
};

// Keeps each answer of `base`, found or not, for ttl_ms by `clock`: a user added, removed or
// given another group is seen within ttl_ms. Holds at most kMaxEntries answers of each kind
// (uid, user name, group name) and forgets all of that kind when full, so callers that ask
// for many names cannot grow it. base and clock are not owned and must outlive it.
class CachingUserDirectory : public UserDirectory {
 public:
  static constexpr size_t kMaxEntries = 4096;

  CachingUserDirectory(UserDirectory* base, Clock* clock, int64_t ttl_ms = 60'000)
      : base_(base), clock_(clock), ttl_ms_(ttl_ms) {}

  Result<UserInfo> ByUid(uint32_t uid) override;
  Result<UserInfo> ByName(const std::string& name) override;
  Result<uint32_t> GroupByName(const std::string& name) override;

 private:
  template <typename T>
  struct Entry {
    Result<T> value;
    int64_t expires_ms;
  };
  template <typename Key, typename T, typename Lookup>
  Result<T> Cached(std::map<Key, Entry<T>>& cache, const Key& key, Lookup lookup);

  UserDirectory* base_;
  Clock* clock_;
  int64_t ttl_ms_;
  std::map<uint32_t, Entry<UserInfo>> by_uid_;
  std::map<std::string, Entry<UserInfo>> by_name_;
  std::map<std::string, Entry<uint32_t>> groups_;
};

}  // namespace pinpoint::daemon
