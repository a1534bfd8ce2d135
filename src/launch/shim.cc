#include "launch/shim.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/process.h"

extern char** environ;

namespace pinpoint::launch {

using nlohmann::json;

namespace {

std::string Path(const std::string& dir, const char* file) { return dir + "/" + file; }

const char* KindName(ExitStatus::Kind kind) {
  switch (kind) {
    case ExitStatus::Kind::kExited: return "exited";
    case ExitStatus::Kind::kSignaled: return "signaled";
    case ExitStatus::Kind::kLaunchFailed: return "launch-failed";
    case ExitStatus::Kind::kNoStatus: return "no-status";
    case ExitStatus::Kind::kNeverLaunched: return "never-launched";
  }
  return "no-status";
}

// What the child reports through the exec pipe when it cannot start the program.
struct ChildFailure {
  int stage;  // index into kStages
  int err;
};
constexpr const char* kStages[] = {"setgroups", "setgid", "setuid", "chdir", "exec", "stdio",
                                   "recording the job's pid"};

[[noreturn]] void ChildFail(int pipe_fd, int stage, int err) {
  ChildFailure f{stage, err};
  ssize_t ignored = ::write(pipe_fd, &f, sizeof(f));
  (void)ignored;
  ::_exit(127);
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

  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0)
    ChildFail(pipe_fd, 5, errno);
  if (spec.switch_user) {
    if (::setgroups(ngroups, groups) != 0) ChildFail(pipe_fd, 0, errno);
    if (::setgid(spec.gid) != 0) ChildFail(pipe_fd, 1, errno);
    if (::setuid(spec.uid) != 0) ChildFail(pipe_fd, 2, errno);
  }
  if (::chdir(spec.cwd.c_str()) != 0) ChildFail(pipe_fd, 3, errno);
  environ = envp;
  ::execvp(argv[0], argv);
  ChildFail(pipe_fd, 4, errno);
}

// Joins the job's cgroup; the job inherits it. Failure is reported in the job's stderr, not
// fatal: limits are best effort where the node has no usable cgroup v2.
void JoinCgroup(const std::string& cgroup_dir, int err_fd) {
  if (cgroup_dir.empty()) return;
  std::string procs = cgroup_dir + "/cgroup.procs";
  int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  std::string pid = std::to_string(::getpid());
  if (fd < 0 || ::write(fd, pid.data(), pid.size()) < 0) {
    std::string msg = "pinpoint: warning: could not join cgroup " + cgroup_dir + ": " +
                      ErrnoText(errno) + "\n";
    ssize_t ignored = ::write(err_fd, msg.data(), msg.size());
    (void)ignored;
  }
  if (fd >= 0) ::close(fd);
}

ExitStatus Failure(const std::string& error) {
  ExitStatus s;
  s.kind = ExitStatus::Kind::kLaunchFailed;
  s.error = error;
  return s;
}

ExitStatus Supervise(const LaunchSpec& spec) {
  int out_fd = ::open(Path(spec.job_dir, kStdoutFile).c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  int err_fd = ::open(Path(spec.job_dir, kStderrFile).c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (out_fd < 0 || err_fd < 0) return Failure("cannot open log files: " + ErrnoText(errno));
  if (spec.switch_user) {
    // The owner may read the logs directly too; pinpointd reads them as root.
    if (::fchown(out_fd, spec.uid, spec.gid) != 0 || ::fchown(err_fd, spec.uid, spec.gid) != 0) {
      // Not fatal: `pinpoint logs` still works through the daemon.
    }
  }
  JoinCgroup(spec.cgroup_dir, err_fd);

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
  Status recorded = WriteFileAtomic(Path(spec.job_dir, kJobPidFile), std::to_string(child) + "\n", 0644);
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

  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof(failure))) {
    std::string what = std::string(kStages[failure.stage]) + " failed: " + ErrnoText(failure.err);
    if (failure.stage == 4) what = "cannot run '" + spec.argv[0] + "': " + ErrnoText(failure.err);
    if (failure.stage == 3) what = "cannot enter " + spec.cwd + ": " + ErrnoText(failure.err);
    std::string line = "pinpoint: " + what + "\n";
    ssize_t ignored = ::write(err_fd, line.data(), line.size());
    (void)ignored;
    return Failure(what);
  }
  ExitStatus status;
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

int64_t ReadJobPid(const std::string& job_dir) {
  auto text = ReadFile(Path(job_dir, kJobPidFile));
  if (!text.ok()) return 0;
  try {
    return std::stoll(*text);
  } catch (const std::exception&) {
    return 0;
  }
}

Status WriteSpec(const LaunchSpec& spec) {
  json j{{"job_id", spec.job_id},       {"argv", spec.argv},
         {"cwd", spec.cwd},             {"env", spec.env},
         {"switch_user", spec.switch_user}, {"uid", spec.uid},
         {"gid", spec.gid},             {"groups", spec.groups},
         {"job_dir", spec.job_dir},     {"cgroup_dir", spec.cgroup_dir}};
  // Not fsynced: the job's record is durable in the store, and a power loss ends the shim too.
  return WriteFileAtomic(Path(spec.job_dir, kSpecFile), j.dump(), 0600, /*durable=*/false);
}

Result<LaunchSpec> ReadSpec(const std::string& job_dir) {
  auto text = ReadFile(Path(job_dir, kSpecFile));
  if (!text.ok()) return text.status();
  try {
    json j = json::parse(*text);
    LaunchSpec spec;
    spec.job_id = j.at("job_id").get<JobId>();
    spec.argv = j.at("argv").get<std::vector<std::string>>();
    spec.cwd = j.at("cwd").get<std::string>();
    spec.env = j.at("env").get<std::vector<std::string>>();
    spec.switch_user = j.at("switch_user").get<bool>();
    spec.uid = j.at("uid").get<uint32_t>();
    spec.gid = j.at("gid").get<uint32_t>();
    spec.groups = j.at("groups").get<std::vector<uint32_t>>();
    spec.job_dir = j.at("job_dir").get<std::string>();
    spec.cgroup_dir = j.at("cgroup_dir").get<std::string>();
    if (spec.argv.empty()) return IoError("spec has no argv");
    return spec;
  } catch (const json::exception& e) {
    return IoError("bad spec in " + job_dir + ": " + e.what());
  }
}

Status WriteExitStatus(const std::string& job_dir, const ExitStatus& status) {
  json j{{"kind", KindName(status.kind)},
         {"exit_code", status.exit_code},
         {"term_signal", status.term_signal},
         {"error", status.error}};
  return WriteFileAtomic(Path(job_dir, kExitFile), j.dump(), 0644);
}

Result<ExitStatus> ReadExitStatus(const std::string& job_dir) {
  auto text = ReadFile(Path(job_dir, kExitFile));
  if (!text.ok()) return text.status();
  try {
    json j = json::parse(*text);
    ExitStatus s;
    std::string kind = j.at("kind").get<std::string>();
    s.kind = ExitStatus::Kind::kNoStatus;
    for (auto k : {ExitStatus::Kind::kExited, ExitStatus::Kind::kSignaled,
                   ExitStatus::Kind::kLaunchFailed, ExitStatus::Kind::kNoStatus}) {
      if (kind == KindName(k)) s.kind = k;
    }
    s.exit_code = j.at("exit_code").get<int>();
    s.term_signal = j.at("term_signal").get<int>();
    s.error = j.at("error").get<std::string>();
    return s;
  } catch (const json::exception& e) {
    return IoError("bad exit status in " + job_dir + ": " + e.what());
  }
}

int RunShim(const std::string& job_dir, int lock_fd) {
  ::setsid();
  // Signals sent to the job's process group must not take the supervisor down with it.
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &ign, nullptr);
  ::fcntl(lock_fd, F_SETFD, FD_CLOEXEC);

  ExitStatus status;
  auto spec = ReadSpec(job_dir);
  if (!spec.ok()) {
    status = Failure(spec.status().message());
  } else {
    status = Supervise(*spec);
  }
  Status written = WriteExitStatus(job_dir, status);
  return written.ok() ? 0 : 1;
}

}  // namespace pinpoint::launch
