#include "daemon/node/occupant.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "common/log.h"
#include "daemon/jobs/enforcement.h"
#include "daemon/node/lease_edits.h"
#include "pinpoint/escape.h"

namespace pinpoint::daemon {

namespace {

bool IsCharDevice(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

// --- ShimOccupant ------------------------------------------------------------------------------

std::string ShimOccupant::JobDir(const NodeOptions& options, JobId id) {
  return options.identity.state_dir + "/jobs/" + std::to_string(id);
}

std::string ShimOccupant::OutputFile(const JobRecord& r, const std::string& pattern) {
  if (pattern.empty()) return "";
  // %N: the node's name as SLURMD_NODENAME has it (setup/daemon.cc), the host's short name.
  char host[256] = {};
  std::string node = ::gethostname(host, sizeof(host) - 1) == 0 ? host : "";
  node = node.substr(0, node.find('.'));
  return OutputPathFor(pattern, r.id, r.user, r.request.name, r.request.cwd, r.array, node);
}

launch::JobHandle ShimOccupant::Handle(const JobRecord& job) const {
  launch::JobHandle h;
  h.job_id = job.id;
  h.job_dir = JobDir(*options_, job.id);
  h.pid = job.pid;
  h.pid_start_ticks = job.pid_start_ticks;
  return h;
}

Result<bool> ShimOccupant::Start(JobRecord& job, std::vector<std::string> env) {
  launch::LaunchSpec spec;
  spec.job_id = job.id;
  spec.argv = job.request.argv;
  spec.cwd = job.request.cwd;
  spec.umask = job.request.umask >= 0 ? job.request.umask : 077;
  spec.env = std::move(env);
  spec.switch_user = options_->identity.daemon_uid == 0 && job.uid != 0;
  spec.uid = job.uid;
  spec.gid = job.gid;
  if (spec.switch_user) {
    auto user = users_->ByUid(job.uid);
    spec.groups = user.ok() ? user->groups : std::vector<uint32_t>{job.gid};
  }
  spec.job_dir = JobDir(*options_, job.id);
  spec.daemon_lock = options_->launch.daemon_lock;
  spec.daemon_away_ms = options_->launch.daemon_away_ms;
  // Checked ten times within the limit, never more often than 10 times a second.
  if (spec.daemon_away_ms > 0)
    spec.orphan_check_ms =
        static_cast<int>(std::clamp<int64_t>(spec.daemon_away_ms / 10, 100, spec.orphan_check_ms));
  spec.stdout_path = OutputFile(job, job.request.output_path);
  spec.stderr_path =
      job.request.error_path.empty() ? spec.stdout_path : OutputFile(job, job.request.error_path);
  // Each run's facts are its own (a requeued job's earlier run read its own).
  job.readback = Readback{};
  if (cgroups_ != nullptr && cgroups_->enabled()) {
    auto dir = cgroups_->CreateJobGroup(job.id, job.request.cpus, job.request.mem_bytes, job.cpuset,
                                        options_->launch.shared_cpus);
    if (dir.ok()) {
      spec.cgroup_dir = *dir;
      ReadBackLimits(job);
    } else {
      log::Warn("job {}: running without host limits: {}", job.id, dir.status().message());
      job.readback.host_unread = Bounded("its cgroup could not be made: " + dir.status().message());
    }
  } else {
    job.readback.host_unread = "this node applies no host limits (no cgroup v2 for pinpoint)";
  }
  spec.cpus = job.cpuset.empty() ? options_->launch.shared_cpus : job.cpuset;
  spec.max_output_bytes = options_->launch.output.job_bytes;
  spec.output_check_ms =
      static_cast<int>(std::clamp<int64_t>(options_->launch.output_check_ms, 1, 60000));
  auto handle = launcher_->Launch(spec);
  if (!handle.ok()) return handle.status();
  job.pid = handle->pid;
  job.pid_start_ticks = handle->pid_start_ticks;
  return true;
}

OccupantEnd ShimOccupant::LaunchFailed(const std::string& why) const {
  launch::ExitStatus failed;
  failed.kind = launch::ExitStatus::Kind::kLaunchFailed;
  failed.error = why;
  return OccupantEnd{.exit = failed};
}

std::optional<OccupantEnd> ShimOccupant::Poll(const JobRecord& job, int64_t) {
  auto status = launcher_->Poll(Handle(job));
  if (!status) return std::nullopt;
  return OccupantEnd{.exit = *status};
}

std::optional<launch::ExitStatus> ShimOccupant::Found(const JobRecord& job) {
  // At start nothing is served yet: where the look at the node's processes stops at a pass's
  // budget (Launcher::MoreDue), it goes on here, pass after pass, for at most kFoundLookMs, so a
  // job that ended while pinpointd was down is found ended now, not adopted and ended later.
  constexpr int64_t kFoundLookMs = 5000;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFoundLookMs);
  std::optional<launch::ExitStatus> status = launcher_->Poll(Handle(job));
  while (!status && launcher_->MoreDue() && std::chrono::steady_clock::now() < deadline) {
    launcher_->Reap();
    status = launcher_->Poll(Handle(job));
  }
  return status;
}

Status ShimOccupant::Signal(const JobRecord& job, int signal) {
  return launcher_->Signal(Handle(job), signal);
}

Status ShimOccupant::SignalAll(const JobRecord& job, int signal) {
  return launcher_->SignalAll(Handle(job), signal);
}

Status ShimOccupant::SignalLeader(const JobRecord& job, int signal) {
  return launcher_->SignalLeader(Handle(job), signal);
}

Result<std::vector<int64_t>> ShimOccupant::AllProcesses(const JobRecord& job) {
  return launcher_->AllJobProcesses(Handle(job));
}

std::vector<int64_t> ShimOccupant::Processes(const JobRecord& job) {
  return launcher_->JobProcesses(Handle(job));
}

void ShimOccupant::ReadBackLimits(JobRecord& job) const {
  launch::Cgroups::Limits limits = cgroups_->ReadLimits(job.id);
  job.readback.cpuset = Bounded(limits.cpuset);
  job.readback.cpu_max = Bounded(limits.cpu_max);
  job.readback.memory_max = Bounded(limits.memory_max);
  if (limits.cpu_max.empty() && limits.memory_max.empty())
    job.readback.host_unread = "its cgroup's files could not be read";
  size_t disagree = Disagreements(EnforcementOf(job));
  if (disagree > 0)
    log::Warn(
        "job {}: the kernel applies other host limits than it asked for (cpuset '{}', "
        "cpu.max '{}', memory.max '{}')",
        job.id, EscapeForTerminal(job.readback.cpuset), EscapeForTerminal(job.readback.cpu_max),
        EscapeForTerminal(job.readback.memory_max));
}

void ShimOccupant::Release(JobRecord& job) {
  if (cgroups_ == nullptr || !cgroups_->enabled()) return;
  launch::Cgroups::Usage usage = cgroups_->ReadUsage(job.id);
  job.readback.cpu_usec = usage.cpu_usec;
  job.readback.mem_peak_bytes = usage.mem_peak_bytes;
  Status s = cgroups_->RemoveJobGroup(job.id);
  if (!s.ok()) log::Warn("job {}: {}", job.id, s.message());
}

// --- LeaseOccupant -----------------------------------------------------------------------------

Result<bool> LeaseOccupant::Start(JobRecord& job, std::vector<std::string> env) {
  std::map<std::string, std::string> vars;
  for (const std::string& entry : env)
    if (size_t eq = entry.find('='); eq != std::string::npos)
      vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  std::vector<std::string> paths;
  for (const Allocation& a : job.allocations)
    for (std::string& path : sharing_->For(a.mode).ClientPaths(vars))
      if (std::find(paths.begin(), paths.end(), path) == paths.end())
        paths.push_back(std::move(path));
  edits_[job.id] = LeaseEditsOf(env, job.allocations, *devices_, options_->identity.device_dir,
                                IsCharDevice, paths);
  log::Info("lease {} of {} placed; waits up to {} ms for its container", job.id, job.user,
            options_->launch.lease_attach_timeout_ms);
  return false;  // no supervisor, no pid: Poll watches its cgroup
}

OccupantEnd LeaseOccupant::LaunchFailed(const std::string&) const {
  return OccupantEnd{.cause = Reason::kLaunchFailed};
}

std::optional<OccupantEnd> LeaseOccupant::Poll(const JobRecord& job, int64_t now_ms) {
  if (job.lease_cgroup.empty()) {
    if (job.cancel_requested) return OccupantEnd{.cause = Reason::kCancelled};
    if (now_ms >= job.start_ms + options_->launch.lease_attach_timeout_ms)
      return OccupantEnd{.cause = Reason::kLeaseNotAttached};
    return std::nullopt;
  }
  if (containers_ == nullptr) return std::nullopt;
  auto pids = containers_->Processes(job.lease_cgroup);
  if (!pids || pids->empty()) return OccupantEnd{.cause = Reason::kLeaseEmptied};
  return std::nullopt;
}

Status LeaseOccupant::Signal(const JobRecord& job, int signal) {
  if (job.lease_cgroup.empty() || containers_ == nullptr) return Status::Ok();
  return containers_->Signal(job.lease_cgroup, signal);
}

Status LeaseOccupant::SignalLeader(const JobRecord& job, int) {
  return FailedPrecondition("lease " + std::to_string(job.id) +
                            " has no first process: pinpoint did not start it");
}

std::vector<int64_t> LeaseOccupant::Processes(const JobRecord& job) {
  if (job.lease_cgroup.empty() || containers_ == nullptr) return {};
  return containers_->Processes(job.lease_cgroup).value_or(std::vector<int64_t>{});
}

void LeaseOccupant::Release(JobRecord& job) {
  edits_.erase(job.id);
  if (specs_ == nullptr) return;
  Status s = specs_->Remove(job.id);  // the spec `pinpoint cdi` wrote for it
  if (!s.ok()) log::Warn("lease {}: CDI spec: {}", job.id, s.message());
}

LeaseEdits LeaseOccupant::EditsOf(JobId id) const {
  auto edits = edits_.find(id);
  return edits != edits_.end() ? edits->second : LeaseEdits{};
}

}  // namespace pinpoint::daemon
