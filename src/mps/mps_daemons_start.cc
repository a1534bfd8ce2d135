// MpsDaemons' starts (mps_daemons.h): the user's directories made anew, the control daemon
// forked as its user, and the start looked at without waiting until its control socket appears.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/file_util.h"
#include "common/log.h"
#include "common/process.h"
#include "common/remove_tree.h"
#include "mps/mps_daemons.h"
#include "mps/mps_text.h"

extern char** environ;

namespace pinpoint::mps {

namespace {

// Removes `base`/`name` (a directory its user may have filled) without following a link and at a
// bounded cost; what the budget does not reach is moved aside whole, so the name is free either
// way. `base` is root's: the user cannot race the names in it.
Status EmptyUserDir(const std::string& base, const char* name) {
  auto dir = OpenDirNoFollow(base);
  if (!dir.ok()) return dir.status();
  RemoveTreeBudget budget{8, 10000};
  if (RemoveTreeAt(dir->get(), name, &budget).ok()) return Status::Ok();
  std::string moved_to;
  PP_RETURN_IF_ERROR(MakeFreshDir(base + "/" + name, 0700, &moved_to));
  log::Warn("MPS: {}/{} could not be emptied; moved it to {}", base, name, moved_to);
  return Status::Ok();
}

}  // namespace

Status MpsDaemons::Start(int device_index, Daemon& d) {
  std::string base =
      options_.mps_root + "/dev" + std::to_string(device_index) + "/" + std::to_string(d.uid);
  d.pipe_dir = base + "/pipe";
  d.log_dir = base + "/log";
  // MPS makes Unix sockets in the pipe directory; the longest, control_privileged, must fit
  // sockaddr_un (107 characters), or every client would silently run without MPS.
  constexpr size_t kMaxSocketPath = 107;
  size_t longest = d.pipe_dir.size() + std::string("/control_privileged").size();
  if (longest > kMaxSocketPath)
    return Unavailable("MPS pipe directory " + d.pipe_dir + " is too long for a Unix socket (" +
                       std::to_string(longest) + " > " + std::to_string(kMaxSocketPath) +
                       " characters); set mps_dir to a shorter path");
  // The path down to them stays traversable (0755) and root's: the user's clients must reach the
  // pipes, and the user must not be able to swap the directories for links.
  PP_RETURN_IF_ERROR(MakeDirs(base, 0755));
  // A daemon left running by an earlier pinpointd (restart) serves its clients still: adopted, its
  // directories kept. Any other start gets them made anew: a FIFO or a file the user left where
  // the daemon writes its pid or log would wedge it (seen on an H100).
  auto found = MpsProcessesOf(kControlProgram, d.pipe_dir, RunsAs(d));
  if (found.empty()) {
    for (const char* name : {"pipe", "log"}) PP_RETURN_IF_ERROR(EmptyUserDir(base, name));
  }
  for (const auto& dir : {d.pipe_dir, d.log_dir}) {
    PP_RETURN_IF_ERROR(MakeDirs(dir, 0700));
    if (options_.switch_user && ::chown(dir.c_str(), d.uid, d.gid) != 0)
      return IoError("chown " + dir + ": " + ErrnoText(errno));
    ::chmod(dir.c_str(), 0700);
  }
  d.server_log = ServerLogScanner(d.log_dir + "/server.log");
  d.server_log.SkipToEnd();
  d.foreground_log = ServerLogScanner(d.log_dir + "/" + kForegroundLog);
  d.foreground_log.SkipToEnd();
  d.idle_since_ms = clock_->NowMs();
  if (!found.empty()) {
    d.control = std::move(found.front());
    d.child = false;
    d.phase = Phase::kRunning;
    log::Info("MPS: adopted control daemon {} of device {} ({}) for uid {}", d.control.pid(),
              device_index, d.uuid, d.uid);
    return Status::Ok();
  }
  log::Info("MPS: starting a control daemon for device {} ({}) as uid {}", device_index, d.uuid,
            d.uid);
  return Spawn(d);  // ready once Poll (or PrepareClient) sees its control socket
}

Status MpsDaemons::Spawn(Daemon& d) {
  std::vector<std::string> env = {PathEnv(), "CUDA_VISIBLE_DEVICES=" + d.uuid,
                                  "CUDA_MPS_PIPE_DIRECTORY=" + d.pipe_dir,
                                  "CUDA_MPS_LOG_DIRECTORY=" + d.log_dir};
  // Watched before the fork, so the control socket cannot appear unseen.
  UniqueFd watch(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!watch.valid()) return IoError("inotify: " + ErrnoText(errno));
  if (::inotify_add_watch(watch.get(), d.pipe_dir.c_str(),
                          IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW) < 0)
    return IoError("inotify " + d.pipe_dir + ": " + ErrnoText(errno));
  std::string program = options_.control_binary;
  std::string out_path = d.log_dir + "/" + kForegroundLog;
  std::string stale_socket = d.pipe_dir + "/control";
  std::vector<std::string> argv = {kControlProgram, "-f"};
  auto cargv = CStrings(argv);
  auto cenv = CStrings(env);
  gid_t groups[1] = {d.gid};
  bool switch_user = options_.switch_user;
  // Closed by the child's exec (or exit): until then the child may not yet have removed a dead
  // daemon's socket, and seeing that socket would report a daemon ready that is not listening,
  // whose first clients would run without MPS (seen on an H100 after a restart).
  int exec_done[2];
  if (::pipe2(exec_done, O_CLOEXEC | O_NONBLOCK) != 0) return IoError("pipe: " + ErrnoText(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(exec_done[0]);
    ::close(exec_done[1]);
    return IoError("fork: " + ErrnoText(errno));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // pinpointd blocks signals for its signalfd
    ::setsid();  // outlives pinpointd, and no signal to pinpointd's group reaches it
    if (switch_user &&
        (::setgroups(1, groups) != 0 || ::setgid(d.gid) != 0 || ::setuid(d.uid) != 0))
      ::_exit(126);
    // From here on the child is the user: what it opens and removes in the user's directories,
    // it does with the user's rights only. A FIFO planted there would block it here, not
    // pinpointd: the start's deadline kills it.
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out_fd =
        ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (null_fd < 0 || out_fd < 0) ::_exit(125);
    ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
    ::unlink(stale_socket.c_str());  // a dead daemon's socket would look ready
    CloseOnExecFrom(3);              // the user's control daemon gets nothing pinpointd holds
    environ = cenv.data();
    ::execvp(program.c_str(), cargv.data());
    ::_exit(127);
  }
  ::close(exec_done[1]);
  // The child is not reaped before this, so its pid cannot have been reused.
  auto held = PidFd::Open(pid);
  if (!held) {
    ::close(exec_done[0]);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);  // killed: returns at once
    return Unavailable("cannot hold the MPS control daemon by a pidfd (kernel before 5.3?)");
  }
  d.phase = Phase::kStarting;
  d.starting = Starting{std::move(*held), UniqueFd(exec_done[0]), std::move(watch), false,
                        clock_->NowMs() + options_.command_timeout_ms};
  return Status::Ok();
}

void MpsDaemons::CheckStart(int device_index, Daemon& d, int64_t now_ms) {
  if (d.phase != Phase::kStarting) return;
  Starting& st = d.starting;
  if (!st.execed) {
    char byte;
    ssize_t n = ::read(st.exec_done.get(), &byte, 1);  // nothing is ever written: 0 is the end
    st.execed = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
  }
  char events[4096];
  while (::read(st.watch.get(), events, sizeof(events)) > 0) {
  }
  struct stat sb {};
  bool socket_exists = st.execed && ::lstat((d.pipe_dir + "/control").c_str(), &sb) == 0;
  bool alive = st.child.Alive();
  if (alive && socket_exists) {
    d.control = std::move(st.child);
    d.child = true;
    d.phase = Phase::kRunning;
    d.starting = Starting{};
    // The child truncated its output file before it made its socket: everything in it now is this
    // daemon's, and is read from the start. Skipping to the old file's end instead would miss
    // this daemon's first lines (a fault within them) while the file regrows past that offset.
    d.foreground_log = ServerLogScanner(d.log_dir + "/" + kForegroundLog);
    log::Info("MPS: control daemon {} started for device {} ({}) as uid {}", d.control.pid(),
              device_index, d.uuid, d.uid);
    return;
  }
  if (alive && now_ms < st.deadline_ms) return;
  int status = 0;
  pid_t pid = static_cast<pid_t>(st.child.pid());
  if (alive) st.child.Signal(SIGKILL);
  ::waitpid(pid, &status, 0);  // exited, or killed just now
  if (alive) {
    d.start_error = "cannot start MPS control daemon: " + options_.control_binary +
                    " did not answer within " + std::to_string(options_.command_timeout_ms) + " ms";
  } else {
    // Its last words, read as any file of the user's: no link followed, at most 400 bytes.
    std::string said;
    if (auto dir = OpenDirNoFollow(d.log_dir); dir.ok()) {
      auto tail = ReadFileTailAt(dir->get(), kForegroundLog, 400);
      if (tail.ok()) said = *tail;
    }
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    said = said.substr(said.rfind('\n') == std::string::npos ? 0 : said.rfind('\n') + 1);
    std::string why = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "not found" : "failed";
    d.start_error = "cannot start MPS control daemon: " + options_.control_binary + " " + why +
                    (said.empty() ? "" : " (" + Printable(said) + ")");
  }
  d.phase = Phase::kFailed;
  d.starting = Starting{};
  log::Error("MPS: device {}: {}", device_index, d.start_error);
}

}  // namespace pinpoint::mps
