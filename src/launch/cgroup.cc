#include "launch/cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <string_view>

#include "common/cpu_list.h"
#include "common/file_util.h"

namespace pinpoint::launch {

namespace {

Status WriteControl(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  if (!out) return IoError("cannot open " + path + ": " + ErrnoText(errno));
  out << value;
  out.flush();
  if (!out) return IoError("cannot write '" + value + "' to " + path + ": " + ErrnoText(errno));
  return Status::Ok();
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

Status Cgroups::Probe() {
  enabled_ = false;
  std::string parent = Parent(root_);
  auto controllers = ReadFile(parent + "/cgroup.controllers");
  if (!controllers.ok())
    return Unavailable("cgroup v2 not mounted at " + parent + " (" +
                       controllers.status().message() + ")");
  for (const char* c : {"cpu", "memory"}) {
    if (controllers->find(c) == std::string::npos)
      return Unavailable(std::string("cgroup controller '") + c + "' not available in " + parent);
  }
  if (::mkdir(root_.c_str(), 0755) != 0 && errno != EEXIST)
    return Unavailable("cannot create " + root_ + ": " + ErrnoText(errno));
  Status s = WriteControl(parent + "/cgroup.subtree_control", "+cpu +memory");
  if (!s.ok()) return Unavailable("cannot enable cpu/memory controllers: " + s.message());
  s = WriteControl(root_ + "/cgroup.subtree_control", "+cpu +memory");
  if (!s.ok()) return Unavailable("cannot enable cpu/memory controllers: " + s.message());
  enabled_ = true;
  // Optional: without it a job's CPUs are only its affinity (the shim binds it), and its quota.
  cpusets_ = controllers->find("cpuset") != std::string::npos &&
             WriteControl(parent + "/cgroup.subtree_control", "+cpuset").ok() &&
             WriteControl(root_ + "/cgroup.subtree_control", "+cpuset").ok();
  return Status::Ok();
}

Result<std::string> Cgroups::CreateJobGroup(JobId id, int cpus, uint64_t mem_bytes,
                                            const std::vector<int>& cpuset,
                                            const std::vector<int>& shared_cpus) {
  std::string dir = JobDir(id);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return IoError("mkdir " + dir + ": " + ErrnoText(errno));
  constexpr int64_t kPeriodUs = 100000;
  // CPUs of its own need no quota: a quota would let it start a thread per CPU of the host and
  // throttle them all, which is what cpusets are for.
  if (cpusets_ && !cpuset.empty()) {
    PP_RETURN_IF_ERROR(WriteControl(dir + "/cpuset.cpus", FormatCpuList(cpuset)));
    PP_RETURN_IF_ERROR(WriteControl(dir + "/cpu.max", "max"));
  } else {
    // Off the site's system CPUs (config system_cpus), which the job's own affinity call could
    // otherwise reach.
    if (cpusets_ && !shared_cpus.empty())
      PP_RETURN_IF_ERROR(WriteControl(dir + "/cpuset.cpus", FormatCpuList(shared_cpus)));
    PP_RETURN_IF_ERROR(WriteControl(
        dir + "/cpu.max", std::to_string(cpus * kPeriodUs) + " " + std::to_string(kPeriodUs)));
  }
  if (mem_bytes > 0)
    PP_RETURN_IF_ERROR(WriteControl(dir + "/memory.max", std::to_string(mem_bytes)));
  return dir;
}

namespace {

constexpr uint64_t kMaxControlFileBytes = 4096;

// The first line of `name` in `dir_fd`, or "" when it cannot be read.
std::string FirstLine(int dir_fd, const char* name) {
  auto text = ReadFileBoundedAt(dir_fd, name, kMaxControlFileBytes);
  if (!text.ok()) return "";
  return text->substr(0, text->find('\n'));
}

int64_t NonNegative(const std::string& text) {
  int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0 ? value : -1;
}

}  // namespace

Cgroups::Limits Cgroups::ReadLimits(JobId id) const {
  Limits limits;
  auto dir = OpenDirNoFollow(JobDir(id));
  if (!dir.ok()) return limits;
  if (cpusets_) limits.cpuset = FirstLine(dir->get(), "cpuset.cpus.effective");
  limits.cpu_max = FirstLine(dir->get(), "cpu.max");
  limits.memory_max = FirstLine(dir->get(), "memory.max");
  return limits;
}

Cgroups::Usage Cgroups::ReadUsage(JobId id) const {
  Usage usage;
  auto dir = OpenDirNoFollow(JobDir(id));
  if (!dir.ok()) return usage;
  usage.mem_peak_bytes = NonNegative(FirstLine(dir->get(), "memory.peak"));
  auto stat = ReadFileBoundedAt(dir->get(), "cpu.stat", kMaxControlFileBytes);
  constexpr std::string_view kKey = "usage_usec ";
  if (stat.ok() && stat->starts_with(kKey)) {
    std::string line = stat->substr(kKey.size());
    usage.cpu_usec = NonNegative(line.substr(0, line.find('\n')));
  }
  return usage;
}

Status Cgroups::SetMemoryMax(JobId id, uint64_t bytes) {
  if (!enabled_) return Status::Ok();
  auto dir = OpenDirNoFollow(JobDir(id));
  if (!dir.ok()) return dir.status();
  UniqueFd fd(::openat(dir->get(), "memory.max", O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return IoError("open " + JobDir(id) + "/memory.max: " + ErrnoText(errno));
  std::string value = bytes == 0 ? "max" : std::to_string(bytes);
  if (::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()))
    return IoError("write '" + value + "' to " + JobDir(id) + "/memory.max: " + ErrnoText(errno));
  return Status::Ok();
}

Status Cgroups::RemoveJobGroup(JobId id) {
  std::string dir = JobDir(id);
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT)
    return IoError("rmdir " + dir + ": " + ErrnoText(errno));
  return Status::Ok();
}

}  // namespace pinpoint::launch
