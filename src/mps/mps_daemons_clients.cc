// MpsDaemons' clients (mps_daemons.h): a slice's environment and its pinned limits, adopting
// and releasing a client, and a safe stop of a user's clients (the terminators the poll advances).
#include <signal.h>
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
#include "mps/mps_daemons.h"
#include "mps/mps_text.h"
#include "pinpoint/escape.h"

namespace pinpoint::mps {

Result<std::map<std::string, std::string>> MpsDaemons::Prepare(const sharing::Slice& slice) {
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

void MpsDaemons::Adopt(const sharing::Slice& slice) {
  auto env = Prepare(slice);
  if (env.ok()) return;
  auto it = daemons_.find(slice.device_index);
  if (it != daemons_.end() && it->second.uid == slice.uid && it->second.phase != Phase::kFailed) {
    ++it->second.clients;  // its daemon is (re)starting: the job is its client all the same
  } else {
    log::Warn("MPS: device {}: a running job of uid {} has no MPS daemon: {}", slice.device_index,
              slice.uid, env.status().message());
  }
}

Status MpsDaemons::Prestart(const sharing::Slice& slice) {
  auto env = Prepare(slice);
  if (!env.ok() && env.status().code() != Code::kFailedPrecondition) return env.status();
  if (env.ok()) Release(slice);
  auto it = daemons_.find(slice.device_index);
  if (it != daemons_.end()) it->second.keep = true;
  return Status::Ok();
}

void MpsDaemons::Release(const sharing::Slice& slice) {
  auto it = daemons_.find(slice.device_index);
  if (it == daemons_.end()) return;
  Daemon& d = it->second;
  if (d.clients > 0) --d.clients;
  if (d.clients == 0) {
    d.idle_since_ms = clock_->NowMs();
    KillOrphans(d);
  }
}

Status MpsDaemons::StopClients(const sharing::Slice& slice,
                               const std::function<std::vector<int64_t>()>& pids) {
  uint64_t key = slice.job_id;
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
  std::vector<int64_t> listed = pids();
  t.pids.insert(listed.begin(), listed.end());
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

bool MpsDaemons::Stopping(uint64_t job_id) const { return terminators_.count(job_id) > 0; }

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

}  // namespace pinpoint::mps
