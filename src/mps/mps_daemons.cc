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
#include "mps/env_only_mps.h"
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
    : options_(std::move(options)), clock_(clock) {}

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
  if (quit.ok()) d.quit = std::move(quit).value();
  else log::Warn("MPS: quit: {}", quit.status().message());
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

Result<std::map<std::string, std::string>> MpsDaemons::PrepareClient(const ClientSlice& slice) {
  if (slice.device_uuid.empty() || slice.device_uuid.find('/') != std::string::npos)
    return Internal("bad device uuid '" + slice.device_uuid + "'");
  std::string device = "device " + std::to_string(slice.device_index);
  auto it = daemons_.find(slice.device_index);
  if (it != daemons_.end() && it->second.phase == Phase::kFailed) {
    // The failed start is reported once, to the job that asks for it first; the next one tries
    // again.
    std::string why = it->second.start_error;
    bool same_user = it->second.uid == slice.uid;
    daemons_.erase(it);
    if (same_user) return Unavailable(why);
    it = daemons_.end();
  }
  if (it != daemons_.end() && it->second.uid != slice.uid) {
    Daemon& d = it->second;
    if (d.clients > 0)
      return FailedPrecondition("MPS on " + device + " serves uid " + std::to_string(d.uid));
    if (d.phase != Phase::kQuitting) {
      BeginQuit(d, "MPS control daemon of " + device + " quit to pass the device to uid " +
                       std::to_string(slice.uid));
    }
    return FailedPrecondition("MPS on " + device + " is being passed on from uid " +
                              std::to_string(d.uid) + " (its control daemon is quitting)");
  }
  if (it == daemons_.end()) {
    Daemon d;
    d.uuid = slice.device_uuid;
    d.uid = slice.uid;
    d.gid = slice.gid;
    PP_RETURN_IF_ERROR(Start(slice.device_index, d));
    it = daemons_.emplace(slice.device_index, std::move(d)).first;
  }
  Daemon& d = it->second;
  if (d.phase == Phase::kRunning && !ControlAlive(d)) {
    // Died since the last Poll: Poll reports it and starts it again.
    return FailedPrecondition("the MPS control daemon of " + device + " is being restarted");
  }
  CheckStart(slice.device_index, d, clock_->NowMs());
  switch (d.phase) {
    case Phase::kStarting:
      return FailedPrecondition("the MPS control daemon of " + device + " is starting");
    case Phase::kQuitting:
      return FailedPrecondition("the MPS control daemon of " + device + " is quitting");
    case Phase::kFailed: {
      std::string why = d.start_error;
      daemons_.erase(it);
      return Unavailable(why);
    }
    case Phase::kRunning:
      break;
  }
  ++d.clients;
  return ClientEnvironment(d.pipe_dir, d.log_dir, slice);
}

void MpsDaemons::AdoptClient(const ClientSlice& slice) {
  auto env = PrepareClient(slice);
  if (env.ok()) return;
  auto it = daemons_.find(slice.device_index);
  if (it != daemons_.end() && it->second.uid == slice.uid && it->second.phase != Phase::kFailed) {
    ++it->second.clients;  // its daemon is (re)starting: the job is its client all the same
  } else {
    log::Warn("MPS: device {}: a running job of uid {} has no MPS daemon: {}", slice.device_index,
              slice.uid, env.status().message());
  }
}

Status MpsDaemons::Prestart(const ClientSlice& slice) {
  auto env = PrepareClient(slice);
  if (!env.ok() && env.status().code() != Code::kFailedPrecondition) return env.status();
  if (env.ok()) ReleaseClient(slice);
  auto it = daemons_.find(slice.device_index);
  if (it != daemons_.end()) it->second.keep = true;
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

Status MpsDaemons::TerminateClients(const ClientSlice& slice, const std::vector<int64_t>& pids,
                                    uint64_t key) {
  auto it = daemons_.find(slice.device_index);
  if (it == daemons_.end() || it->second.phase != Phase::kRunning || !ControlAlive(it->second))
    return Status::Ok();
  const Daemon& d = it->second;
  Terminator t;
  t.device_index = slice.device_index;
  t.uid = d.uid;
  t.gid = d.gid;
  t.pipe_dir = d.pipe_dir;
  t.log_dir = d.log_dir;
  t.pids.insert(pids.begin(), pids.end());
  t.asks = {"get_server_list"};
  t.deadline_ms = clock_->NowMs() + options_.command_timeout_ms;
  auto old = terminators_.find(key);
  if (old != terminators_.end()) old->second.running.Kill();
  terminators_.insert_or_assign(key, std::move(t));
  if (!Advance(terminators_.at(key), clock_->NowMs())) {
    terminators_.erase(key);
    return Unavailable("cannot ask the MPS server of device " + std::to_string(slice.device_index));
  }
  return Status::Ok();
}

bool MpsDaemons::Terminating(uint64_t key) const { return terminators_.count(key) > 0; }

bool MpsDaemons::Advance(Terminator& t, int64_t now_ms) {
  std::string device = "device " + std::to_string(t.device_index);
  for (;;) {
    if (t.running.running()) {
      if (!t.running.Check(now_ms)) {
        if (now_ms < t.deadline_ms) return true;  // not answered yet
        t.running.Kill();
      }
      auto out = CommandOutput(t.running.result(), options_.control_binary,
                               options_.command_timeout_ms, kMaxCommandOutputBytes);
      t.running = AsyncCommand();
      if (!out.ok()) {
        log::Warn("MPS: {}: {}: {}", device, t.running_command, out.status().message());
        return false;
      }
      std::vector<std::string> lines = Lines(*out);
      if (t.running_command == "get_server_list") {
        for (const auto& server : lines)
          if (IsNumber(server)) t.asks.push_back("get_client_list " + server);
      } else if (t.running_command.rfind("get_client_list ", 0) == 0) {
        std::string server = t.running_command.substr(std::string("get_client_list ").size());
        for (const auto& client : lines) {
          if (IsNumber(client) && client.size() < 19 && t.pids.count(std::stoll(client)))
            t.asks.push_back("terminate_client " + server + " " + client);
        }
      } else {
        log::Info("MPS: {} on {}: {}", t.running_command, device,
                  lines.empty() ? "" : Printable(lines[0]));
      }
    }
    if (t.asks.empty()) return false;  // every question answered
    if (now_ms >= t.deadline_ms) {
      log::Warn("MPS: {}: safe cancel did not finish within {} ms", device,
                options_.command_timeout_ms);
      return false;
    }
    t.running_command = t.asks.front();
    t.asks.erase(t.asks.begin());
    auto started = StartCommand(t.uid, t.gid, t.pipe_dir, t.log_dir, t.running_command);
    if (!started.ok()) {
      log::Warn("MPS: {}: {}", device, started.status().message());
      return false;
    }
    t.running = std::move(started).value();
  }
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

void MpsDaemons::PollProbe(int index, Daemon& d, int64_t now_ms, std::vector<MpsEvent>& events,
                           bool* erase) {
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
      events.push_back({index, MpsEvent::Kind::kDaemonUnresponsive,
                        "the MPS control daemon of uid " + std::to_string(d.uid) + " on device " +
                            std::to_string(index) + " did not answer within " +
                            std::to_string(options_.probe_timeout_ms) +
                            " ms; it and its servers were killed",
                        d.uid});
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

bool MpsDaemons::PollDaemon(int index, Daemon& d, int64_t now_ms, std::vector<MpsEvent>& events) {
  switch (d.phase) {
    case Phase::kStarting:
      CheckStart(index, d, now_ms);
      if (d.phase == Phase::kRunning) {
        events.push_back({index, MpsEvent::Kind::kDaemonReady,
                          "MPS control daemon of device " + std::to_string(index) + " serves uid " +
                              std::to_string(d.uid),
                          d.uid});
      } else if (d.phase == Phase::kFailed) {
        events.push_back({index, MpsEvent::Kind::kDaemonStartFailed, d.start_error, d.uid});
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
        events.push_back({index, MpsEvent::Kind::kDaemonQuit, d.quit_detail, d.uid});
      return false;
    case Phase::kRunning:
      break;
  }
  for (const auto& line : NewFaultLines(d))
    events.push_back({index, MpsEvent::Kind::kFatalFault, Printable(line), d.uid});
  bool erase = false;
  PollProbe(index, d, now_ms, events, &erase);
  if (erase) return false;
  if (d.control.valid() && !ControlAlive(d)) {
    int64_t dead = d.control.pid();
    ReapIfExited(d);
    d.control = PidFd();
    for (PidFd& server : MpsProcessesOf(kServerProgram, d.pipe_dir, RunsAs(d)))
      d.orphan_servers.push_back(std::move(server));
    events.push_back({index, MpsEvent::Kind::kDaemonDied,
                      "MPS control daemon " + std::to_string(dead) + " of device " +
                          std::to_string(index) + " vanished; restarting it",
                      d.uid});
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

std::vector<MpsEvent> MpsDaemons::Poll(int64_t now_ms) {
  std::vector<MpsEvent> events;
  std::erase_if(reaping_, [](const PidFd& child) {
    if (child.Alive()) return false;
    ::waitpid(static_cast<pid_t>(child.pid()), nullptr, WNOHANG);
    return true;
  });
  for (auto it = terminators_.begin(); it != terminators_.end();) {
    if (Advance(it->second, now_ms)) ++it;
    else it = terminators_.erase(it);
  }
  for (auto it = daemons_.begin(); it != daemons_.end();) {
    if (PollDaemon(it->first, it->second, now_ms, events)) ++it;
    else it = daemons_.erase(it);
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

std::vector<MpsDaemonInfo> MpsDaemons::Describe() const {
  std::vector<MpsDaemonInfo> out;
  for (const auto& [index, d] : daemons_) {
    out.push_back({index, d.phase == Phase::kRunning && ControlAlive(d), d.uid,
                   d.control.valid() ? d.control.pid() : 0, d.clients, d.restarts, d.pipe_dir});
  }
  return out;
}

}  // namespace pinpoint::mps
