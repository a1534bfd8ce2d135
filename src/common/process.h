// Reading /proc and preparing exec arguments: the few process facts the launcher and the MPS
// code need, in one place.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pinpoint {

// Fields of /proc/<pid>/stat that pinpoint uses.
struct ProcStat {
  char state = '?';  // 'R', 'S', 'Z', ...
  int64_t ppid = 0;
  int64_t pgrp = 0;
  int64_t session = 0;
  uint64_t start_ticks = 0;  // field 22: start time in clock ticks since boot
};

// nullopt when the process does not exist (or /proc cannot be read). `owner`, where given, gets
// the owner of /proc/<pid>: the process's effective uid, or root's while it may not be dumped (a
// set-user-id program, one that changed its ids).
std::optional<ProcStat> ReadProcStat(int64_t pid, uint32_t* owner = nullptr);
// The fields above from the text of a /proc/<pid>/stat line; nullopt when it does not parse.
std::optional<ProcStat> ParseProcStat(std::string_view line);
// Whether `pid` is a user process between two programs: inside an execve, after its old
// program's memory is gone and before the new program's environment is laid out. Its
// /proc/<pid>/environ reads empty there, as it does for a process whose environment is empty;
// /proc/<pid>/stat tells the two apart (env_end, field 51, is 0 only in between, as the kernel
// shows it to a reader let see the process's memory). False for a kernel thread, a zombie, a
// process gone, one the reader may not see into, or a kernel that shows no such field.
bool ProcessBetweenPrograms(int64_t pid);
// The same from the text of a /proc/<pid>/stat.
bool StatBetweenPrograms(std::string_view stat);
// True when `pid` exists and is not a zombie.
bool ProcessAlive(int64_t pid);
// Every pid in /proc.
std::vector<int64_t> ListPids();
// /proc/<pid>/<name> ("cmdline", "environ", "status"), at most kMaxEnvironBytes of it: a process
// controls the size of its command line and environment (megabytes, with a large stack limit),
// and pinpointd reads other users' processes. Empty when unreadable.
std::string ReadProcFile(int64_t pid, const char* name);

// Waits until `pid` (any process, child or not) has exited or timeout_ms passes; true when it
// exited. Uses a pidfd, so nothing polls in a loop (falls back to 10 ms steps on old kernels).
// A child is not reaped: call waitpid afterwards.
bool WaitForExit(int64_t pid, int timeout_ms);

// The real, effective and saved user ids of a process (/proc/<pid>/status "Uid:").
struct ProcUids {
  uint32_t real = 0;
  uint32_t effective = 0;
  uint32_t saved = 0;
  // True when every id is `uid`: a set-user-id program started by someone else never qualifies.
  bool AllAre(uint32_t uid) const { return real == uid && effective == uid && saved == uid; }
};
// nullopt when the process does not exist or its status cannot be read.
std::optional<ProcUids> ReadProcUids(int64_t pid);

// A process held by a pidfd: signals and waits reach exactly the process that was opened, never
// a later one that reuses its pid. Movable, not copyable; closes the descriptor when destroyed.
class PidFd {
 public:
  PidFd() = default;
  ~PidFd();
  PidFd(PidFd&& other) noexcept;
  PidFd& operator=(PidFd&& other) noexcept;
  PidFd(const PidFd&) = delete;
  PidFd& operator=(const PidFd&) = delete;

  // Opens `pid`. nullopt when it does not exist or the kernel has no pidfd_open (before 5.3).
  static std::optional<PidFd> Open(int64_t pid);
  // Opens `pid` and keeps it only when `belongs(pid)` holds for the process that was opened:
  // the check runs after the open, and the process must still be alive after the check, so a
  // pid reused between a scan and the open is never mistaken for the process that was found.
  template <typename Check>
  static std::optional<PidFd> OpenVerified(int64_t pid, Check&& belongs) {
    auto fd = Open(pid);
    if (!fd || !belongs(pid) || !fd->Alive()) return std::nullopt;
    return fd;
  }

  bool valid() const { return fd_ >= 0; }
  int64_t pid() const { return pid_; }
  int fd() const { return fd_; }  // readable once the process has exited
  // True until the process has exited (a zombie counts as exited).
  bool Alive() const;
  // Sends `signal` through the pidfd; true when sent or the process has already exited.
  bool Signal(int signal) const;
  // Waits up to timeout_ms for the process to exit; true when it has.
  bool WaitExit(int timeout_ms) const;

 private:
  int fd_ = -1;
  int64_t pid_ = 0;
};

// Sends `signal` to the process that has `pid` only while `belongs(pid)` holds for it: the
// process is pinned with a pidfd before `belongs` looks at /proc, so a pid reused between the
// check and the signal is never hit. Returns true when the signal was sent; false when the
// process is gone, does not belong, or the signal failed. Kernels without pidfd (before 5.3)
// fall back to kill() after the check.
bool SignalIfBelongs(int64_t pid, int signal, const std::function<bool(int64_t)>& belongs);

// For a child between fork and exec (async-signal-safe): marks every descriptor from `first_fd`
// up close-on-exec, except `keep_fd` (-1: none), so that the program it execs holds the
// descriptors below first_fd (and keep_fd) and nothing else its parent had open, whether or not
// the parent opened them with O_CLOEXEC.
void CloseOnExecFrom(int first_fd, int keep_fd = -1);

// At most `max_bytes` of /proc/<pid>/<name> ("" when it cannot be read): for files a user's
// process controls the size of, such as environ.
std::string ReadProcFileBounded(int64_t pid, const char* name, size_t max_bytes);
inline constexpr size_t kMaxEnvironBytes = 1 << 20;

// NULL-terminated char* views of `strings` for exec*(); valid while `strings` lives.
std::vector<char*> CStrings(const std::vector<std::string>& strings);

}  // namespace pinpoint
