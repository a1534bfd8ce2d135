#include "common/command_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/file_util.h"
#include "common/process.h"

extern char** environ;

namespace pinpoint {

namespace {

constexpr int kStopCheckMs = 200;

// A pipe whose ends are closed when it goes out of scope.
struct Pipe {
  int read = -1;
  int write = -1;
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  bool Open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  void CloseRead() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void CloseWrite() {
    if (write >= 0) ::close(write);
    write = -1;
  }
};

// Keeps SIGPIPE from the calling thread while it writes to a child that may have exited: a
// pending one is taken before the old mask comes back.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    timespec zero{0, 0};
    while (::sigtimedwait(&pipe, nullptr, &zero) > 0) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_;
};

// In the child after fork: async-signal-safe calls only.
[[noreturn]] void ExecChild(const CommandSpec& spec, char** argv, char** envp,
                            const std::vector<gid_t>& groups, int in, int out, int err) {
  ::setpgid(0, 0);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  if (::syscall(SYS_close_range, 3, ~0U, 0) != 0) {
    for (int fd = 3; fd < 4096; ++fd) ::close(fd);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // pinpointd blocks signals for its signalfd
  if (spec.run_as && (::setgroups(groups.size(), groups.data()) != 0 ||
                      ::setgid(spec.run_as->gid) != 0 || ::setuid(spec.run_as->uid) != 0)) {
    ::_exit(126);
  }
  environ = envp;  // so the PATH searched is the command's
  ::execvp(argv[0], argv);
  const char* why = ::strerrordesc_np(errno);
  const char* parts[] = {"cannot run ", argv[0], ": ", why != nullptr ? why : "exec failed", "\n"};
  for (const char* part : parts) (void)!::write(2, part, ::strlen(part));
  ::_exit(127);
}

// Reads what `fd` has now into *into, keeping at most `max` bytes. Sets *eof at its end.
void ReadAvailable(int fd, size_t max, std::string* into, bool* truncated, bool* eof) {
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      size_t keep = into->size() < max ? std::min(max - into->size(), static_cast<size_t>(n)) : 0;
      into->append(buf, keep);
      if (keep < static_cast<size_t>(n)) *truncated = true;
      continue;
    }
    if (n == 0) *eof = true;
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN: nothing more for now
  }
}

int MsLeft(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), kStopCheckMs));
}

}  // namespace

Result<CommandResult> SubprocessRunner::Run(const CommandSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("empty command");
  Pipe in, out, err;
  if (!in.Open() || !out.Open() || (!spec.merge_stderr && !err.Open()))
    return IoError("pipe: " + ErrnoText(errno));
  // Everything the child needs is made before the fork: it may only make async-signal-safe calls.
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  std::vector<gid_t> groups;
  if (spec.run_as) {
    groups.assign(spec.run_as->groups.begin(), spec.run_as->groups.end());
    if (groups.empty()) groups.push_back(spec.run_as->gid);
  }
  SigpipeBlocked no_sigpipe;
  pid_t pid = ::fork();
  if (pid < 0) return IoError("fork: " + ErrnoText(errno));
  if (pid == 0)
    ExecChild(spec, argv.data(), envp.data(), groups, in.read, out.write,
              spec.merge_stderr ? out.write : err.write);
  ::setpgid(pid, pid);  // from the parent too, so a kill of the group right away reaches it
  in.CloseRead();
  out.CloseWrite();
  err.CloseWrite();
  for (int fd : {in.write, out.read, err.read})
    if (fd >= 0) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (spec.stdin_text.empty()) in.CloseWrite();
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));

  CommandResult r;
  bool out_eof = false, err_eof = err.read < 0, exited = false;
  std::optional<CommandResult::Ending> killed;
  std::string poll_error;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec.timeout_ms);
  // Until the child exits and its output is drained; a process it leaves behind may hold the
  // pipes open, so the child's exit ends the wait too.
  while (!exited && !killed && poll_error.empty()) {
    if (spec.stop != nullptr && spec.stop->load()) killed = CommandResult::Ending::kInterrupted;
    if (std::chrono::steady_clock::now() >= deadline) killed = CommandResult::Ending::kTimedOut;
    if (killed) break;
    pollfd p[4] = {{out_eof ? -1 : out.read, POLLIN, 0},
                   {err_eof ? -1 : err.read, POLLIN, 0},
                   {pidfd, POLLIN, 0},
                   {in.write, POLLOUT, 0}};
    if (::poll(p, 4, pidfd >= 0 ? MsLeft(deadline) : std::min(MsLeft(deadline), 5)) < 0 &&
        errno != EINTR) {
      poll_error = "poll: " + ErrnoText(errno);
      break;
    }
    if (in.write >= 0 && (p[3].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      ssize_t w =
          ::write(in.write, spec.stdin_text.data() + written, spec.stdin_text.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == spec.stdin_text.size())
        in.CloseWrite();
    }
    // Read after the exit is seen: everything the child wrote is in the pipes by then.
    exited = pidfd >= 0 ? (p[2].revents & POLLIN) != 0 : !ProcessAlive(pid);
    if (!out_eof)
      ReadAvailable(out.read, spec.max_output_bytes, &r.out, &r.out_truncated, &out_eof);
    if (!err_eof)
      ReadAvailable(err.read, spec.max_output_bytes, &r.err, &r.err_truncated, &err_eof);
  }
  if (!exited) ::kill(-pid, SIGKILL);  // not reaped yet: its group cannot be another's
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pidfd >= 0) ::close(pidfd);
  if (!poll_error.empty()) return IoError(poll_error);
  if (killed) {
    r.ending = *killed;
  } else if (WIFEXITED(status)) {
    r.ending = CommandResult::Ending::kExited;
    r.exit_code = WEXITSTATUS(status);
  } else {
    r.ending = CommandResult::Ending::kSignaled;
    r.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return r;
}

}  // namespace pinpoint
