#include "mps/mps_daemons.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/file_util.h"
#include "common/process.h"
#include "mps/env_only_mps.h"

extern char** environ;

namespace pinpoint::mps {

namespace {

constexpr char kFatalMarker[] = "encountered a fatal GPU error";

std::string PathEnv() {
  const char* p = std::getenv("PATH");
  return std::string("PATH=") + (p ? p : "/usr/local/nvidia/bin:/usr/bin:/bin");
}

// Runs `argv` with `env`, feeding `input` on stdin, and returns its stdout. The child runs as
// uid/gid when switch_user. Gives up (and kills it) after timeout_ms. With `output_file`, the
// output goes there instead (a daemonizing tool may keep its stdout open for its whole life).
Result<std::string> RunTool(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            const std::string& input, bool switch_user, uint32_t uid, uint32_t gid,
                            int timeout_ms, const std::string& output_file = "") {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    return IoError("pipe: " + ErrnoText(errno));
  auto cargv = CStrings(argv);
  auto cenv = CStrings(env);
  gid_t groups[1] = {gid};
  pid_t pid = ::fork();
  if (pid < 0) return IoError("fork: " + ErrnoText(errno));
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // pinpointd blocks signals for its signalfd
    ::dup2(in[0], 0);
    int target = out[1];
    if (!output_file.empty()) {
      target = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (target < 0) ::_exit(125);
    }
    ::dup2(target, 1);
    ::dup2(target, 2);
    if (switch_user && (::setgroups(1, groups) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)) ::_exit(126);
    environ = cenv.data();
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  if (!input.empty() && ::write(in[1], input.data(), input.size()) < 0) {
    // The tool may have exited early; its output says why.
  }
  ::close(in[1]);
  std::string output;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now()).count());
    pollfd p{out[0], POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      ::close(out[0]);
      return Unavailable(argv[0] + " did not answer within " + std::to_string(timeout_ms) + " ms");
    }
    ssize_t n = ::read(out[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  int left_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     deadline - std::chrono::steady_clock::now()).count());
  if (!WaitForExit(pid, std::max(left_ms, 0))) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Unavailable(argv[0] + " did not answer within " + std::to_string(timeout_ms) + " ms");
  }
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "not found" : "failed";
    return Unavailable(argv[0] + " " + why + (output.empty() ? "" : ": " + output));
  }
  return output;
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

std::vector<int64_t> ServersOfPipeDir(const std::string& pipe_dir) {
  std::vector<int64_t> out;
  std::string want = "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir;
  for (int64_t pid : ListPids()) {
    if (ReadProcFile(pid, "cmdline").find("nvidia-cuda-mps-server") == std::string::npos) continue;
    std::istringstream vars(ReadProcFile(pid, "environ"));
    std::string var;
    while (std::getline(vars, var, '\0')) {
      if (var == want) {
        out.push_back(pid);
        break;
      }
    }
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
    : options_(std::move(options)), clock_(clock) {}

Result<std::string> MpsDaemons::Command(const Daemon& d, const std::string& command) const {
  std::vector<std::string> env = {PathEnv(), "CUDA_MPS_PIPE_DIRECTORY=" + d.pipe_dir,
                                  "CUDA_MPS_LOG_DIRECTORY=" + d.log_dir};
  // pinpointd (root) may talk to any user's daemon; a non-root pinpointd only runs its own.
  return RunTool({options_.control_binary}, env, command + "\n", false, 0, 0,
                 options_.command_timeout_ms);
}

bool MpsDaemons::ControlAlive(const Daemon& d) const { return ProcessAlive(d.control_pid); }

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
  // The path down to them stays traversable (0755): the user's clients must reach the pipes.
  PP_RETURN_IF_ERROR(MakeDirs(base, 0755));
  for (const auto& dir : {d.pipe_dir, d.log_dir}) {
    PP_RETURN_IF_ERROR(MakeDirs(dir, 0700));
    if (options_.switch_user && ::chown(dir.c_str(), d.uid, d.gid) != 0)
      return IoError("chown " + dir + ": " + ErrnoText(errno));
    ::chmod(dir.c_str(), 0700);
  }
  std::vector<std::string> env = {PathEnv(), "CUDA_VISIBLE_DEVICES=" + d.uuid,
                                  "CUDA_MPS_PIPE_DIRECTORY=" + d.pipe_dir,
                                  "CUDA_MPS_LOG_DIRECTORY=" + d.log_dir};
  std::string start_log = base + "/control-start.log";
  auto started = RunTool({options_.control_binary, "-d"}, env, "", options_.switch_user, d.uid,
                         d.gid, options_.command_timeout_ms, start_log);
  if (!started.ok()) {
    auto said = ReadFileTail(start_log, 400);
    return Unavailable("cannot start MPS control daemon: " + started.status().message() +
                       (said.ok() && !said->empty() ? " (" + Lines(*said).back() + ")" : ""));
  }
  auto pid_text = ReadFile(d.pipe_dir + "/nvidia-cuda-mps-control.pid");
  if (!pid_text.ok() || !IsNumber(Lines(*pid_text).empty() ? "" : Lines(*pid_text)[0]))
    return Unavailable("MPS control daemon wrote no pid file in " + d.pipe_dir);
  d.control_pid = std::stoll(Lines(*pid_text)[0]);
  struct stat st {};
  d.server_log_offset = ::stat((d.log_dir + "/server.log").c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  d.idle_since_ms = clock_->NowMs();
  spdlog::info("MPS: control daemon {} started for device {} ({}) as uid {}", d.control_pid,
               device_index, d.uuid, d.uid);
  return Status::Ok();
}

void MpsDaemons::Quit(Daemon& d) {
  if (ControlAlive(d)) {
    auto r = Command(d, "quit");
    if (!r.ok()) spdlog::warn("MPS: quit: {}", r.status().message());
    // The next daemon for this pipe directory can only start once this one is gone.
    if (!WaitForExit(d.control_pid, 5000)) ::kill(static_cast<pid_t>(d.control_pid), SIGKILL);
  }
  for (int64_t pid : d.orphan_servers) ::kill(static_cast<pid_t>(pid), SIGKILL);
  d.orphan_servers.clear();
  d.control_pid = 0;
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
    for (int64_t pid : d.orphan_servers) ::kill(static_cast<pid_t>(pid), SIGKILL);
    d.orphan_servers.clear();
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
  std::vector<std::string> faults;
  std::string path = d.log_dir + "/server.log";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return faults;
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < d.server_log_offset) d.server_log_offset = 0;  // rotated
  if (size == d.server_log_offset) return faults;
  std::ifstream in(path);
  in.seekg(static_cast<std::streamoff>(d.server_log_offset));
  std::string line;
  uint64_t consumed = d.server_log_offset;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a partial last line: read it whole next time
    consumed += line.size() + 1;
    if (line.find(kFatalMarker) != std::string::npos) faults.push_back(line);
  }
  d.server_log_offset = consumed;
  return faults;
}

std::vector<MpsEvent> MpsDaemons::Poll(int64_t now_ms) {
  std::vector<MpsEvent> events;
  for (auto it = daemons_.begin(); it != daemons_.end();) {
    int index = it->first;
    Daemon& d = it->second;
    for (const auto& line : NewFaultLines(d)) events.push_back({index, MpsEvent::Kind::kFatalFault, line});
    if (d.control_pid != 0 && !ControlAlive(d)) {
      for (int64_t pid : ServersOfPipeDir(d.pipe_dir)) d.orphan_servers.insert(pid);
      events.push_back({index, MpsEvent::Kind::kDaemonDied,
                        "MPS control daemon " + std::to_string(d.control_pid) + " of device " +
                            std::to_string(index) + " vanished; restarting it"});
      d.control_pid = 0;
      if (d.clients == 0) {
        for (int64_t pid : d.orphan_servers) ::kill(static_cast<pid_t>(pid), SIGKILL);
        d.orphan_servers.clear();
      }
      ++d.restarts;
      Status s = Start(index, d);
      if (!s.ok()) spdlog::error("MPS: device {}: {}", index, s.message());
    }
    if (d.clients == 0 && !d.keep && options_.idle_quit_ms > 0 && now_ms - d.idle_since_ms >= options_.idle_quit_ms) {
      Quit(d);
      events.push_back({index, MpsEvent::Kind::kDaemonQuit,
                        "MPS control daemon of device " + std::to_string(index) + " quit after being idle"});
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

nlohmann::json MpsDaemons::Describe() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [index, d] : daemons_) {
    out[std::to_string(index)] = {{"state", ControlAlive(d) ? "running" : "down"},
                                  {"uid", d.uid},
                                  {"control_pid", d.control_pid},
                                  {"clients", d.clients},
                                  {"restarts", d.restarts},
                                  {"pipe_dir", d.pipe_dir}};
  }
  return out;
}

}  // namespace pinpoint::mps
