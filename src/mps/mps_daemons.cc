#include "mps/mps_daemons.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/log.h"
#include "common/process.h"
#include "mps/mps_text.h"
#include "pinpoint/escape.h"

namespace pinpoint::mps {

std::vector<PidFd> MpsProcessesOf(const std::string& program, const std::string& pipe_dir,
                                  uint32_t uid) {
  std::vector<PidFd> out;
  std::string want = "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir;
  auto belongs = [&](int64_t pid) {
    auto uids = ReadProcUids(pid);
    if (!uids || !uids->AllAre(uid)) return false;
    std::string cmdline = ReadProcFileBounded(pid, "cmdline", 4096);  // argv[0] is all it needs
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

namespace {
// The canonical path of `name` (a path, or a program in PATH), or "".
std::string Resolve(const std::string& name) {
  std::vector<std::string> candidates;
  if (name.find('/') != std::string::npos) {
    candidates.push_back(name);
  } else {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty()) candidates.push_back(dir + "/" + name);
  }
  for (const std::string& c : candidates) {
    if (::access(c.c_str(), X_OK) != 0) continue;
    char real[PATH_MAX];
    if (::realpath(c.c_str(), real) != nullptr) return real;
  }
  return "";
}
}  // namespace

std::string MpsDaemons::ServerProgram(const std::string& control_binary) {
  std::string control = Resolve(control_binary);
  if (!control.empty()) {
    std::string beside = Resolve(control.substr(0, control.rfind('/') + 1) + kServerProgram);
    if (!beside.empty()) return beside;
  }
  return Resolve(kServerProgram);
}

MpsDaemons::MpsDaemons(MpsDaemonsOptions options, Clock* clock)
    : MpsBackend(options.rules), options_(std::move(options)), clock_(clock) {}

Result<AsyncCommand> MpsDaemons::StartCommand(uint32_t uid, uint32_t gid,
                                              const std::string& pipe_dir,
                                              const std::string& log_dir,
                                              const std::string& command) const {
  CommandSpec spec;
  spec.argv = {options_.control_binary};
  spec.env = CommandEnv(pipe_dir, log_dir);
  spec.stdin_text = command + "\n";
  spec.timeout_ms = options_.command_timeout_ms;
  spec.max_output_bytes = kMaxCommandOutputBytes;
  // As the daemon's user, never as root: the pipe directory is the user's, and root's client
  // would follow a `control` the user swapped for a link to another user's daemon.
  if (options_.switch_user) spec.run_as = RunAs{uid, gid, {gid}};
  return AsyncCommand::Start(spec, clock_->NowMs());
}

bool MpsDaemons::ControlAlive(const Daemon& d) const {
  return d.control.valid() && d.control.Alive();
}

uint32_t MpsDaemons::RunsAs(const Daemon& d) const {
  return options_.switch_user ? d.uid : static_cast<uint32_t>(::getuid());
}

void MpsDaemons::ReapIfExited(Daemon& d) {
  if (d.child && d.control.valid() && !d.control.Alive()) {
    ::waitpid(static_cast<pid_t>(d.control.pid()), nullptr, WNOHANG);
    d.child = false;
  }
}

void MpsDaemons::KillOrphans(Daemon& d) {
  for (const PidFd& server : d.orphan_servers) server.Signal(SIGKILL);
  d.orphan_servers.clear();
}

void MpsDaemons::KillUnresponsive(Daemon& d) {
  d.probe.Kill();
  d.quit.Kill();
  for (PidFd& server : MpsProcessesOf(kServerProgram, d.pipe_dir, RunsAs(d)))
    d.orphan_servers.push_back(std::move(server));
  KillOrphans(d);
  if (d.control.valid()) {
    d.control.Signal(SIGKILL);  // through the pidfd: exactly the daemon started or adopted
    if (d.child) reaping_.push_back(std::move(d.control));
  }
  d.control = PidFd();
}

void MpsDaemons::BeginQuit(Daemon& d, std::string detail) {
  d.probe.Kill();
  if (d.phase == Phase::kStarting) {
    d.starting.child.Signal(SIGKILL);  // not serving yet: nothing to ask
    reaping_.push_back(std::move(d.starting.child));
    d.starting = Starting{};
  }
  d.phase = Phase::kQuitting;
  d.quit_detail = std::move(detail);
  // The next daemon for this pipe directory can only start once this one is gone: a quit that
  // is not obeyed within 5 s ends with SIGKILL.
  d.quit_deadline_ms = clock_->NowMs() + std::min(options_.command_timeout_ms, 5000);
  if (!ControlAlive(d)) return;
  auto quit = StartCommand(d.uid, d.gid, d.pipe_dir, d.log_dir, "quit");
  if (quit.ok())
    d.quit = std::move(quit).value();
  else
    log::Warn("MPS: quit: {}", quit.status().message());
}

void MpsDaemons::EndQuit(Daemon& d) {
  d.quit.Kill();
  if (d.control.valid() && d.control.Alive()) {
    d.control.Signal(SIGKILL);  // through the pidfd: exactly the daemon started or adopted
    if (d.child) reaping_.push_back(std::move(d.control));
  }
  ReapIfExited(d);
  KillOrphans(d);
  d.control = PidFd();
}

std::vector<std::string> MpsDaemons::NewFaultLines(Daemon& d) {
  std::vector<std::string> lines;
  for (ServerLogScanner* log : {&d.foreground_log, &d.server_log}) {
    LogScan scan = log->Scan(kFatalMarker);
    if (!scan.problem.empty()) log::Warn("MPS: log of uid {}: {}", d.uid, Printable(scan.problem));
    if (scan.skipped_bytes > 0)
      log::Warn("MPS: log of uid {}: skipped {} bytes (over-long lines or a backlog)", d.uid,
                scan.skipped_bytes);
    lines.insert(lines.end(), scan.lines.begin(), scan.lines.end());
  }
  return lines;
}

void MpsDaemons::PollProbe(int index, Daemon& d, int64_t now_ms,
                           std::vector<sharing::Event>& events, bool* erase) {
  // The health probe: looked at, never waited on.
  if (d.probe.running()) {
    // It answered, or it did not in time: killed at its own deadline, or still unanswered at
    // probe_timeout_ms, whichever comes first.
    bool ended = d.probe.Check(now_ms);
    bool answered = ended && d.probe.result().ending != CommandResult::Ending::kTimedOut;
    if (answered) {
      d.probe = AsyncCommand();
      d.next_probe_ms = now_ms + options_.probe_interval_ms;
    } else if (ended || now_ms - d.probe_started_ms >= options_.probe_timeout_ms) {
      KillUnresponsive(d);
      events.push_back(MpsEvent(
          index, sharing::Event::Kind::kServerUnresponsive,
          "the MPS control daemon of uid " + std::to_string(d.uid) + " on device " +
              std::to_string(index) + " did not answer within " +
              std::to_string(options_.probe_timeout_ms) + " ms; it and its servers were killed",
          d.uid));
      *erase = true;  // the device is free: the next client starts a fresh daemon
    }
  } else if (d.clients > 0 && options_.probe_interval_ms > 0 && ControlAlive(d) &&
             now_ms >= d.next_probe_ms) {
    auto probe = StartCommand(d.uid, d.gid, d.pipe_dir, d.log_dir, "get_server_list");
    if (probe.ok()) {
      d.probe = std::move(probe).value();
      d.probe_started_ms = now_ms;
    } else {
      log::Warn("MPS: device {}: {}", index, probe.status().message());
    }
    d.next_probe_ms = now_ms + options_.probe_interval_ms;
  }
}

bool MpsDaemons::PollDaemon(int index, Daemon& d, int64_t now_ms,
                            std::vector<sharing::Event>& events) {
  switch (d.phase) {
    case Phase::kStarting:
      CheckStart(index, d, now_ms);
      if (d.phase == Phase::kRunning) {
        events.push_back(MpsEvent(index, sharing::Event::Kind::kServerReady,
                                  "MPS control daemon of device " + std::to_string(index) +
                                      " serves uid " + std::to_string(d.uid),
                                  d.uid));
      } else if (d.phase == Phase::kFailed) {
        events.push_back(
            MpsEvent(index, sharing::Event::Kind::kServerStartFailed, d.start_error, d.uid));
      }
      return true;
    case Phase::kFailed:
      return true;
    case Phase::kQuitting:
      if (d.quit.running()) d.quit.Check(now_ms);
      if (ControlAlive(d) && now_ms < d.quit_deadline_ms) return true;
      if (ControlAlive(d))
        log::Warn("MPS: device {}: the control daemon did not quit in time; killed", index);
      EndQuit(d);
      if (!d.quit_detail.empty())
        events.push_back(MpsEvent(index, sharing::Event::Kind::kServerQuit, d.quit_detail, d.uid));
      return false;
    case Phase::kRunning:
      break;
  }
  for (const auto& line : NewFaultLines(d))
    events.push_back(MpsEvent(index, sharing::Event::Kind::kFault, Printable(line), d.uid));
  bool erase = false;
  PollProbe(index, d, now_ms, events, &erase);
  if (erase) return false;
  if (d.control.valid() && !ControlAlive(d)) {
    int64_t dead = d.control.pid();
    ReapIfExited(d);
    d.control = PidFd();
    for (PidFd& server : MpsProcessesOf(kServerProgram, d.pipe_dir, RunsAs(d)))
      d.orphan_servers.push_back(std::move(server));
    events.push_back(MpsEvent(index, sharing::Event::Kind::kServerDied,
                              "MPS control daemon " + std::to_string(dead) + " of device " +
                                  std::to_string(index) + " vanished; restarting it",
                              d.uid));
    if (d.clients == 0) KillOrphans(d);
    ++d.restarts;
    Status s = Start(index, d);
    if (!s.ok()) {
      d.phase = Phase::kFailed;
      d.start_error = s.message();
      log::Error("MPS: device {}: {}", index, s.message());
    }
    return true;
  }
  if (d.clients == 0 && !d.keep && options_.idle_quit_ms > 0 &&
      now_ms - d.idle_since_ms >= options_.idle_quit_ms)
    BeginQuit(d,
              "MPS control daemon of device " + std::to_string(index) + " quit after being idle");
  return true;
}

std::vector<sharing::Event> MpsDaemons::Poll(int64_t now_ms) {
  std::vector<sharing::Event> events;
  std::erase_if(reaping_, [](const PidFd& child) {
    if (child.Alive()) return false;
    ::waitpid(static_cast<pid_t>(child.pid()), nullptr, WNOHANG);
    return true;
  });
  for (auto it = terminators_.begin(); it != terminators_.end();) {
    if (Advance(it->second, now_ms))
      ++it;
    else
      it = terminators_.erase(it);
  }
  for (auto it = daemons_.begin(); it != daemons_.end();) {
    if (PollDaemon(it->first, it->second, now_ms, events))
      ++it;
    else
      it = daemons_.erase(it);
  }
  return events;
}

std::vector<int> MpsDaemons::WaitFds() const {
  std::vector<int> fds;
  for (const auto& [index, d] : daemons_) {
    if (d.phase == Phase::kStarting) {
      // exec_done stays readable once at its end: only until then.
      for (int fd : {d.starting.child.fd(), d.starting.execed ? -1 : d.starting.exec_done.get(),
                     d.starting.watch.get()})
        if (fd >= 0) fds.push_back(fd);
    }
    if (d.phase == Phase::kQuitting && d.control.valid()) fds.push_back(d.control.fd());
    for (int fd : d.quit.fds()) fds.push_back(fd);
    for (int fd : d.probe.fds()) fds.push_back(fd);
  }
  for (const auto& [key, t] : terminators_)
    for (int fd : t.running.fds()) fds.push_back(fd);
  return fds;
}

void MpsDaemons::ResetDevice(int device_index) {
  auto it = daemons_.find(device_index);
  if (it == daemons_.end()) return;
  if (it->second.phase == Phase::kFailed) {
    daemons_.erase(it);
    return;
  }
  if (it->second.phase != Phase::kQuitting)
    BeginQuit(it->second, "MPS control daemon of device " + std::to_string(device_index) +
                              " quit for a fresh server");
}

void MpsDaemons::QuitAll() {
  for (auto& [index, d] : daemons_) {
    if (d.phase != Phase::kQuitting) BeginQuit(d, "");
    if (d.control.valid())
      d.control.WaitExit(
          static_cast<int>(std::max<int64_t>(0, d.quit_deadline_ms - clock_->NowMs())));
    EndQuit(d);
  }
  daemons_.clear();
  terminators_.clear();
}

std::map<int, sharing::ServerInfo> MpsDaemons::Servers() const {
  std::map<int, sharing::ServerInfo> out;
  for (const auto& [index, d] : daemons_) {
    out[index] = sharing::ServerInfo{index,     d.phase == Phase::kRunning && ControlAlive(d),
                                     d.uid,     d.control.valid() ? d.control.pid() : 0,
                                     d.clients, d.restarts,
                                     d.pipe_dir};
  }
  return out;
}

}  // namespace pinpoint::mps
