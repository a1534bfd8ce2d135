#include "launch/process_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/file_util.h"
#include "common/process.h"
#include "launch/shim.h"

namespace pinpoint::launch {

ProcessLauncher::ProcessLauncher(std::string shim_path) : shim_path_(std::move(shim_path)) {}

uint64_t ProcessStartTicks(int64_t pid) {
  auto stat = ReadProcStat(pid);
  return stat ? stat->start_ticks : 0;
}

Result<JobHandle> ProcessLauncher::Launch(const LaunchSpec& spec) {
  PP_RETURN_IF_ERROR(MakeDirs(spec.job_dir, 0755));
  // A requeued job's earlier run must not be mistaken for this one.
  for (const char* stale : {kExitFile, kJobPidFile}) ::unlink((spec.job_dir + "/" + stale).c_str());
  PP_RETURN_IF_ERROR(WriteSpec(spec));
  std::string lock_path = spec.job_dir + "/" + kLockFile;
  // Locked before fork and inherited by the shim: there is no moment at which the job lives
  // and its lock is free, so a daemon restarting at any time reads liveness correctly.
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return IoError("open " + lock_path + ": " + ErrnoText(errno));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    return IoError("job " + std::to_string(spec.job_id) + " already has a live supervisor");
  }
  std::string fd_arg = std::to_string(lock_fd);
  const char* argv[] = {shim_path_.c_str(), spec.job_dir.c_str(), fd_arg.c_str(), nullptr};
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(lock_fd);
    return IoError("fork: " + ErrnoText(err));
  }
  if (pid == 0) {
    ::fcntl(lock_fd, F_SETFD, 0);
    ::execv(argv[0], const_cast<char**>(argv));
    ::_exit(127);
  }
  ::close(lock_fd);
  children_.insert(pid);
  JobHandle handle;
  handle.job_id = spec.job_id;
  handle.job_dir = spec.job_dir;
  handle.pid = pid;
  handle.pid_start_ticks = ProcessStartTicks(pid);
  return handle;
}

std::optional<ExitStatus> ProcessLauncher::Poll(const JobHandle& handle) {
  std::string lock_path = handle.job_dir + "/" + kLockFile;
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    ExitStatus never;
    never.kind = ExitStatus::Kind::kNeverLaunched;
    never.error = "no supervisor was ever started";
    return never;
  }
  bool alive = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  if (alive) return std::nullopt;
  auto status = ReadExitStatus(handle.job_dir);
  if (status.ok()) return *status;
  // The shim writes job.pid before the job may run any code of its own: without it the job
  // never started (the daemon died between creating the lock and forking), so it may be queued
  // again without running twice.
  if (ReadJobPid(handle.job_dir) == 0) {
    ExitStatus never;
    never.kind = ExitStatus::Kind::kNeverLaunched;
    never.error = "the job's supervisor never started it";
    return never;
  }
  ExitStatus lost;
  lost.kind = ExitStatus::Kind::kNoStatus;
  lost.error = "the job's supervisor ended without recording an exit status";
  return lost;
}

Status ProcessLauncher::Signal(const JobHandle& handle, int signal) {
  // The job runs in its own process group (job.pid); the shim stays out of reach of the signal
  // and records how the job ended.
  int64_t job_pid = ReadJobPid(handle.job_dir);
  bool shim_alive = Poll(handle) == std::nullopt;
  if (job_pid > 0 && shim_alive) {
    if (::kill(static_cast<pid_t>(-job_pid), signal) == 0 || errno == ESRCH) return Status::Ok();
    return IoError("kill job " + std::to_string(handle.job_id) + ": " + ErrnoText(errno));
  }
  if (handle.pid <= 0) return Status::Ok();
  // A pid reused by an unrelated process must never be signalled.
  if (handle.pid_start_ticks != 0 && ProcessStartTicks(handle.pid) != handle.pid_start_ticks)
    return Status::Ok();
  if (::kill(static_cast<pid_t>(-handle.pid), signal) == 0) return Status::Ok();
  // Just after fork the shim may not have made its own process group yet.
  if (errno == ESRCH && ::kill(static_cast<pid_t>(handle.pid), signal) == 0) return Status::Ok();
  if (errno == ESRCH) return Status::Ok();
  return IoError("kill job " + std::to_string(handle.job_id) + ": " + ErrnoText(errno));
}

std::vector<int64_t> ProcessLauncher::JobProcesses(const JobHandle& handle) {
  std::vector<int64_t> out;
  if (handle.pid <= 0) return out;
  for (int64_t pid : ListPids()) {
    if (pid == handle.pid) continue;
    auto stat = ReadProcStat(pid);
    if (stat && stat->state != 'Z' && stat->session == handle.pid) out.push_back(pid);
  }
  return out;
}

void ProcessLauncher::Reap() {
  for (auto it = children_.begin(); it != children_.end();) {
    int wstatus = 0;
    pid_t r = ::waitpid(static_cast<pid_t>(*it), &wstatus, WNOHANG);
    if (r == 0) {
      ++it;
    } else {
      it = children_.erase(it);  // reaped, or not our child any more
    }
  }
}

}  // namespace pinpoint::launch
