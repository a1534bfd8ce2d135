#include "bench/driver/proc.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <thread>

#include "common/file_util.h"
#include "common/process.h"
#include "common/spawn.h"

extern char** environ;

namespace pinpoint::bench {

namespace {

constexpr int kStopCheckMs = 200;

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

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
  constexpr int kReadyFd = 3;  // where pinpointd's --ready-fd points
  auto output = [](const std::string& path) {
    return path.empty() ? SpawnStream{} : SpawnStream::File(path);
  };
  pinpoint::SpawnSpec s{
      .argv = spec.argv,
      .env = spec.env,
      .out = output(spec.stdout_path),
      .err = output(spec.stderr_path),
      .err_to_out = !spec.stdout_path.empty() && spec.stderr_path == spec.stdout_path,
      .append_output = true,
      .new_process_group = true};
  if (spec.ready_fd >= 0) s.pass_fds = {{spec.ready_fd, kReadyFd}};
  return pinpoint::Spawn(s);
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
  Result<CommandResult> r = SubprocessRunner().Run({.argv = argv,
                                                    .env = env,
                                                    .stdin_text = stdin_text,
                                                    .timeout_ms = timeout_ms,
                                                    .max_output_bytes = kMaxCommandOutputBytes,
                                                    .stop = stop});
  if (!r.ok()) return r.status();
  if (r->ending == CommandResult::Ending::kTimedOut) return Unavailable(argv[0] + ": timed out");
  if (r->ending == CommandResult::Ending::kInterrupted)
    return Unavailable(argv[0] + ": interrupted");
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
