// The files of a job's directory that the shim and pinpointd share (launch/shim.h): the daemon's
// lock as the shim probes it, the directory opened as trusted, job.pid, and the exit status in its
// two forms (exit.json, and the preallocated slot written in place when the disk is full).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/json_reader.h"
#include "launch/shim.h"

namespace pinpoint::launch {

using nlohmann::json;

namespace {

const char* KindName(ExitStatus::Kind kind) {
  switch (kind) {
    case ExitStatus::Kind::kExited:
      return "exited";
    case ExitStatus::Kind::kSignaled:
      return "signaled";
    case ExitStatus::Kind::kLaunchFailed:
      return "launch-failed";
    case ExitStatus::Kind::kNoStatus:
      return "no-status";
    case ExitStatus::Kind::kNeverLaunched:
      return "never-launched";
    case ExitStatus::Kind::kOrphaned:
      return "orphaned";
  }
  return "no-status";
}

}  // namespace

DaemonLock ProbeDaemonLock(const std::string& lock_path) {
  int fd = ::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? DaemonLock::kFree : DaemonLock::kUnknown;
  UniqueFd owned(fd);
  struct flock probe {};
  probe.l_type = F_WRLCK;  // conflicts with any lock: only whether one is held is asked
  probe.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_GETLK, &probe) != 0) return DaemonLock::kUnknown;
  return probe.l_type == F_UNLCK ? DaemonLock::kFree : DaemonLock::kHeld;
}

Result<UniqueFd> OpenJobDir(const std::string& job_dir) {
  auto dir = OpenDirNoFollow(job_dir);
  if (!dir.ok()) return dir.status();
  struct stat st {};
  if (::fstat(dir->get(), &st) != 0) return IoError("stat " + job_dir + ": " + ErrnoText(errno));
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return IoError("job directory " + job_dir + " is not owned and writable by uid " +
                   std::to_string(::geteuid()) + " alone: not trusted");
  return dir;
}

int64_t ReadJobPid(int dir_fd) {
  auto text = ReadFileBoundedAt(dir_fd, kJobPidFile, 64);
  if (!text.ok()) return 0;
  try {
    int64_t pid = std::stoll(*text);
    return pid > 0 ? pid : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

int64_t ReadJobPid(const std::string& job_dir) {
  auto dir = OpenDirNoFollow(job_dir);
  return dir.ok() ? ReadJobPid(dir->get()) : 0;
}

namespace {

json StatusJson(const ExitStatus& status) {
  json j{{"kind", KindName(status.kind)},
         {"exit_code", status.exit_code},
         {"term_signal", status.term_signal},
         {"error", status.error}};
  if (status.output_exceeded) j["output_exceeded"] = true;  // written only when set
  return j;
}

Result<ExitStatus> ParseExitStatus(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  ExitStatus s;
  std::string kind;
  auto in = JsonReader::Record(j, "exit status");
  for (const char* key : {"kind", "exit_code", "term_signal", "error"}) in.Require(key);
  in.String("kind", &kind);
  in.Integer("exit_code", &s.exit_code);
  in.Integer("term_signal", &s.term_signal);
  in.String("error", &s.error);
  in.Bool("output_exceeded", &s.output_exceeded);  // absent (older shims): false
  if (!in.ok()) return IoError("bad exit status: " + in.error().message());
  s.kind = ExitStatus::Kind::kNoStatus;
  for (auto k : {ExitStatus::Kind::kExited, ExitStatus::Kind::kSignaled,
                 ExitStatus::Kind::kLaunchFailed, ExitStatus::Kind::kNoStatus}) {
    if (kind == KindName(k)) s.kind = k;
  }
  return s;
}

}  // namespace

Status CreateExitSlot(int dir_fd) {
  auto slot = OpenFileAt(dir_fd, kExitSlotFile, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!slot.ok()) return slot.status();
  std::string zeros(kExitSlotBytes, '\0');
  size_t done = 0;
  while (done < zeros.size()) {
    ssize_t n = ::write(slot->get(), zeros.data() + done, zeros.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(std::string("write ") + kExitSlotFile + ": " + ErrnoText(errno));
    done += static_cast<size_t>(n);
  }
  // Not fsynced (the daemon's loop must not wait on the disk): written blocks are allocated or,
  // with delayed allocation, reserved, which is all the shim's later in-place write needs.
  return Status::Ok();
}

Status WriteExitStatus(int dir_fd, const ExitStatus& status) {
  return WriteFileAtomicAt(dir_fd, kExitFile, StatusJson(status).dump(), 0600);
}

Status WriteExitSlot(int dir_fd, const ExitStatus& status) {
  ExitStatus fitted = status;
  std::string text = StatusJson(fitted).dump();
  // One NUL at least must follow the text: the reader stops there.
  while (text.size() >= kExitSlotBytes && !fitted.error.empty()) {
    fitted.error.resize(fitted.error.size() / 2);
    text = StatusJson(fitted).dump();
  }
  auto slot = OpenFileAt(dir_fd, kExitSlotFile, O_WRONLY);
  if (!slot.ok()) return slot.status();
  text.push_back('\0');
  ssize_t n;
  do {
    n = ::pwrite(slot->get(), text.data(), text.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(text.size()))
    return IoError(std::string("write ") + kExitSlotFile + ": " +
                   (n < 0 ? ErrnoText(errno) : "short write"));
  if (::fdatasync(slot->get()) != 0)
    return IoError(std::string("fdatasync ") + kExitSlotFile + ": " + ErrnoText(errno));
  return Status::Ok();
}

Result<ExitStatus> ReadExitStatus(int dir_fd) {
  auto text = ReadFileBoundedAt(dir_fd, kExitFile, kExitSlotBytes);
  if (text.ok()) return ParseExitStatus(*text);
  if (text.status().code() != Code::kNotFound) return text.status();
  auto slot = ReadFileBoundedAt(dir_fd, kExitSlotFile, kExitSlotBytes);
  if (!slot.ok()) return NotFound("no exit status recorded");
  std::string recorded = slot->substr(0, slot->find('\0'));
  if (recorded.empty()) return NotFound("no exit status recorded");
  return ParseExitStatus(recorded);
}

Result<ExitStatus> ReadExitStatus(const std::string& job_dir) {
  auto dir = OpenDirNoFollow(job_dir);
  if (!dir.ok()) return dir.status();
  return ReadExitStatus(dir->get());
}

}  // namespace pinpoint::launch
