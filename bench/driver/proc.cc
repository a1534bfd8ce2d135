#include "bench/driver/proc.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "common/file_util.h"
#include "common/process.h"

extern char** environ;

namespace pinpoint::bench {

namespace {

constexpr int kStopCheckMs = 200;

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// In the child after fork: only async-signal-safe calls.
void RedirectOrDie(const std::string& path, int target) {
  int fd = ::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) ::_exit(126);
  ::dup2(fd, target);
  if (fd != target) ::close(fd);
}

void CloseFrom(int first) {
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
  for (int fd = first; fd < 4096; ++fd) ::close(fd);
}

void ExecOrDie(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> args = CStrings(argv);
  std::vector<char*> envp = CStrings(env);
  ::execvpe(args[0], args.data(), envp.data());
  const char* why = std::strerror(errno);
  const char* prefix = "pinpoint bench: cannot run ";
  (void)!::write(2, prefix, std::strlen(prefix));
  (void)!::write(2, args[0], std::strlen(args[0]));
  (void)!::write(2, ": ", 2);
  (void)!::write(2, why, std::strlen(why));
  (void)!::write(2, "\n", 1);
  ::_exit(127);
}

void ReadAvailable(int fd, std::string* into, bool* eof) {
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      into->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) *eof = true;
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN: nothing more for now
  }
}

}  // namespace

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> ChildEnvironment(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string::npos || kv.rfind("CUDA_MPS_", 0) == 0) continue;
    vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const std::string& kv : extra) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

Result<pid_t> Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("empty command");
  pid_t pid = ::fork();
  if (pid < 0) return IoError("fork: " + ErrnoText(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    RedirectOrDie(spec.stdout_path, 1);
    if (spec.stderr_path == spec.stdout_path && !spec.stdout_path.empty()) {
      ::dup2(1, 2);
    } else {
      RedirectOrDie(spec.stderr_path, 2);
    }
    if (spec.ready_fd >= 0) {
      if (spec.ready_fd != 3) ::dup2(spec.ready_fd, 3);
      CloseFrom(4);
    } else {
      CloseFrom(3);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ExecOrDie(spec.argv, spec.env);
  }
  ::setpgid(pid, pid);  // also from the parent, so a kill(-pid) right away reaches it
  return pid;
}

Status WaitAll(const std::vector<pid_t>& pids, const std::atomic<bool>* stop,
               const std::function<void(size_t, int, double)>& on_exit) {
  std::vector<int> fds(pids.size(), -1);
  std::vector<bool> done(pids.size(), false);
  bool polling = false;
  for (size_t i = 0; i < pids.size(); ++i) {
    fds[i] = PidfdOpen(pids[i]);
    if (fds[i] < 0) polling = true;  // kernels before 5.3
  }
  size_t left = pids.size();
  Status result;
  while (left > 0) {
    if (stop != nullptr && stop->load()) {
      result = Unavailable("interrupted");
      break;
    }
    if (polling) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } else {
      std::vector<pollfd> p;
      for (size_t i = 0; i < pids.size(); ++i) {
        if (!done[i]) p.push_back({fds[i], POLLIN, 0});
      }
      int n = ::poll(p.data(), p.size(), kStopCheckMs);
      if (n <= 0) continue;
    }
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      pid_t r = ::waitpid(pids[i], &status, WNOHANG);
      if (r == 0) continue;
      done[i] = true;
      --left;
      on_exit(i, r == pids[i] ? status : -1, NowSeconds());
    }
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  return result;
}

Status SpawnIntoBatch(const SpawnSpec& spec, std::vector<pid_t>* pids) {
  Result<pid_t> pid = Spawn(spec);
  if (!pid.ok()) {
    KillAndReap(*pids, SIGTERM, 5000);
    return pid.status();
  }
  pids->push_back(*pid);
  return Status::Ok();
}

void KillAndReap(const std::vector<pid_t>& pids, int sig, int grace_ms) {
  for (pid_t pid : pids) ::kill(-pid, sig);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  for (pid_t pid : pids) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (!WaitForExit(pid, left > 0 ? left : 0)) ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env, int timeout_ms,
                                 const std::string& stdin_text, const std::atomic<bool>* stop) {
  if (argv.empty()) return InvalidArgument("empty command");
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return IoError("pipe: " + ErrnoText(errno));
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    return IoError("pipe: " + ErrnoText(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) return IoError("fork: " + ErrnoText(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    CloseFrom(3);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ExecOrDie(argv, env);
  }
  ::setpgid(pid, pid);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (!stdin_text.empty()) (void)!::write(in[1], stdin_text.data(), stdin_text.size());
  ::close(in[1]);
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  int pidfd = PidfdOpen(pid);
  CommandResult r;
  bool out_eof = false, err_eof = false, exited = false;
  std::string failure;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  // Until the child exits and both pipes are drained; a daemon it leaves behind may hold the
  // pipes open, so the child's exit ends the wait too.
  while (!(out_eof && err_eof) && !exited) {
    if (stop != nullptr && stop->load()) failure = "interrupted";
    if (std::chrono::steady_clock::now() >= deadline) failure = "timed out";
    if (!failure.empty()) break;
    pollfd p[3] = {
        {out_eof ? -1 : out[0], POLLIN, 0}, {err_eof ? -1 : err[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
    int n = ::poll(p, 3, pidfd >= 0 ? kStopCheckMs : 5);
    if (n < 0 && errno != EINTR) break;
    if (!out_eof) ReadAvailable(out[0], &r.out, &out_eof);
    if (!err_eof) ReadAvailable(err[0], &r.err, &err_eof);
    if (pidfd >= 0 ? (p[2].revents & POLLIN) != 0 : !ProcessAlive(pid)) {
      exited = true;
      if (!out_eof) ReadAvailable(out[0], &r.out, &out_eof);
      if (!err_eof) ReadAvailable(err[0], &r.err, &err_eof);
    }
  }
  if (!failure.empty()) ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out[0]);
  ::close(err[0]);
  if (pidfd >= 0) ::close(pidfd);
  if (!failure.empty()) return Unavailable(argv[0] + ": " + failure);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ShellLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !a.empty() &&
                 a.find_first_not_of(
                     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+%@") ==
                     std::string::npos;
    if (plain) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace pinpoint::bench
