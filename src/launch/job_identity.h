// Who belongs to a job launched by ProcessLauncher: its session, its cgroup, or its key with its
// user (JobIdentity), and the facts of its spec.json that say so (SpecFacts). Internal to launch/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"

namespace pinpoint::launch {

// The environment entry naming a job's key: "PINPOINT_JOB_KEY=<random>", new for each launch.
inline constexpr char kJobKeyPrefix[] = "PINPOINT_JOB_KEY=";
// What one look at a job's cgroup.procs reads (about 9,000 pids).
inline constexpr size_t kMaxCgroupProcsBytes = 64 * 1024;

// What a job's spec.json says of who belongs to it (JobIdentity): its key's environment entry,
// its user, its cgroup.
struct SpecFacts {
  std::string key_entry;   // "PINPOINT_JOB_KEY=<key>"; "" when the launch had none
  uint32_t uid = 0;        // the job's user
  std::string cgroup_dir;  // "" when the job has no cgroup
  std::string cgroup_rel;  // cgroup_dir as /proc/<pid>/cgroup names it ("/pinpoint/job-5")
};

// Who belongs to a job: the members of the session its supervisor made (the session id is the
// supervisor's pid and outlives it; Linux never hands out a pid while it names a live session),
// and, where it has one, the members of its cgroup, which no unprivileged process can leave.
//
// A process that leaves the session (setsid, a double fork) is still the job's: in its cgroup, or,
// on a node without one, a process whose uids are all the job user's and whose environment holds
// the job's key (PINPOINT_JOB_KEY, random for each launch: a job id alone would also name the jobs
// of another pinpointd on the machine). One that also clears its environment escapes the latter:
// the weaker guarantee of a node without cgroup v2 (docs/security.md).
struct JobIdentity {
  int64_t session = 0;     // 0: the session is unknown or its id was reused
  std::string cgroup_dir;  // "" when the job has no cgroup
  std::string cgroup_rel;  // cgroup_dir as /proc/<pid>/cgroup names it
  std::string key_entry;   // "PINPOINT_JOB_KEY=<key>"; "" when the launch had none
  uint32_t uid = 0;        // the job's user

  // What is known of whether the process `pid` (started at `start_ticks`) carries the job's key:
  // nullopt when nothing is, and its environment is read.
  using KnownKey = std::function<std::optional<bool>(int64_t pid, uint64_t start_ticks)>;
  // Whether `pid` is the job's now (read fresh from /proc; its key from `known` where given).
  bool Holds(int64_t pid, const KnownKey& known = nullptr) const;
  // Whether the NUL-separated `environ` holds `entry` whole.
  static bool HasEntry(const std::string& environ, const std::string& entry);
};

// The cgroup v2 path of `pid` relative to the hierarchy's root ("/pinpoint/job-5"), or "".
std::string CgroupOf(int64_t pid);
// What spec.json says of a job's identity, read once per launch (it holds the job's whole
// environment: reading it at every poll of an ending job cost the loop a parse of up to MiBs).
SpecFacts FactsOf(const LaunchSpec& spec);
// The identity of the job in `handle`: its session while the supervisor's pid is still its own.
JobIdentity IdentityOf(const JobHandle& handle, const SpecFacts& facts);
// Whether anything ran in the job's cgroup (its cpu.stat says usage_usec above 0): then its
// supervisor joined it, and every process of the job is there.
bool RanInCgroup(const JobIdentity& id);
// The pids in the job's cgroup.procs, but its supervisor's: at most kMaxCgroupProcsBytes of them,
// and none when the first alive one is not found among them.
std::vector<int64_t> CgroupMembers(const JobIdentity& id);
// Kills every process of the job's cgroup at once (cgroup.kill); nothing without one.
void KillCgroup(const SpecFacts& facts);

}  // namespace pinpoint::launch
