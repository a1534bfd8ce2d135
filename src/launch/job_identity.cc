#include "launch/job_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "common/file_util.h"
#include "common/process.h"
#include "launch/process_launcher.h"

namespace pinpoint::launch {

// The cgroup v2 path of `pid` relative to the hierarchy's root ("/pinpoint/job-5"), or "".
std::string CgroupOf(int64_t pid) {
  std::string text = ReadProcFile(pid, "cgroup");
  auto line = text.find("0::");
  if (line == std::string::npos) return "";
  auto end = text.find('\n', line);
  return text.substr(line + 3, end == std::string::npos ? std::string::npos : end - line - 3);
}

bool JobIdentity::Holds(int64_t pid, const KnownKey& known) const {
  auto stat = ReadProcStat(pid);
  if (!stat || stat->state == 'Z' || pid == session) return false;
  if (session > 0 && stat->session == session) return true;
  if (!cgroup_rel.empty() && CgroupOf(pid) == cgroup_rel) return true;
  if (key_entry.empty()) return false;
  auto uids = ReadProcUids(pid);
  if (!uids || !uids->AllAre(uid)) return false;
  if (known)
    if (std::optional<bool> has = known(pid, stat->start_ticks)) return *has;
  return HasEntry(ReadProcFileBounded(pid, "environ", kMaxEnvironBytes), key_entry);
}

bool JobIdentity::HasEntry(const std::string& environ, const std::string& entry) {
  for (size_t start = 0; start < environ.size();) {
    size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(start, end - start, entry) == 0) return true;
    start = end + 1;
  }
  return false;
}

// What spec.json says of a job's identity, read once per launch (it holds the job's whole
// environment: reading it at every poll of an ending job cost the loop a parse of up to MiBs).
SpecFacts FactsOf(const LaunchSpec& spec) {
  SpecFacts facts;
  for (const std::string& entry : spec.env)
    if (entry.rfind(kJobKeyPrefix, 0) == 0) facts.key_entry = entry;
  facts.uid = spec.switch_user ? spec.uid : static_cast<uint32_t>(::geteuid());
  facts.cgroup_dir = spec.cgroup_dir;
  if (!spec.cgroup_dir.empty()) {
    // /sys/fs/cgroup/pinpoint/job-5 -> /pinpoint/job-5, as /proc/<pid>/cgroup names it.
    const std::string& dir = spec.cgroup_dir;
    auto root = dir.find("/cgroup");
    auto rel = root == std::string::npos ? std::string::npos : dir.find('/', root + 1);
    if (rel != std::string::npos && rel + 1 < dir.size()) facts.cgroup_rel = dir.substr(rel);
  }
  return facts;
}

JobIdentity IdentityOf(const JobHandle& handle, const SpecFacts& facts) {
  JobIdentity id;
  // A live process with the supervisor's pid but another start time means the pid (and so the
  // session id) now belongs to someone else.
  uint64_t ticks = ProcessStartTicks(handle.pid);
  bool same = ticks == 0 || handle.pid_start_ticks == 0 || ticks == handle.pid_start_ticks;
  if (handle.pid > 0 && same) id.session = handle.pid;
  id.key_entry = facts.key_entry;
  id.uid = facts.uid;
  id.cgroup_dir = facts.cgroup_dir;
  id.cgroup_rel = facts.cgroup_rel;
  return id;
}

// Whether anything ran in the job's cgroup (its cpu.stat, which cgroup v2 keeps whatever the
// controllers, says usage_usec above 0): then its supervisor joined it, and every process of the
// job is there. No process can write it; 0 or unreadable: the supervisor may not have joined.
bool RanInCgroup(const JobIdentity& id) {
  auto group = OpenDirNoFollow(id.cgroup_dir);
  if (!group.ok()) return false;
  auto stat = ReadFileBoundedAt(group->get(), "cpu.stat", 4096);
  if (!stat.ok()) return false;
  constexpr char kKey[] = "usage_usec ";
  auto at = stat->rfind(kKey, 0) == 0 ? 0 : stat->find(std::string("\n") + kKey);
  if (at == std::string::npos) return false;
  at = stat->find(' ', at + 1);
  return std::strtoll(stat->c_str() + at + 1, nullptr, 10) > 0;
}

// The pids in the job's cgroup.procs, but its supervisor's, read without following a link: at
// most kMaxCgroupProcsBytes of them (a cgroup.kill reaches the others), and none when the first
// alive one is not found among them (all zombies, or an empty or unreadable cgroup).
std::vector<int64_t> CgroupMembers(const JobIdentity& id) {
  std::vector<int64_t> out;
  auto group = OpenDirNoFollow(id.cgroup_dir);
  if (!group.ok()) return out;
  auto procs = OpenFileAt(group->get(), "cgroup.procs", O_RDONLY);
  if (!procs.ok()) return out;
  std::string text;
  char buf[4096];
  while (text.size() < kMaxCgroupProcsBytes) {
    ssize_t n = ::read(procs->get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  bool alive = false;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    int64_t pid = std::strtoll(text.c_str() + start, nullptr, 10);
    if (pid <= 0 || pid == id.session) continue;
    if (!alive) {
      auto stat = ReadProcStat(pid);
      if (!stat || stat->state == 'Z') continue;
      alive = true;
    }
    out.push_back(pid);
  }
  return out;
}

// Kills every process of the job's cgroup at once (cgroup.kill, Linux 5.14), forks in flight
// included; nothing where the job has no cgroup or the kernel no cgroup.kill.
void KillCgroup(const SpecFacts& facts) {
  if (facts.cgroup_dir.empty()) return;
  auto group = OpenDirNoFollow(facts.cgroup_dir);
  if (!group.ok()) return;
  auto kill = OpenFileAt(group->get(), "cgroup.kill", O_WRONLY);
  if (kill.ok()) (void)!::write(kill->get(), "1", 1);
}

}  // namespace pinpoint::launch
