#include "watch/process_owner.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <string_view>

#include "common/cgroup_key.h"
#include "common/process.h"

namespace pinpoint::watch {

std::string CgroupV2Path(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (line.substr(0, 3) == "0::") return std::string(line.substr(3));
    start = end + 1;
  }
  return "";
}

std::optional<std::string_view> EnvironValue(std::string_view text, std::string_view name) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    std::string_view entry = text.substr(start, end - start);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
        entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<JobId> JobIdInEnviron(const std::string& text) {
  std::optional<std::string_view> value = EnvironValue(text, "PINPOINT_JOB_ID");
  if (!value) return std::nullopt;
  JobId id = 0;
  auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), id);
  if (ec == std::errc() && ptr == value->data() + value->size() && id > 0) return id;
  return std::nullopt;
}

std::vector<int64_t> ProcProcessOwner::ChildrenOf(int64_t pid) {
  constexpr size_t kMaxChildrenBytes = 64 << 10;
  std::string name = "task/" + std::to_string(pid) + "/children";
  std::string text = ReadProcFileBounded(pid, name.c_str(), kMaxChildrenBytes);
  std::vector<int64_t> children;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    int64_t child = 0;
    auto [ptr, ec] = std::from_chars(text.data() + at, text.data() + end, child);
    if (ec == std::errc() && ptr == text.data() + end && child > 0) children.push_back(child);
    at = end + 1;
  }
  return children;
}

std::optional<std::string> ProcProcessOwner::Environ(int64_t pid) {
  std::string text = ReadProcFileBounded(pid, "environ", kMaxEnvironBytes);
  if (text.empty()) return std::nullopt;
  return text;
}

std::optional<JobId> ProcProcessOwner::OwnerOf(int64_t pid, const std::vector<WatchedJob>& jobs) {
  std::string text = ReadProcFile(pid, "cgroup");
  for (const auto& j : jobs)
    if (!j.lease_cgroup.empty() && InCgroup(text, j.lease_cgroup)) return j.id;
  std::string cgroup = CgroupV2Path(text);
  if (!cgroup.empty()) {
    for (const auto& j : jobs)
      if (!j.cgroup_path.empty() &&
          (cgroup == j.cgroup_path || cgroup.rfind(j.cgroup_path + "/", 0) == 0))
        return j.id;
  }
  auto stat = ReadProcStat(pid);
  if (!stat) return std::nullopt;
  for (const auto& j : jobs)
    if (j.session_id > 0 && stat->session == j.session_id) return j.id;
  // Anyone may set PINPOINT_JOB_ID: it names a job only for a process of that job's user, so that
  // no user's GPU memory is charged to another user's job (which the watcher would then kill).
  auto id = JobIdInEnviron(ReadProcFile(pid, "environ"));
  if (id) {
    auto uids = ReadProcUids(pid);
    for (const auto& j : jobs)
      if (j.id == *id && uids && uids->real == j.uid) return j.id;
  }
  return std::nullopt;
}

bool ProcProcessOwner::UsersOwnProcess(int64_t pid, uint32_t uid) {
  auto uids = ReadProcUids(pid);
  if (!uids || uids->real != uid) return false;
  if (mps_server_.empty()) return true;
  // The kernel's link to the program the process runs: a user cannot make it name another file.
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  char target[4096];
  ssize_t n = ::readlink(link.c_str(), target, sizeof(target));
  return n <= 0 || std::string_view(target, static_cast<size_t>(n)) != mps_server_;
}

bool ProcProcessOwner::KillUsersProcess(int64_t pid, uint32_t uid) {
  bool sent = SignalIfBelongs(pid, SIGKILL, [uid](int64_t p) {
    auto uids = ReadProcUids(p);
    return uids && uids->AllAre(uid);
  });
  return sent || !ProcessAlive(pid);
}

}  // namespace pinpoint::watch
