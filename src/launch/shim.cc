#include "launch/shim.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/file_util.h"
#include "common/process.h"
#include "launch/cpu_bind.h"
#include "launch/output_watch.h"

extern char** environ;

namespace pinpoint::launch {

namespace {

// What the child reports through the exec pipe when it cannot start the program.
struct ChildFailure {
  int stage;  // index into kStages
  int err;
};
constexpr const char* kStages[] = {"setgroups",
                                   "setgid",
                                   "setuid",
                                   "chdir",
                                   "exec",
                                   "stdio",
                                   "recording the job's pid",
                                   "opening the output file",
                                   "opening the error file"};
[[noreturn]] void ChildFail(int pipe_fd, int stage, int err) {
  ChildFailure f{stage, err};
  ssize_t ignored = ::write(pipe_fd, &f, sizeof(f));
  (void)ignored;
  ::_exit(127);
}

constexpr int kStageOutput = 7;  // kStageOutput + 1: the error file
// Not an errno: the output file is neither a regular file nor a character device.
constexpr int kNotAFile = -1;

// Runs in the forked child, as the job's user: opens one output file (launcher.h LaunchSpec
// says how) and puts it on `target_fd`. Only async-signal-safe calls.
void RedirectTo(const char* path, int target_fd, int pipe_fd, int stage) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0666);
  // ENXIO: a FIFO without a reader (O_NONBLOCK: never waited on).
  if (fd < 0) ChildFail(pipe_fd, stage, errno == ENXIO ? kNotAFile : errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) ChildFail(pipe_fd, stage, errno);
  if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) ChildFail(pipe_fd, stage, kNotAFile);
  if (S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) ChildFail(pipe_fd, stage, errno);
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) ChildFail(pipe_fd, stage, errno);
  if (::dup2(fd, target_fd) < 0) ChildFail(pipe_fd, stage, errno);
  ::close(fd);
}

// Runs in the forked child: only async-signal-safe calls between fork and exec.
[[noreturn]] void ExecJob(const LaunchSpec& spec, char** argv, char** envp, const gid_t* groups,
                          size_t ngroups, int out_fd, int err_fd, int pipe_fd, int go_fd) {
  // Its own process group, apart from the shim's, so signals to the job never reach the shim.
  ::setpgid(0, 0);
  // Runs nothing of the job's until the shim has recorded its pid: a signal sent by pid then
  // can never miss it.
  char go = 0;
  ssize_t got;
  while ((got = ::read(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  ::close(go_fd);
  if (got != 1 || go != 'g') ChildFail(pipe_fd, 6, EIO);  // pid not recorded: must not run
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::umask(static_cast<mode_t>(spec.umask & 0777));  // before -o/-e are created: they follow it

  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0)
    ChildFail(pipe_fd, 5, errno);
  if (spec.switch_user) {
    if (::setgroups(ngroups, groups) != 0) ChildFail(pipe_fd, 0, errno);
    if (::setgid(spec.gid) != 0) ChildFail(pipe_fd, 1, errno);
    if (::setuid(spec.uid) != 0) ChildFail(pipe_fd, 2, errno);
  }
  if (::chdir(spec.cwd.c_str()) != 0) ChildFail(pipe_fd, 3, errno);
  // After the switch to the job's user: the files are opened with its rights, never root's.
  if (!spec.stdout_path.empty()) RedirectTo(spec.stdout_path.c_str(), 1, pipe_fd, kStageOutput);
  if (!spec.stderr_path.empty()) {
    if (spec.stderr_path == spec.stdout_path) {
      if (::dup2(1, 2) < 0) ChildFail(pipe_fd, kStageOutput + 1, errno);
    } else {
      RedirectTo(spec.stderr_path.c_str(), 2, pipe_fd, kStageOutput + 1);
    }
  }
  // The job gets stdin, stdout and stderr, nothing else: not the shim's lock or pipes, nor what
  // pinpointd or the shim held without close-on-exec.
  CloseOnExecFrom(3);
  environ = envp;
  ::execvp(argv[0], argv);
  ChildFail(pipe_fd, 4, errno);
}

// Joins the job's cgroup; the job inherits it. Failure is reported in the job's stderr, not
// fatal: limits are best effort where the node has no usable cgroup v2.
void JoinCgroup(const std::string& cgroup_dir, int err_fd) {
  if (cgroup_dir.empty()) return;
  Status joined = Status::Ok();
  auto dir = OpenDirNoFollow(cgroup_dir);
  auto procs =
      dir.ok() ? OpenFileAt(dir->get(), "cgroup.procs", O_WRONLY) : Result<UniqueFd>(dir.status());
  std::string pid = std::to_string(::getpid());
  if (!procs.ok()) {
    joined = procs.status();
  } else if (::write(procs->get(), pid.data(), pid.size()) < 0) {
    joined = IoError("write cgroup.procs: " + ErrnoText(errno));
  }
  if (!joined.ok()) {
    std::string msg =
        "pinpoint: warning: could not join cgroup " + cgroup_dir + ": " + joined.message() + "\n";
    ssize_t ignored = ::write(err_fd, msg.data(), msg.size());
    (void)ignored;
  }
}

ExitStatus Failure(const std::string& error) {
  ExitStatus s;
  s.kind = ExitStatus::Kind::kLaunchFailed;
  s.error = error;
  return s;
}

// Writes `line` on the shim's stderr: pinpointd's, so its log (the journal under systemd).
void SayOnStderr(const std::string& line) {
  ssize_t ignored = ::write(2, line.data(), line.size());
  (void)ignored;
}

// True once the job directory has been removed: its descriptor then has no link left.
bool DirRemoved(int dir_fd) {
  struct stat st {};
  return ::fstat(dir_fd, &st) == 0 && st.st_nlink == 0;
}

// Sends `signal` to the job's process group (its leader is this process's unreaped child, so the
// group id cannot have been reused) and to every other process of the shim's session, which the
// job may have put in groups of its own; each is pinned with a pidfd before it is checked.
void SignalJob(pid_t child, int signal) {
  ::kill(-child, signal);
  int64_t self = ::getpid();
  for (int64_t pid : ListPids()) {
    if (pid == self) continue;
    SignalIfBelongs(pid, signal, [self](int64_t p) {
      auto st = ReadProcStat(p);
      return st && st->session == self && st->state != 'Z';
    });
  }
}

// Ends the job: SIGTERM, and SIGKILL once its leader has exited or orphan_grace_ms have passed.
void EndJob(PidFd& leader, const LaunchSpec& spec, pid_t child) {
  SignalJob(child, SIGTERM);
  leader.WaitExit(spec.orphan_grace_ms);
  SignalJob(child, SIGKILL);
}

// Returns once the job's leader `child` has exited (not reaped). Meanwhile, every
// spec.orphan_check_ms, looks whether anyone can still collect the job: its directory must exist,
// and a pinpointd must have held the state directory's lock within spec.daemon_away_ms; and every
// spec.output_check_ms whether its output is within spec.max_output_bytes (WatchOutput). When
// not, ends the job (EndJob), says so on stderr and returns why (`cut`: for its output, which
// was cut); "" when the job ended by itself.
OutputVerdict WaitOrEndOrphan(int dir_fd, const LaunchSpec& spec, pid_t child, int out_fd,
                              int err_fd) {
  auto leader = PidFd::Open(child);
  if (!leader) return {};  // no pidfd (a kernel before 5.3): waitpid alone, as before
  bool watch_daemon = !spec.daemon_lock.empty() && spec.daemon_away_ms > 0;
  bool watch_output = spec.max_output_bytes > 0;
  int tick_ms =
      watch_output ? std::min(spec.orphan_check_ms, spec.output_check_ms) : spec.orphan_check_ms;
  auto last_seen = std::chrono::steady_clock::now();
  auto next_orphan_check = last_seen + std::chrono::milliseconds(spec.orphan_check_ms);
  while (!leader->WaitExit(tick_ms)) {
    OutputVerdict output = watch_output ? WatchOutput(spec, out_fd, err_fd) : OutputVerdict{};
    if (!output.why.empty()) {
      SayOnStderr("pinpoint-shim: job " + std::to_string(spec.job_id) + ": " + output.why +
                  " (process group " + std::to_string(child) + ")\n");
      EndJob(*leader, spec, child);
      if (output.cut) CutOutput(spec, out_fd, err_fd);
      return output;
    }
    auto now = std::chrono::steady_clock::now();
    if (now < next_orphan_check) continue;
    next_orphan_check = now + std::chrono::milliseconds(spec.orphan_check_ms);
    std::string why;
    if (DirRemoved(dir_fd)) {
      why = "its directory " + spec.job_dir + " was removed while it ran, so nobody can collect it";
    } else if (watch_daemon) {
      if (ProbeDaemonLock(spec.daemon_lock) != DaemonLock::kFree) last_seen = now;
      auto away_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_seen).count();
      if (away_ms >= spec.daemon_away_ms)
        why = "no pinpointd ran for " + std::to_string(away_ms / 1000) +
              " s (daemon_away_limit_s is " + std::to_string(spec.daemon_away_ms / 1000) +
              " s), so nothing enforced its limits; its supervisor ended it";
    }
    if (why.empty()) continue;
    SayOnStderr("pinpoint-shim: job " + std::to_string(spec.job_id) + ": " + why +
                " (process group " + std::to_string(child) + ")\n");
    EndJob(*leader, spec, child);
    return {why, false};
  }
  return {};
}

ExitStatus Supervise(int dir_fd, const LaunchSpec& spec) {
  // Fresh files only (O_EXCL, no link followed): the launcher made the directory empty, so
  // anything already there was not made for this run and is never written through or chowned.
  // Created 0600, then given to the job's user with the mode its umask makes (as the job's own
  // files): users who share a group see each other's output only when they chose to.
  auto out = OpenFileAt(dir_fd, kStdoutFile, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!out.ok()) return Failure("cannot create the job's stdout: " + out.status().message());
  auto err = OpenFileAt(dir_fd, kStderrFile, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!err.ok()) return Failure("cannot create the job's stderr: " + err.status().message());
  int out_fd = out->get(), err_fd = err->get();
  mode_t mode = static_cast<mode_t>(0666 & ~spec.umask);
  for (int fd : {out_fd, err_fd}) {
    // Not fatal: `pinpoint logs` still works through the daemon, which reads them as root.
    if (spec.switch_user) (void)!::fchown(fd, spec.uid, spec.gid);
    (void)!::fchmod(fd, mode);
  }
  JoinCgroup(spec.cgroup_dir, err_fd);
  if (Status bound = BindToCpus(spec.cpus); !bound.ok()) {
    std::string msg = "pinpoint: warning: " + bound.message() + "\n";
    (void)!::write(err_fd, msg.data(), msg.size());
  }

  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  std::vector<gid_t> groups(spec.groups.begin(), spec.groups.end());
  int pipe_fds[2], go_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0 || ::pipe2(go_fds, O_CLOEXEC) != 0)
    return Failure("pipe: " + ErrnoText(errno));

  pid_t child = ::fork();
  if (child < 0) return Failure("fork: " + ErrnoText(errno));
  if (child == 0) {
    ::close(go_fds[1]);
    ExecJob(spec, argv.data(), envp.data(), groups.data(), groups.size(), out_fd, err_fd,
            pipe_fds[1], go_fds[0]);
  }
  ::close(pipe_fds[1]);
  ::close(go_fds[0]);
  ::setpgid(child, child);  // also here: no window in which a signal could miss the group
  // Durable: after any crash, a job without job.pid provably never ran and may be queued again.
  Status recorded = WriteFileAtomicAt(dir_fd, kJobPidFile, std::to_string(child) + "\n", 0600);
  if (recorded.ok()) {
    ssize_t go_sent = ::write(go_fds[1], "g", 1);
    (void)go_sent;
  }
  ::close(go_fds[1]);  // without "g" the child reports the failure and never runs the job
  if (!recorded.ok()) {
    std::string line = "pinpoint: error: " + recorded.message() + "\n";
    ssize_t ignored = ::write(err_fd, line.data(), line.size());
    (void)ignored;
  }
  ChildFailure failure{};
  ssize_t n;
  do {
    n = ::read(pipe_fds[0], &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  ::close(pipe_fds[0]);

  OutputVerdict ended = WaitOrEndOrphan(dir_fd, spec, child, out_fd, err_fd);
  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  TrimOutput(out_fd, err_fd);  // blocks it preallocated past its output's end stay no longer
  if (n == static_cast<ssize_t>(sizeof(failure))) {
    std::string what = std::string(kStages[failure.stage]) + " failed: " + ErrnoText(failure.err);
    if (failure.stage == kStageOutput || failure.stage == kStageOutput + 1) {
      const std::string& path = failure.stage == kStageOutput ? spec.stdout_path : spec.stderr_path;
      what = std::string("cannot write the job's ") +
             (failure.stage == kStageOutput ? "output" : "errors") + " to " + path + ": " +
             (failure.err == kNotAFile ? std::string("not a regular file")
              : failure.err == ELOOP   ? std::string("it is a symbolic link")
                                       : ErrnoText(failure.err));
    }
    if (failure.stage == 4) what = "cannot run '" + spec.argv[0] + "': " + ErrnoText(failure.err);
    if (failure.stage == 3) what = "cannot enter " + spec.cwd + ": " + ErrnoText(failure.err);
    std::string line = "pinpoint: " + what + "\n";
    ssize_t ignored = ::write(err_fd, line.data(), line.size());
    (void)ignored;
    return Failure(what);
  }
  ExitStatus status;
  status.error = ended.why;
  status.output_exceeded = ended.cut;
  if (WIFSIGNALED(wstatus)) {
    status.kind = ExitStatus::Kind::kSignaled;
    status.term_signal = WTERMSIG(wstatus);
  } else {
    status.kind = ExitStatus::Kind::kExited;
    status.exit_code = WEXITSTATUS(wstatus);
  }
  return status;
}

}  // namespace

int RetryUntilOk(const std::function<Status()>& attempt,
                 const std::function<void(int64_t)>& sleep_ms, int64_t first_ms, int64_t max_ms) {
  int failures = 0;
  int64_t wait_ms = first_ms;
  while (!attempt().ok()) {
    ++failures;
    sleep_ms(wait_ms);
    wait_ms = std::min(wait_ms * 2, max_ms);
  }
  return failures;
}

void RecordExitStatus(int dir_fd, const ExitStatus& status, int log_fd,
                      const std::function<void(int64_t)>& sleep_ms) {
  RetryUntilOk(
      [&]() -> Status {
        if (DirRemoved(dir_fd)) return Status::Ok();  // nowhere to record, ever: RunShim says so
        Status json_written = WriteExitStatus(dir_fd, status);
        if (json_written.ok()) return json_written;
        Status slot_written = WriteExitSlot(dir_fd, status);
        if (slot_written.ok()) return slot_written;
        std::string line = "pinpoint-shim: cannot record the job's exit status yet (" +
                           json_written.message() + "; " + slot_written.message() + "); retrying\n";
        ssize_t ignored = ::write(log_fd, line.data(), line.size());
        (void)ignored;
        return json_written;
      },
      sleep_ms);
}

int RunShim(const std::string& job_dir, int lock_fd) {
  ::setsid();  // pinpointd starts it in a session of its own already (Spawn's new_session)
  // The CPUs pinpointd was pinned to (a site's housekeeping CPU) are not the job's: the shim and
  // the job may use every CPU of the node, and the job's own cpus narrow that below.
  ResetCpus();
  // Signals sent to the job's process group must not take the supervisor down with it.
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &ign, nullptr);
  // Blocked too, and so in the job's child from its fork: a signal sent to the job once its pid
  // is recorded, before the child has set them back to their defaults (ExecJob), stays pending
  // there and is delivered then. Ignored and not blocked, it was lost: a cancel right after the
  // start got SIGKILL after the grace instead of SIGTERM (pinpointd's blocked mask did this while
  // the shim was forked from it; Spawn starts it with every signal unblocked).
  sigset_t held;
  sigemptyset(&held);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&held, sig);
  ::sigprocmask(SIG_BLOCK, &held, nullptr);
  ::fcntl(lock_fd, F_SETFD, FD_CLOEXEC);

  auto dir = OpenJobDir(job_dir);
  if (!dir.ok()) {
    // Nowhere trusted to record a status: the daemon sees the job as never started.
    SayOnStderr("pinpoint-shim: " + dir.status().message() + "\n");
    return 1;
  }
  ExitStatus status;
  auto spec = ReadSpec(dir->get());
  if (!spec.ok()) {
    status = Failure(spec.status().message());
  } else {
    status = Supervise(dir->get(), *spec);
  }
  RecordExitStatus(dir->get(), status, 2,
                   [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); });
  if (DirRemoved(dir->get()))
    SayOnStderr("pinpoint-shim: " + job_dir + " was removed: how its job ended is not recorded\n");
  return 0;
}

}  // namespace pinpoint::launch
