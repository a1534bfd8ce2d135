#include "daemon/jobs/users.h"

#include <grp.h>
#include <pwd.h>

#include <vector>

namespace pinpoint::daemon {

namespace {

UserInfo FromPasswd(const passwd& pw) {
  UserInfo u;
  u.uid = pw.pw_uid;
  u.gid = pw.pw_gid;
  u.name = pw.pw_name;
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    ::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n);
  }
  groups.resize(static_cast<size_t>(n));
  u.groups.assign(groups.begin(), groups.end());
  return u;
}

}  // namespace

Result<UserInfo> LookupUid(uint32_t uid) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
    return NotFound("no user with uid " + std::to_string(uid));
  return FromPasswd(pw);
}

Result<UserInfo> LookupName(const std::string& name) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
    return NotFound("no user named '" + name + "'");
  return FromPasswd(pw);
}

Result<uint32_t> LookupGroup(const std::string& name) {
  group gr{};
  group* found = nullptr;
  std::vector<char> buf(16384);
  if (::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) != 0 || found == nullptr)
    return NotFound("no group named '" + name + "'");
  return static_cast<uint32_t>(gr.gr_gid);
}

}  // namespace pinpoint::daemon

namespace pinpoint::daemon {

std::string NameOrUid(UserDirectory& users, uint32_t uid) {
  auto u = users.ByUid(uid);
  return u.ok() ? u->name : "uid " + std::to_string(uid);
}

template <typename Key, typename T, typename Lookup>
Result<T> CachingUserDirectory::Cached(std::map<Key, Entry<T>>& cache, const Key& key,
                                       Lookup lookup) {
  int64_t now = clock_->NowMs();
  auto it = cache.find(key);
  if (it != cache.end() && now < it->second.expires_ms) return it->second.value;
  if (it != cache.end()) cache.erase(it);
  if (cache.size() >= kMaxEntries) cache.clear();
  Result<T> value = lookup();
  cache.emplace(key, Entry<T>{value, now + ttl_ms_});
  return value;
}

Result<UserInfo> CachingUserDirectory::ByUid(uint32_t uid) {
  return Cached(by_uid_, uid, [&] { return base_->ByUid(uid); });
}

Result<UserInfo> CachingUserDirectory::ByName(const std::string& name) {
  return Cached(by_name_, name, [&] { return base_->ByName(name); });
}

Result<uint32_t> CachingUserDirectory::GroupByName(const std::string& name) {
  return Cached(groups_, name, [&] { return base_->GroupByName(name); });
}

}  // namespace pinpoint::daemon
