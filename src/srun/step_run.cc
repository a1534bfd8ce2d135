#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/spawn.h"
#include "srun/step.h"

namespace pinpoint::srun {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// One stream of a labelled task: its pipe, and the part of a line not yet written.
struct Labelled {
  int fd = -1;
  int out_fd = 1;
  std::string prefix;
  std::string partial;
};

void WriteAll(int fd, const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

// Reads what `s` has; writes its whole lines with their label. False at its end.
bool Pump(Labelled& s) {
  char buf[4096];
  ssize_t n = ::read(s.fd, buf, sizeof(buf));
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    if (!s.partial.empty()) WriteAll(s.out_fd, s.prefix + s.partial + "\n");
    ::close(s.fd);
    s.fd = -1;
    return false;
  }
  s.partial.append(buf, static_cast<size_t>(n));
  std::string lines;
  size_t start = 0, nl;
  while ((nl = s.partial.find('\n', start)) != std::string::npos) {
    lines += s.prefix + s.partial.substr(start, nl + 1 - start);
    start = nl + 1;
  }
  s.partial.erase(0, start);
  if (!lines.empty()) WriteAll(s.out_fd, lines);
  return true;
}

// Whether the sender of a signal is a process of this job (srun's process group) other than
// srun: the job's own signals (to the whole group) came from pinpointd, outside it.
bool FromInsideTheJob(const signalfd_siginfo& info) {
  pid_t sender = static_cast<pid_t>(info.ssi_pid);
  if (sender <= 0 || sender == ::getpid()) return false;
  pid_t group = ::getpgid(sender);
  return group > 0 && group == ::getpgrp();
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int RunStep(const StepArgs& args, const std::vector<std::vector<std::string>>& task_envs,
            std::ostream& err) {
  if (!args.chdir.empty() && ::chdir(args.chdir.c_str()) != 0) {
    err << "srun: -D " << args.chdir << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : kForwarded) sigaddset(&mask, s);
  sigaddset(&mask, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);  // Spawn unblocks them in each task
  int sfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    err << "srun: signalfd: " << std::strerror(errno) << "\n";
    return 1;
  }
  std::vector<pid_t> tasks;
  std::vector<Labelled> streams;
  int worst = 0;
  for (size_t i = 0; i < task_envs.size(); ++i) {
    SpawnSpec spec{.argv = args.command, .env = task_envs[i]};
    spec.in = SpawnStream::Fd(0);
    spec.out = SpawnStream::Fd(1);
    spec.err = SpawnStream::Fd(2);
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (args.label && ::pipe2(out_pipe, O_CLOEXEC) == 0 && ::pipe2(err_pipe, O_CLOEXEC) == 0) {
      spec.out = SpawnStream::Fd(out_pipe[1]);
      spec.err = SpawnStream::Fd(err_pipe[1]);
    }
    auto pid = Spawn(spec);
    for (int fd : {out_pipe[1], err_pipe[1]})
      if (fd >= 0) ::close(fd);
    if (!pid.ok()) {
      err << "srun: task " << i << ": " << pid.status().message() << "\n";
      for (int fd : {out_pipe[0], err_pipe[0]})
        if (fd >= 0) ::close(fd);
      for (pid_t t : tasks) ::kill(t, SIGKILL);
      worst = 1;
      break;
    }
    tasks.push_back(*pid);
    std::string prefix = std::to_string(i) + ": ";
    if (out_pipe[0] >= 0) streams.push_back({out_pipe[0], 1, prefix, ""});
    if (err_pipe[0] >= 0) streams.push_back({err_pipe[0], 2, prefix, ""});
  }
  size_t running = tasks.size();
  while (running > 0 ||
         std::any_of(streams.begin(), streams.end(), [](const Labelled& s) { return s.fd >= 0; })) {
    std::vector<pollfd> fds{{sfd, POLLIN, 0}};
    for (const Labelled& s : streams)
      if (s.fd >= 0) fds.push_back({s.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    for (size_t k = 1, j = 0; k < fds.size(); ++j) {
      if (streams[j].fd < 0) continue;
      if (fds[k++].revents != 0) Pump(streams[j]);
    }
    signalfd_siginfo info{};
    while (::read(sfd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
      if (info.ssi_signo == SIGCHLD) continue;
      if (!FromInsideTheJob(info)) continue;
      for (pid_t t : tasks)
        if (t > 0) ::kill(t, static_cast<int>(info.ssi_signo));
    }
    for (pid_t& t : tasks) {
      int status = 0;
      if (t <= 0 || ::waitpid(t, &status, WNOHANG) != t) continue;
      worst = std::max(worst, ExitCodeOf(status));
      t = -1;
      --running;
    }
  }
  ::close(sfd);
  return worst;
}

}  // namespace pinpoint::srun
