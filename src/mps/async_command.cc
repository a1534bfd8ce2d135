#include "mps/async_command.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/file_util.h"
#include "pinpoint/escape.h"

extern char** environ;

namespace pinpoint::mps {

namespace {

constexpr size_t kMaxStdinBytes = 4096;  // fits a pipe's buffer: written before the fork

}  // namespace

AsyncCommand::~AsyncCommand() {
  if (pid_.valid()) {
    // Only at shutdown (MpsDaemons ends commands with Kill and keeps them until reaped).
    ::kill(-static_cast<pid_t>(pid_.pid()), SIGKILL);
    pid_.Signal(SIGKILL);
    ::waitpid(static_cast<pid_t>(pid_.pid()), nullptr, 0);
  }
}

Result<AsyncCommand> AsyncCommand::Start(const CommandSpec& spec, int64_t now_ms) {
  if (spec.argv.empty()) return InvalidArgument("no command");
  if (spec.stdin_text.size() > kMaxStdinBytes) return InvalidArgument("command input too long");
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return IoError("pipe: " + ErrnoText(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(in[0]);
    ::close(in[1]);
    return IoError("pipe: " + ErrnoText(err));
  }
  (void)!::write(in[1], spec.stdin_text.data(), spec.stdin_text.size());
  ::close(in[1]);
  auto cargv = CStrings(spec.argv);
  auto cenv = CStrings(spec.env);
  std::vector<gid_t> groups;
  if (spec.run_as) {
    groups.assign(spec.run_as->groups.begin(), spec.run_as->groups.end());
    if (groups.empty()) groups.push_back(spec.run_as->gid);
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    for (int fd : {in[0], out[0], out[1]}) ::close(fd);
    return IoError("fork: " + ErrnoText(err));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // pinpointd blocks signals for its signalfd
    ::setsid();                                  // killed with its session: what it starts goes too
    if (spec.run_as && (::setgroups(groups.size(), groups.data()) != 0 ||
                        ::setgid(spec.run_as->gid) != 0 || ::setuid(spec.run_as->uid) != 0))
      ::_exit(126);
    if (::dup2(in[0], 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(out[1], 2) < 0) ::_exit(125);
    CloseOnExecFrom(3);
    environ = cenv.data();
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  AsyncCommand c;
  c.out_ = UniqueFd(out[0]);
  ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
  auto held = PidFd::Open(pid);  // our child: its pid is not reused before we reap it
  if (!held) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);  // killed: returns at once
    return IoError("pidfd of " + spec.argv[0] + ": " + ErrnoText(errno));
  }
  c.pid_ = std::move(*held);
  c.started_ = true;
  c.deadline_ms_ = now_ms + spec.timeout_ms;
  c.max_output_bytes_ = spec.max_output_bytes;
  return c;
}

std::vector<int> AsyncCommand::fds() const {
  std::vector<int> out;
  if (pid_.valid()) out.push_back(pid_.fd());
  if (pid_.valid() && out_.valid()) out.push_back(out_.get());
  return out;
}

void AsyncCommand::Drain() {
  char buf[4096];
  while (out_.valid()) {
    ssize_t n = ::read(out_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) out_ = UniqueFd();  // every writer is gone
      return;
    }
    size_t room = max_output_bytes_ - std::min(max_output_bytes_, result_.out.size());
    result_.out.append(buf, std::min(room, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) > room) {
      result_.out_truncated = true;
      out_ = UniqueFd();  // no more is read: a writer gets SIGPIPE
    }
  }
}

void AsyncCommand::Reap(CommandResult::Ending ending) {
  int status = 0;
  pid_t pid = static_cast<pid_t>(pid_.pid());
  if (ending != CommandResult::Ending::kExited) {
    ::kill(-pid, SIGKILL);  // its session: what it started too
    pid_.Signal(SIGKILL);
  }
  // Exited, or killed just now: reaped without waiting on anything but the kernel.
  if (::waitpid(pid, &status, ending == CommandResult::Ending::kExited ? WNOHANG : 0) == pid &&
      ending == CommandResult::Ending::kExited) {
    if (WIFEXITED(status)) {
      result_.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      ending = CommandResult::Ending::kSignaled;
      result_.term_signal = WTERMSIG(status);
    }
  }
  result_.ending = ending;
  pid_ = PidFd();
  out_ = UniqueFd();
}

bool AsyncCommand::Check(int64_t now_ms) {
  if (!pid_.valid()) return started_;
  Drain();
  if (!pid_.Alive()) {
    Drain();  // what it wrote just before it ended
    Reap(CommandResult::Ending::kExited);
    return true;
  }
  if (now_ms >= deadline_ms_) {
    Reap(CommandResult::Ending::kTimedOut);
    return true;
  }
  return false;
}

void AsyncCommand::Kill() {
  if (pid_.valid()) Reap(CommandResult::Ending::kInterrupted);
}

Result<std::string> CommandOutput(const CommandResult& r, const std::string& binary, int timeout_ms,
                                  size_t max_output_bytes) {
  using Ending = CommandResult::Ending;
  if (r.ending == Ending::kTimedOut || r.ending == Ending::kInterrupted)
    return Unavailable(binary + " did not answer within " + std::to_string(timeout_ms) + " ms");
  // Before its exit status: a command cut off for printing too much may then die of SIGPIPE.
  if (r.out_truncated)
    return Unavailable(binary + " printed more than " + std::to_string(max_output_bytes) +
                       " bytes");
  if (!r.Succeeded()) {
    std::string why = r.ending == Ending::kExited && r.exit_code == 127 ? "not found" : "failed";
    return Unavailable(
        binary + " " + why +
        (r.out.empty() ? "" : ": " + EscapeForTerminal(std::string_view(r.out).substr(0, 300))));
  }
  return r.out;
}

}  // namespace pinpoint::mps
