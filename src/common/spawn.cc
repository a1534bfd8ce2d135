#include "common/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/file_util.h"
#include "common/process.h"

extern char** environ;

namespace pinpoint {

namespace {

// Kill-and-reap grace: a SIGKILLed process is gone at once unless the kernel holds it (D state).
constexpr int kReapAfterKillMs = 10'000;

std::vector<std::string> ThisEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

// argv0 itself when it names a path; else the first executable regular file of that name on
// `path_list`; nullopt when there is none.
std::optional<std::string> Resolve(const std::string& argv0, const std::string& path_list) {
  if (argv0.find('/') != std::string::npos) return argv0;
  size_t from = 0;
  while (from <= path_list.size()) {
    size_t colon = path_list.find(':', from);
    if (colon == std::string::npos) colon = path_list.size();
    std::string dir = path_list.substr(from, colon - from);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + argv0;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    from = colon + 1;
  }
  return std::nullopt;
}

std::string PathOf(const std::vector<std::string>& env) {
  for (const std::string& kv : env)
    if (kv.rfind("PATH=", 0) == 0) return kv.substr(5);
  return "/usr/bin:/bin";
}

// posix_spawn's attribute and file-action objects, destroyed on every path out, with the
// caller's descriptors duplicated (close-on-exec) above every descriptor the child is given: a
// dup2 onto itself would keep the close-on-exec flag, and a later action could close a source.
class Plan {
 public:
  Plan() {
    ::posix_spawn_file_actions_init(&actions_);
    ::posix_spawnattr_init(&attr_);
  }
  ~Plan() {
    for (int fd : copies_) ::close(fd);
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attr_);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void set_first_free(int fd) { first_free_ = fd; }
  // The child's `target` is the caller's `fd`. False when it cannot be duplicated.
  bool Dup(int fd, int target) {
    int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, first_free_);
    if (copy < 0) return false;
    copies_.push_back(copy);
    return ::posix_spawn_file_actions_adddup2(&actions_, copy, target) == 0;
  }
  // The child's `target` is its own `fd`, as the actions before left it.
  bool Alias(int fd, int target) {
    return ::posix_spawn_file_actions_adddup2(&actions_, fd, target) == 0;
  }
  bool Open(int target, const std::string& path, int flags) {
    return ::posix_spawn_file_actions_addopen(&actions_, target, path.c_str(), flags, 0644) == 0;
  }
  bool Stream(const SpawnStream& s, int target, int write_flags) {
    if (s.fd >= 0) return Dup(s.fd, target);
    if (!s.path.empty()) return Open(target, s.path, write_flags);
    return Open(target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
  }
  bool CloseFrom(int fd) { return ::posix_spawn_file_actions_addclosefrom_np(&actions_, fd) == 0; }

  posix_spawn_file_actions_t* actions() { return &actions_; }
  posix_spawnattr_t* attr() { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
  std::vector<int> copies_;
  int first_free_ = 3;
};

}  // namespace

std::vector<std::string> EnvironmentWith(const std::string& name, const std::string& value) {
  std::vector<std::string> env;
  for (std::string& kv : ThisEnvironment())
    if (kv.compare(0, name.size() + 1, name + "=") != 0) env.push_back(std::move(kv));
  env.push_back(name + "=" + value);
  return env;
}

Result<pid_t> Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("empty command");
  int last_child_fd = 2;
  for (const auto& [from, to] : spec.pass_fds) {
    if (to < 3 || from < 0) return InvalidArgument("spawn: a passed descriptor must be 3 or above");
    last_child_fd = std::max(last_child_fd, to);
  }
  std::vector<std::string> env = spec.env ? *spec.env : ThisEnvironment();
  std::optional<std::string> program = Resolve(spec.argv[0], PathOf(env));
  if (!program) return NotFound("cannot run " + spec.argv[0] + ": not found on the PATH");

  Plan plan;
  plan.set_first_free(last_child_fd + 1);
  int write_flags =
      O_WRONLY | O_CREAT | (spec.append_output ? O_APPEND : O_TRUNC);  // opened as the child's own
  bool ok = plan.Stream(spec.in, 0, O_RDONLY) && plan.Stream(spec.out, 1, write_flags);
  ok = ok && (spec.err_to_out ? plan.Alias(1, 2) : plan.Stream(spec.err, 2, write_flags));
  for (const auto& [from, to] : spec.pass_fds) ok = ok && plan.Dup(from, to);
  ok = ok && plan.CloseFrom(last_child_fd + 1);
  if (!ok) return IoError("cannot run " + spec.argv[0] + ": " + ErrnoText(errno));

  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.new_process_group) flags |= POSIX_SPAWN_SETPGROUP;
  if (spec.new_session) flags |= POSIX_SPAWN_SETSID;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  ::posix_spawnattr_setflags(plan.attr(), flags);
  ::posix_spawnattr_setsigmask(plan.attr(), &none);
  ::posix_spawnattr_setsigdefault(plan.attr(), &all);
  ::posix_spawnattr_setpgroup(plan.attr(), 0);

  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(env);
  pid_t pid = -1;
  int rc =
      ::posix_spawn(&pid, program->c_str(), plan.actions(), plan.attr(), argv.data(), envp.data());
  if (rc != 0) return IoError("cannot run " + spec.argv[0] + ": " + ErrnoText(rc));
  return pid;
}

std::optional<int> WaitChild(pid_t pid, int timeout_ms) {
  bool exited = WaitForExit(pid, timeout_ms);
  if (!exited) {
    ::kill(pid, SIGKILL);
    if (!WaitForExit(pid, kReapAfterKillMs)) return std::nullopt;
  }
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r != pid || !exited) return std::nullopt;
  return status;
}

}  // namespace pinpoint
