#include "daemon/setup/command_checkpointer.h"

#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "pinpoint/escape.h"

namespace pinpoint::daemon {

namespace {

constexpr size_t kMaxReportBytes = 256 * 1024;  // a report of kMaxProcesses lines fits

}  // namespace

Status CommandCheckpointer::Available() const {
  if (::access(binary_.c_str(), X_OK) != 0)
    return Unavailable("this node cannot suspend jobs: " + binary_ +
                       " is missing or not executable");
  return Status::Ok();
}

Status CommandCheckpointer::Begin(JobId job, Action action, const std::vector<Target>& processes,
                                  int64_t now_ms) {
  if (runs_.count(job))
    return FailedPrecondition("job " + std::to_string(job) + " is being checkpointed already");
  if (processes.size() > kMaxProcesses)
    return FailedPrecondition("job " + std::to_string(job) + " has " +
                              std::to_string(processes.size()) + " processes, more than the " +
                              std::to_string(kMaxProcesses) + " a suspend names");
  PP_RETURN_IF_ERROR(Available());
  CommandSpec spec;
  spec.argv = {binary_, action == Action::kSuspend ? "suspend" : "resume"};
  if (action == Action::kSuspend) spec.argv.push_back("--cuda-only");
  Run run;
  run.action = action;
  run.began_ms = now_ms;
  for (const Target& t : processes) {
    spec.argv.push_back(std::to_string(t.pid) +
                        (t.start_ticks != 0 ? ":" + std::to_string(t.start_ticks) : ""));
    run.starts[t.pid] = t.start_ticks;
  }
  spec.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  // Where pinpointd finds its own libraries (a build tree), so does its helper.
  if (const char* libs = std::getenv("LD_LIBRARY_PATH"))
    spec.env.push_back(std::string("LD_LIBRARY_PATH=") + libs);
  spec.timeout_ms = static_cast<int>(timeout_ms_);
  spec.max_output_bytes = kMaxReportBytes;
  spec.merge_stderr = true;
  auto command = mps::AsyncCommand::Start(spec, now_ms);
  if (!command.ok()) return command.status();
  run.command = std::move(command).value();
  runs_.emplace(job, std::move(run));
  return Status::Ok();
}

Checkpointer::Done CommandCheckpointer::Read(JobId job, const Run& run, int64_t now_ms) const {
  Done done{job, run.action, false, {}, "", now_ms - run.began_ms, /*clean=*/false};
  const CommandResult& r = run.command.result();
  if (r.ending == CommandResult::Ending::kTimedOut) {
    done.error =
        "pinpoint-checkpoint did not end within " + std::to_string(timeout_ms_ / 1000) + " s";
    return done;
  }
  if (r.ending != CommandResult::Ending::kExited) {
    done.error = "pinpoint-checkpoint was killed (signal " + std::to_string(r.term_signal) + ")";
    return done;
  }
  // Its report is the last line it printed.
  std::string text = r.out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string line = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  nlohmann::json report = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!report.is_object() || !report.contains("ok") || !report["ok"].is_boolean()) {
    done.error = "pinpoint-checkpoint exited " + std::to_string(r.exit_code) + ": " +
                 EscapeForTerminal(std::string_view(text).substr(0, 300));
    return done;
  }
  done.clean = true;  // a report: a suspend that failed was undone by pinpoint-checkpoint itself
  done.ok = report["ok"].get<bool>() && r.exit_code == 0;
  if (!done.ok) {
    std::string error = report.value("error", std::string());
    done.error = EscapeForTerminal(error.empty()
                                       ? "pinpoint-checkpoint exited " + std::to_string(r.exit_code)
                                       : error.substr(0, 300));
    return done;
  }
  const nlohmann::json& processes = report.value("processes", nlohmann::json::array());
  for (const nlohmann::json& p : processes) {
    if (!p.is_object() || !p.contains("pid") || !p["pid"].is_number_integer()) continue;
    int64_t pid = p["pid"].get<int64_t>();
    auto named = run.starts.find(pid);
    if (named == run.starts.end()) continue;  // only those it was asked about
    if (run.action == Action::kSuspend && p.value("state", std::string()) != "checkpointed")
      continue;
    done.processes.push_back({pid, named->second});
  }
  return done;
}

std::vector<Checkpointer::Done> CommandCheckpointer::Poll(int64_t now_ms) {
  std::vector<Done> done;
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (!it->second.command.Check(now_ms)) {
      ++it;
      continue;
    }
    done.push_back(Read(it->first, it->second, now_ms));
    it = runs_.erase(it);
  }
  return done;
}

std::vector<int> CommandCheckpointer::WaitFds() const {
  std::vector<int> fds;
  for (const auto& [job, run] : runs_)
    for (int fd : run.command.fds()) fds.push_back(fd);
  return fds;
}

}  // namespace pinpoint::daemon
