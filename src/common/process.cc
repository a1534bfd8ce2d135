#include "common/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

namespace pinpoint {

namespace {

// Reads a small /proc file whole into `buf` (its size at most): no stream, no allocation. The
// number of bytes read; 0 when it could not be read. `owner`, where given, gets the file's owner:
// the process's effective uid, or root's when it may not be dumped (a set-user-id program).
size_t ReadSmallProcFile(int64_t pid, const char* name, char* buf, size_t size,
                         uint32_t* owner = nullptr) {
  char path[64];
  int len = std::snprintf(path, sizeof path, "/proc/%lld/%s", static_cast<long long>(pid), name);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof path) return 0;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  if (owner != nullptr) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return 0;
    }
    *owner = st.st_uid;
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return got;
}

// Splits off the next space-separated field of `rest`.
std::string_view NextField(std::string_view& rest) {
  size_t start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  size_t end = rest.find(' ', start);
  std::string_view field = rest.substr(start, end == std::string_view::npos ? end : end - start);
  rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  return field;
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view line) {
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  auto close = line.rfind(')');
  if (close == std::string_view::npos || close + 2 >= line.size()) return std::nullopt;
  std::string_view rest = line.substr(close + 1);
  ProcStat s;
  std::string_view state = NextField(rest);
  if (state.size() != 1) return std::nullopt;
  s.state = state[0];
  if (!ParseNumber(NextField(rest), &s.ppid) || !ParseNumber(NextField(rest), &s.pgrp) ||
      !ParseNumber(NextField(rest), &s.session))
    return std::nullopt;
  for (int field = 7; field < 22; ++field)
    if (NextField(rest).empty()) return std::nullopt;
  std::string_view ticks = NextField(rest);
  if (!ParseNumber(ticks, &s.start_ticks)) return std::nullopt;
  return s;
}

std::optional<ProcStat> ReadProcStat(int64_t pid, uint32_t* owner) {
  if (pid <= 0) return std::nullopt;
  // One line of some 300 bytes; a command name is at most 64 bytes.
  char buf[1024];
  size_t n = ReadSmallProcFile(pid, "stat", buf, sizeof buf, owner);
  if (n == 0) return std::nullopt;
  std::string_view line(buf, n);
  if (auto end = line.find('\n'); end != std::string_view::npos) line = line.substr(0, end);
  return ParseProcStat(line);
}

bool StatBetweenPrograms(std::string_view stat) {
  auto close = stat.rfind(')');
  if (close == std::string_view::npos) return false;
  std::istringstream rest{std::string(stat.substr(close + 1))};
  std::string field;
  constexpr uint64_t kKernelThread = 0x00200000;  // PF_KTHREAD
  char state = '?';
  uint64_t flags = 0;
  std::string start_code, env_end;
  for (int n = 3; n <= 51 && rest >> field; ++n) {
    if (n == 3) state = field.empty() ? '?' : field[0];
    if (n == 9) flags = std::strtoull(field.c_str(), nullptr, 10);
    if (n == 26) start_code = field;
    if (n == 51) env_end = field;
  }
  if (env_end.empty() || state == 'Z' || state == 'X' || (flags & kKernelThread) != 0) return false;
  // To a reader not let see the process's memory the kernel shows start_code 1 and env_end 0:
  // nothing is known of it then, not even that it is inside an exec.
  return start_code != "1" && env_end == "0";
}

bool ProcessBetweenPrograms(int64_t pid) {
  if (pid <= 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  return StatBetweenPrograms(line);
}

bool ProcessAlive(int64_t pid) {
  auto s = ReadProcStat(pid);
  return s && s->state != 'Z';
}

std::vector<int64_t> ListPids() {
  std::vector<int64_t> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

std::string ReadProcFile(int64_t pid, const char* name) {
  return ReadProcFileBounded(pid, name, kMaxEnvironBytes);
}

bool WaitForExit(int64_t pid, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0) {
    if (errno == ESRCH) return true;  // already gone
    while (ProcessAlive(pid)) {       // kernels before 5.3
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  bool exited = false;
  for (;;) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    pollfd p{pidfd, POLLIN, 0};
    int n = ::poll(&p, 1, left > 0 ? left : 0);
    if (n > 0) exited = true;
    if (n >= 0 || errno != EINTR) break;
  }
  ::close(pidfd);
  return exited;
}

std::optional<ProcUids> ReadProcUids(int64_t pid) {
  if (pid <= 0) return std::nullopt;
  // "Uid:" is among the first lines; the groups (up to 65536 of them) come after it.
  char buf[4096];
  size_t n = ReadSmallProcFile(pid, "status", buf, sizeof buf);
  std::string_view text(buf, n);
  size_t at = text.rfind("Uid:", 0) == 0 ? 0 : text.find("\nUid:");
  if (at == std::string_view::npos) return std::nullopt;
  text = text.substr(at + (at == 0 ? 4 : 5));
  text = text.substr(0, text.find('\n'));
  std::string line(text);
  for (char& c : line)
    if (c == '\t') c = ' ';
  std::string_view rest = line;
  ProcUids u;
  if (!ParseNumber(NextField(rest), &u.real) || !ParseNumber(NextField(rest), &u.effective) ||
      !ParseNumber(NextField(rest), &u.saved))
    return std::nullopt;
  return u;
}

PidFd::~PidFd() {
  if (fd_ >= 0) ::close(fd_);
}

PidFd::PidFd(PidFd&& other) noexcept : fd_(other.fd_), pid_(other.pid_) { other.fd_ = -1; }

PidFd& PidFd::operator=(PidFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    pid_ = other.pid_;
    other.fd_ = -1;
  }
  return *this;
}

std::optional<PidFd> PidFd::Open(int64_t pid) {
  if (pid <= 0) return std::nullopt;
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (fd < 0) return std::nullopt;
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  PidFd out;
  out.fd_ = fd;
  out.pid_ = pid;
  return out;
}

bool PidFd::Alive() const { return fd_ >= 0 && !WaitExit(0); }

bool PidFd::Signal(int signal) const {
  if (fd_ < 0) return false;
  return ::syscall(SYS_pidfd_send_signal, fd_, signal, nullptr, 0) == 0 || errno == ESRCH;
}

bool PidFd::WaitExit(int timeout_ms) const {
  if (fd_ < 0) return true;
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

bool SignalIfBelongs(int64_t pid, int signal, const std::function<bool(int64_t)>& belongs) {
  if (pid <= 0) return false;
  auto held = PidFd::Open(pid);
  if (!held) {
    if (errno != ENOSYS) return false;  // gone (ESRCH), or not ours to open
    return belongs(pid) && ::kill(static_cast<pid_t>(pid), signal) == 0;
  }
  return belongs(pid) && ::syscall(SYS_pidfd_send_signal, held->fd(), signal, nullptr, 0) == 0;
}

namespace {

constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC, Linux 5.11

void CloseOnExecRange(unsigned first, unsigned last) {
  if (first > last) return;
  if (::syscall(SYS_close_range, first, last, kCloseRangeCloexec) == 0) return;
  // Older kernels: one by one, up to the descriptor limit.
  rlimit files{};
  unsigned limit = ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < (1u << 20)
                       ? static_cast<unsigned>(files.rlim_cur)
                       : (1u << 20);
  for (unsigned fd = first; fd <= last && fd < limit; ++fd)
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

}  // namespace

void CloseOnExecFrom(int first_fd, int keep_fd) {
  unsigned first = static_cast<unsigned>(first_fd);
  if (keep_fd >= first_fd) {
    if (keep_fd > first_fd) CloseOnExecRange(first, static_cast<unsigned>(keep_fd) - 1);
    first = static_cast<unsigned>(keep_fd) + 1;
  }
  CloseOnExecRange(first, ~0u);
}

std::string ReadProcFileBounded(int64_t pid, const char* name, size_t max_bytes) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[65536];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd, buf, std::min(sizeof(buf), max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace pinpoint
