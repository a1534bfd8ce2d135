#include "daemon/users.h"

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
