#include "mps/mps_daemons.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/inotify.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/file_util.h"
#include "common/process.h"
#include "common/remove_tree.h"
#include "mps/env_only_mps.h"
#include "pinpoint/escape.h"

extern char** environ;

namespace pinpoint::mps {

namespace {

constexpr char kFatalMarker[] = "encountered a fatal GPU error";
constexpr char kControlProgram[] = "nvidia-cuda-mps-control";
constexpr char kServerProgram[] = "nvidia-cuda-mps-server";
// The foreground control daemon's own output, in the user's log directory, written by the user.
constexpr char kForegroundLog[] = "control-foreground.log";

// User-written text for one log line or job detail: escaped like everything shown to people,
// and at most 300 bytes of it.
std::string Printable(std::string_view text) { return EscapeForTerminal(text.substr(0, 300)); }

enum class Readiness { kReady, kExited, kTimedOut };

// Waits until `socket` exists while `daemon` lives (the control daemon is ready), the daemon
// exits, or timeout_ms pass. `watch` is an inotify descriptor watching the socket's directory,
// set up before the daemon was started, so the socket cannot appear unseen.
Readiness WaitForControlSocket(int watch, const PidFd& daemon, const std::string& socket, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    struct stat st {};
    bool exists = ::lstat(socket.c_str(), &st) == 0;
    if (!daemon.Alive()) return Readiness::kExited;
    if (exists) return Readiness::kReady;
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) return Readiness::kTimedOut;
    pollfd fds[2] = {{watch, POLLIN, 0}, {daemon.fd(), POLLIN, 0}};
    if (::poll(fds, 2, left) < 0 && errno != EINTR) return Readiness::kTimedOut;
    char events[4096];
    while (::read(watch, events, sizeof(events)) > 0) {
    }
  }
}

// Waits until the write ends of `fd` are closed (the child exec'd or exited), at most timeout_ms.
bool WaitForEof(int fd, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    char byte;
    ssize_t n = ::read(fd, &byte, 1);  // nothing is ever written: 0 is the end
    if (n == 0) return true;
    if (n < 0 && errno != EINTR && errno != EAGAIN) return true;
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) return false;
    pollfd pfd = {fd, POLLIN, 0};
    ::poll(&pfd, 1, left);
  }
}

std::string PathEnv() {
  const char* p = std::getenv("PATH");
  return std::string("PATH=") + (p ? p : "/usr/local/nvidia/bin:/usr/bin:/bin");
}

// The environment of a control command (a probe's too): the daemon's pipe and log directories.
std::vector<std::string> CommandEnv(const std::string& pipe_dir, const std::string& log_dir) {
  return {PathEnv(), "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir, "CUDA_MPS_LOG_DIRECTORY=" + log_dir};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

bool IsNumber(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::vector<PidFd> MpsProcessesOf(const std::string& program, const std::string& pipe_dir, uint32_t uid) {
  std::vector<PidFd> out;
  std::string want = "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir;
  auto belongs = [&](int64_t pid) {
    auto uids = ReadProcUids(pid);
    if (!uids || !uids->AllAre(uid)) return false;
    std::string cmdline = ReadProcFile(pid, "cmdline");
    std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
    if (argv0.substr(argv0.rfind('/') + 1) != program) return false;
    std::istringstream vars(ReadProcFile(pid, "environ"));
    std::string var;
    while (std::getline(vars, var, '\0')) {
      if (var == want) return true;
    }
    return false;
  };
  for (int64_t pid : ListPids()) {
    if (pid == ::getpid()) continue;
    // Cheap filter first; the pidfd-verified check below is what counts.
    auto uids = ReadProcUids(pid);
    if (!uids || !uids->AllAre(uid)) continue;
    if (auto fd = PidFd::OpenVerified(pid, belongs)) out.push_back(std::move(*fd));
  }
  return out;
}

std::string MpsDaemons::Unusable(const std::string& control_binary) {
  if (control_binary.find('/') != std::string::npos)
    return ::access(control_binary.c_str(), X_OK) == 0 ? "" : control_binary + " is not executable";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && ::access((dir + "/" + control_binary).c_str(), X_OK) == 0) return "";
  }
  return control_binary + " is not in PATH";
}

MpsDaemons::MpsDaemons(MpsDaemonsOptions options, Clock* clock)
    : options_(std::move(options)),
      clock_(clock),
      runner_(options_.runner != nullptr ? options_.runner : &own_runner_) {}

Result<std::string> MpsDaemons::Command(const Daemon& d, const std::string& command) const {
  CommandSpec spec;
  spec.argv = {options_.control_binary};
  spec.env = CommandEnv(d.pipe_dir, d.log_dir);
  spec.stdin_text = command + "\n";
  spec.timeout_ms = options_.command_timeout_ms;
  spec.max_output_bytes = kMaxCommandOutputBytes;
  spec.merge_stderr = true;
  // As the daemon's user, never as root: the pipe directory is the user's, and root's client
  // would follow a `control` the user swapped for a link to another user's daemon.
  if (options_.switch_user) spec.run_as = RunAs{d.uid, d.gid, {d.gid}};
  auto r = runner_->Run(spec);
  if (!r.ok()) return r.status();
  const std::string& binary = options_.control_binary;
  using Ending = CommandResult::Ending;
  if (r->ending == Ending::kTimedOut || r->ending == Ending::kInterrupted)
    return Unavailable(binary + " did not answer within " + std::to_string(options_.command_timeout_ms) + " ms");
  if (!r->Succeeded()) {
    std::string why = r->ending == Ending::kExited && r->exit_code == 127 ? "not found" : "failed";
    return Unavailable(binary + " " + why + (r->out.empty() ? "" : ": " + Printable(r->out)));
  }
  if (r->out_truncated)
    return Unavailable(binary + " printed more than " + std::to_string(kMaxCommandOutputBytes) + " bytes");
  return std::move(r->out);
}

bool MpsDaemons::ControlAlive(const Daemon& d) const { return d.control.valid() && d.control.Alive(); }

uint32_t MpsDaemons::RunsAs(const Daemon& d) const {
  return options_.switch_user ? d.uid : static_cast<uint32_t>(::getuid());
}

void MpsDaemons::ReapIfExited(Daemon& d) {
  if (d.child && d.control.valid() && !d.control.Alive()) {
    ::waitpid(static_cast<pid_t>(d.control.pid()), nullptr, WNOHANG);
    d.child = false;
  }
}

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
  spdlog::warn("MPS: {}/{} could not be emptied; moved it to {}", base, name, moved_to);
  return Status::Ok();
}

}  // namespace

Status MpsDaemons::Start(int device_index, Daemon& d) {
  std::string base = options_.mps_root + "/dev" + std::to_string(device_index) + "/" + std::to_string(d.uid);
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
    spdlog::info("MPS: adopted control daemon {} of device {} ({}) for uid {}", d.control.pid(),
                 device_index, d.uuid, d.uid);
    return Status::Ok();
  }
  PP_RETURN_IF_ERROR(Spawn(d));
  spdlog::info("MPS: control daemon {} started for device {} ({}) as uid {}", d.control.pid(),
               device_index, d.uuid, d.uid);
  return Status::Ok();
}

Status MpsDaemons::Spawn(Daemon& d) {
  std::vector<std::string> env = {PathEnv(), "CUDA_VISIBLE_DEVICES=" + d.uuid,
                                  "CUDA_MPS_PIPE_DIRECTORY=" + d.pipe_dir,
                                  "CUDA_MPS_LOG_DIRECTORY=" + d.log_dir};
  // Watched before the fork, so the control socket cannot appear unseen.
  int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (watch < 0) return IoError("inotify: " + ErrnoText(errno));
  if (::inotify_add_watch(watch, d.pipe_dir.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW) < 0) {
    int err = errno;
    ::close(watch);
    return IoError("inotify " + d.pipe_dir + ": " + ErrnoText(err));
  }
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
  if (::pipe2(exec_done, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(watch);
    return IoError("pipe: " + ErrnoText(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(watch);
    ::close(exec_done[0]);
    ::close(exec_done[1]);
    return IoError("fork: " + ErrnoText(errno));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // pinpointd blocks signals for its signalfd
    ::setsid();  // outlives pinpointd, and no signal to pinpointd's group reaches it
    if (switch_user && (::setgroups(1, groups) != 0 || ::setgid(d.gid) != 0 || ::setuid(d.uid) != 0)) ::_exit(126);
    // From here on the child is the user: what it opens and removes in the user's directories,
    // it does with the user's rights only.
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (null_fd < 0 || out_fd < 0) ::_exit(125);
    ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
    ::unlink(stale_socket.c_str());  // a dead daemon's socket would look ready
    CloseOnExecFrom(3);  // the user's control daemon gets nothing pinpointd holds
    environ = cenv.data();
    ::execvp(program.c_str(), cargv.data());
    ::_exit(127);
  }
  ::close(exec_done[1]);
  // Bounded: a child stuck before its exec (a FIFO planted where its output goes) must not hang
  // pinpointd; it is then killed as a daemon that never answered.
  bool execed = WaitForEof(exec_done[0], options_.command_timeout_ms);
  ::close(exec_done[0]);
  // The child is not reaped before this, so its pid cannot have been reused.
  auto held = PidFd::Open(pid);
  if (!held) {
    ::close(watch);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Unavailable("cannot hold the MPS control daemon by a pidfd (kernel before 5.3?)");
  }
  Readiness readiness = execed ? WaitForControlSocket(watch, *held, stale_socket, options_.command_timeout_ms)
                                : Readiness::kTimedOut;
  ::close(watch);
  if (readiness == Readiness::kReady) {
    d.control = std::move(*held);
    d.child = true;
    // The child truncated its output file before it made its socket: everything in it now is this
    // daemon's, and is read from the start. Skipping to the old file's end instead would miss
    // this daemon's first lines (a fault within them) while the file regrows past that offset.
    d.foreground_log = ServerLogScanner(d.log_dir + "/" + kForegroundLog);
    return Status::Ok();
  }
  if (readiness == Readiness::kTimedOut) held->Signal(SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (readiness == Readiness::kTimedOut) {
    return Unavailable("cannot start MPS control daemon: " + options_.control_binary +
                       " did not answer within " + std::to_string(options_.command_timeout_ms) + " ms");
  }
  // Its last words, read as any file of the user's: no link followed, at most 400 bytes.
  std::string said;
  if (auto dir = OpenDirNoFollow(d.log_dir); dir.ok()) {
    auto tail = ReadFileTailAt(dir->get(), kForegroundLog, 400);
    if (tail.ok()) said = *tail;
  }
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  said = said.substr(said.rfind('\n') == std::string::npos ? 0 : said.rfind('\n') + 1);
  std::string why = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "not found" : "failed";
  return Unavailable("cannot start MPS control daemon: " + options_.control_binary + " " + why +
                     (said.empty() ? "" : " (" + Printable(said) + ")"));
}

void MpsDaemons::KillOrphans(Daemon& d) {
  for (const PidFd& server : d.orphan_servers) server.Signal(SIGKILL);
  d.orphan_servers.clear();
}

Status MpsDaemons::StartProbe(Daemon& d) {
  // The question is in the pipe before the child exists: it never waits for pinpointd.
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return IoError("pipe: " + ErrnoText(errno));
  const char question[] = "get_server_list\n";
  (void)!::write(in[1], question, sizeof(question) - 1);
  ::close(in[1]);
  std::vector<std::string> argv = {options_.control_binary};
  std::vector<std::string> env = CommandEnv(d.pipe_dir, d.log_dir);
  auto cargv = CStrings(argv);
  auto cenv = CStrings(env);
  gid_t groups[1] = {d.gid};
  bool switch_user = options_.switch_user;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(in[0]);
    return IoError("fork: " + ErrnoText(errno));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setsid();
    if (switch_user && (::setgroups(1, groups) != 0 || ::setgid(d.gid) != 0 || ::setuid(d.uid) != 0)) ::_exit(126);
    int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0 || ::dup2(in[0], 0) < 0 || ::dup2(null_fd, 1) < 0 || ::dup2(null_fd, 2) < 0) ::_exit(125);
    CloseOnExecFrom(3);
    environ = cenv.data();
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  auto held = PidFd::Open(pid);  // our child: its pid is not reused before we reap it
  if (!held) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);  // killed: returns at once
    return IoError("pidfd of the MPS probe: " + ErrnoText(errno));
  }
  d.probe = std::move(*held);
  d.probe_started_ms = clock_->NowMs();
  return Status::Ok();
}

void MpsDaemons::EndProbe(Daemon& d, bool kill) {
  if (!d.probe.valid()) return;
  if (kill) {
    ::kill(-static_cast<pid_t>(d.probe.pid()), SIGKILL);  // its session: what it started too
    d.probe.Signal(SIGKILL);
  }
  reaping_.push_back(std::move(d.probe));
  d.probe = PidFd();
}

void MpsDaemons::KillUnresponsive(Daemon& d) {
  EndProbe(d, /*kill=*/true);
  for (PidFd& server : MpsProcessesOf(kServerProgram, d.pipe_dir, RunsAs(d))) d.orphan_servers.push_back(std::move(server));
  KillOrphans(d);
  if (d.control.valid()) {
    d.control.Signal(SIGKILL);  // through the pidfd: exactly the daemon started or adopted
    if (d.child) reaping_.push_back(std::move(d.control));
  }
  d.control = PidFd();
}

void MpsDaemons::Quit(Daemon& d) {
  EndProbe(d, /*kill=*/true);
  if (ControlAlive(d)) {
    auto r = Command(d, "quit");
    if (!r.ok()) spdlog::warn("MPS: quit: {}", r.status().message());
    // The next daemon for this pipe directory can only start once this one is gone.
    int wait_ms = std::min(options_.command_timeout_ms, 5000);
    if (!d.control.WaitExit(wait_ms)) {
      d.control.Signal(SIGKILL);  // through the pidfd: exactly the daemon started or adopted
      d.control.WaitExit(wait_ms);
    }
  }
  ReapIfExited(d);
  KillOrphans(d);
  d.control = PidFd();
}

Result<std::map<std::string, std::string>> MpsDaemons::PrepareClient(const ClientSlice& slice) {
  if (slice.device_uuid.empty() || slice.device_uuid.find('/') != std::string::npos)
    return Internal("bad device uuid '" + slice.device_uuid + "'");
  auto it = daemons_.find(slice.device_index);
  if (it != daemons_.end() && it->second.uid != slice.uid) {
    if (it->second.clients > 0)
      return FailedPrecondition("MPS on device " + std::to_string(slice.device_index) +
                                " serves uid " + std::to_string(it->second.uid));
    Quit(it->second);  // pass the idle device to the next user
    daemons_.erase(it);
    it = daemons_.end();
  }
  if (it == daemons_.end()) {
    Daemon d;
    d.uuid = slice.device_uuid;
    d.uid = slice.uid;
    d.gid = slice.gid;
    PP_RETURN_IF_ERROR(Start(slice.device_index, d));
    it = daemons_.emplace(slice.device_index, std::move(d)).first;
  } else if (!ControlAlive(it->second)) {
    PP_RETURN_IF_ERROR(Start(slice.device_index, it->second));
  }
  ++it->second.clients;
  return ClientEnvironment(it->second.pipe_dir, it->second.log_dir, slice);
}

Status MpsDaemons::Prestart(const ClientSlice& slice) {
  auto env = PrepareClient(slice);
  if (!env.ok()) return env.status();
  ReleaseClient(slice);
  daemons_[slice.device_index].keep = true;
  return Status::Ok();
}

void MpsDaemons::ReleaseClient(const ClientSlice& slice) {
  auto it = daemons_.find(slice.device_index);
  if (it == daemons_.end()) return;
  Daemon& d = it->second;
  if (d.clients > 0) --d.clients;
  if (d.clients == 0) {
    d.idle_since_ms = clock_->NowMs();
    KillOrphans(d);
  }
}

Status MpsDaemons::TerminateClients(const ClientSlice& slice, const std::vector<int64_t>& pids) {
  auto it = daemons_.find(slice.device_index);
  if (it == daemons_.end() || !ControlAlive(it->second)) return Status::Ok();
  const Daemon& d = it->second;
  auto servers = Command(d, "get_server_list");
  if (!servers.ok()) return servers.status();
  std::set<int64_t> wanted(pids.begin(), pids.end());
  for (const auto& server : Lines(*servers)) {
    if (!IsNumber(server)) continue;
    auto clients = Command(d, "get_client_list " + server);
    if (!clients.ok()) return clients.status();
    for (const auto& client : Lines(*clients)) {
      if (!IsNumber(client) || !wanted.count(std::stoll(client))) continue;
      auto r = Command(d, "terminate_client " + server + " " + client);
      if (!r.ok()) return r.status();
      spdlog::info("MPS: terminate_client {} {} on device {}: {}", server, client, slice.device_index,
                   Lines(*r).empty() ? "" : Lines(*r)[0]);
    }
  }
  return Status::Ok();
}

std::vector<std::string> MpsDaemons::NewFaultLines(Daemon& d) {
  std::vector<std::string> lines;
  for (ServerLogScanner* log : {&d.foreground_log, &d.server_log}) {
    LogScan scan = log->Scan(kFatalMarker);
    if (!scan.problem.empty()) spdlog::warn("MPS: log of uid {}: {}", d.uid, Printable(scan.problem));
    if (scan.skipped_bytes > 0)
      spdlog::warn("MPS: log of uid {}: skipped {} bytes (over-long lines or a backlog)", d.uid,
                   scan.skipped_bytes);
    lines.insert(lines.end(), scan.lines.begin(), scan.lines.end());
  }
  return lines;
}

std::vector<MpsEvent> MpsDaemons::Poll(int64_t now_ms) {
  std::vector<MpsEvent> events;
  std::erase_if(reaping_, [](const PidFd& child) {
    if (child.Alive()) return false;
    ::waitpid(static_cast<pid_t>(child.pid()), nullptr, WNOHANG);
    return true;
  });
  for (auto it = daemons_.begin(); it != daemons_.end();) {
    int index = it->first;
    Daemon& d = it->second;
    for (const auto& line : NewFaultLines(d))
      events.push_back({index, MpsEvent::Kind::kFatalFault, Printable(line), d.uid});
    // The health probe: looked at, never waited on.
    if (d.probe.valid() && !d.probe.Alive()) {
      EndProbe(d, /*kill=*/false);
      d.next_probe_ms = now_ms + options_.probe_interval_ms;
    } else if (d.probe.valid() && now_ms - d.probe_started_ms >= options_.probe_timeout_ms) {
      KillUnresponsive(d);
      events.push_back({index, MpsEvent::Kind::kDaemonUnresponsive,
                        "the MPS control daemon of uid " + std::to_string(d.uid) + " on device " +
                            std::to_string(index) + " did not answer within " +
                            std::to_string(options_.probe_timeout_ms) + " ms; it and its servers were killed",
                        d.uid});
      it = daemons_.erase(it);  // the device is free: the next client starts a fresh daemon
      continue;
    } else if (!d.probe.valid() && d.clients > 0 && options_.probe_interval_ms > 0 && ControlAlive(d) &&
               now_ms >= d.next_probe_ms) {
      Status started = StartProbe(d);
      if (!started.ok()) spdlog::warn("MPS: device {}: {}", index, started.message());
      d.next_probe_ms = now_ms + options_.probe_interval_ms;
    }
    if (d.control.valid() && !ControlAlive(d)) {
      int64_t dead = d.control.pid();
      ReapIfExited(d);
      d.control = PidFd();
      for (PidFd& server : MpsProcessesOf(kServerProgram, d.pipe_dir, RunsAs(d)))
        d.orphan_servers.push_back(std::move(server));
      events.push_back({index, MpsEvent::Kind::kDaemonDied,
                        "MPS control daemon " + std::to_string(dead) + " of device " +
                            std::to_string(index) + " vanished; restarting it", d.uid});
      if (d.clients == 0) KillOrphans(d);
      ++d.restarts;
      Status s = Start(index, d);
      if (!s.ok()) spdlog::error("MPS: device {}: {}", index, s.message());
    }
    if (d.clients == 0 && !d.keep && options_.idle_quit_ms > 0 && now_ms - d.idle_since_ms >= options_.idle_quit_ms) {
      Quit(d);
      events.push_back({index, MpsEvent::Kind::kDaemonQuit,
                        "MPS control daemon of device " + std::to_string(index) + " quit after being idle", d.uid});
      it = daemons_.erase(it);
      continue;
    }
    ++it;
  }
  return events;
}

void MpsDaemons::ResetDevice(int device_index) {
  auto it = daemons_.find(device_index);
  if (it == daemons_.end()) return;
  Quit(it->second);
  daemons_.erase(it);
}

void MpsDaemons::QuitAll() {
  for (auto& [index, d] : daemons_) Quit(d);
  daemons_.clear();
}

std::vector<MpsDaemonInfo> MpsDaemons::Describe() const {
  std::vector<MpsDaemonInfo> out;
  for (const auto& [index, d] : daemons_) {
    out.push_back({index, ControlAlive(d), d.uid, d.control.valid() ? d.control.pid() : 0, d.clients,
                   d.restarts, d.pipe_dir});
  }
  return out;
}

}  // namespace pinpoint::mps
