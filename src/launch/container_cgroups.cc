#include "launch/container_cgroups.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/cgroup_key.h"
#include "common/file_util.h"

namespace pinpoint::launch {

namespace {

constexpr size_t kMaxCgroupFileBytes = 64 * 1024;

// At most `max_bytes` of a kernel file, read without following a link. nullopt: cannot open.
std::optional<std::string> ReadBounded(const std::string& path, size_t max_bytes, bool* too_big) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      *too_big = true;
      out.resize(max_bytes);
      break;
    }
  }
  return out;
}

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Bounds of one walk of a container's cgroup tree: a container may make cgroups below its own
// (a delegated subtree), and pinpointd walks it on every step.
constexpr int kMaxCgroupDepth = 32;
constexpr int kMaxCgroupsWalked = 4096;

// Appends the pids of `dir`'s cgroup.procs and of every group below it, visiting at most
// *budget groups (decremented).
void CollectProcs(const std::string& dir, int depth, int* budget, std::vector<int64_t>* out) {
  if (depth > kMaxCgroupDepth || *budget <= 0) return;
  --*budget;
  bool too_big = false;
  auto procs = ReadBounded(dir + "/cgroup.procs", 1 << 20, &too_big);
  if (procs) {
    size_t start = 0;
    while (start < procs->size()) {
      size_t end = procs->find('\n', start);
      if (end == std::string::npos) end = procs->size();
      std::string line = procs->substr(start, end - start);
      start = end + 1;
      if (!line.empty()) out->push_back(std::strtoll(line.c_str(), nullptr, 10));
    }
  }
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  while (dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    CollectProcs(dir + "/" + e->d_name, depth + 1, budget, out);
  }
  ::closedir(d);
}

}  // namespace

SystemContainerCgroups::SystemContainerCgroups(std::string cgroup_root, int64_t self_pid)
    : root_(std::move(cgroup_root)), self_pid_(self_pid > 0 ? self_pid : ::getpid()) {}

std::string SystemContainerCgroups::DirOf(const std::string& key) const {
  std::string hierarchy, path;
  if (!SplitCgroupKey(key, &hierarchy, &path)) return "";
  std::vector<std::string> candidates;
  if (hierarchy == "0:") {
    candidates = {root_ + path, root_ + "/unified" + path};
  } else {
    std::string name = hierarchy.rfind("name=", 0) == 0 ? hierarchy.substr(5) : hierarchy;
    candidates = {root_ + "/" + name + path};
  }
  for (const auto& c : candidates)
    if (IsDir(c)) return c;
  return "";
}

Result<std::string> SystemContainerCgroups::CgroupOf(int64_t pid) {
  if (pid <= 0) return NotFound("no process " + std::to_string(pid));
  bool too_big = false;
  auto text =
      ReadBounded("/proc/" + std::to_string(pid) + "/cgroup", kMaxCgroupFileBytes, &too_big);
  if (!text) return NotFound("no process " + std::to_string(pid));
  if (too_big)
    return FailedPrecondition("/proc/" + std::to_string(pid) + "/cgroup is larger than 64 KiB");
  auto key = ContainerCgroupKey(*text);
  if (!key.ok())
    return FailedPrecondition("pid " + std::to_string(pid) + ": " + key.status().message());
  bool self_big = false;
  auto self =
      ReadBounded("/proc/" + std::to_string(self_pid_) + "/cgroup", kMaxCgroupFileBytes, &self_big);
  if (self && InCgroup(*self, *key))
    return FailedPrecondition("pid " + std::to_string(pid) + " is in pinpointd's own cgroup (" +
                              *key + ") or one above it");
  if (DirOf(*key).empty())
    return FailedPrecondition("pid " + std::to_string(pid) + ": its cgroup " + *key +
                              " has no directory under " + root_);
  return key;
}

std::optional<std::vector<int64_t>> SystemContainerCgroups::Processes(const std::string& key) {
  std::string dir = DirOf(key);
  if (dir.empty()) return std::nullopt;
  std::vector<int64_t> pids;
  int budget = kMaxCgroupsWalked;
  CollectProcs(dir, 0, &budget, &pids);
  return pids;
}

Status SystemContainerCgroups::Signal(const std::string& key, int signal) {
  std::string dir = DirOf(key);
  if (dir.empty()) return Status::Ok();
  if (signal == SIGKILL) {
    UniqueFd kill(::open((dir + "/cgroup.kill").c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    if (kill.valid() && ::write(kill.get(), "1", 1) == 1) return Status::Ok();
  }
  auto pids = Processes(key);
  if (!pids) return Status::Ok();
  for (int64_t pid : *pids) {
    if (pid <= 1) continue;  // never a broadcast, never init
    if (::kill(static_cast<pid_t>(pid), signal) != 0 && errno != ESRCH)
      return IoError("kill " + std::to_string(pid) + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace pinpoint::launch
