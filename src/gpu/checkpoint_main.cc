// pinpoint-checkpoint: the driver's checkpoint API for one job's processes, from a process of its
// own so that pinpointd never waits on it (gpu/cuda_checkpoint.h).
//   pinpoint-checkpoint suspend [--lock-timeout-ms N] [--library PATH] [--cuda-only] PID[:START]...
//   pinpoint-checkpoint resume [--library PATH] PID[:START]...
//   pinpoint-checkpoint state [--library PATH] PID[:START]...
// START, a process's start time in clock ticks (/proc/PID/stat field 22), makes a pid that was
// reused for another process refused before any call. --cuda-only (pinpointd names every process
// of a job): the processes the driver does not answer for (no CUDA) and those gone are left out,
// and it fails only when none is left. resume puts each process back to running from whatever
// state it is in (ResumeAll). Prints one line of JSON (ReportJson).
// Exit: 0 done; 1 not done (a suspend undone: every process as it was); 2 usage; 3 no checkpoint
// API on this node.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/process.h"
#include "gpu/cuda_checkpoint.h"

namespace {

using pinpoint::gpu::CheckpointReport;

int64_t NowMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "pinpoint-checkpoint: %s\nusage: pinpoint-checkpoint suspend|resume|state "
               "[--lock-timeout-ms N] [--library PATH] [--cuda-only] PID[:START]...\n",
               why.c_str());
  return 2;
}

// "123" or "123:456789" -> pid and start ticks (0: not checked); false when it does not parse.
bool ParseTarget(const std::string& text, int* pid, uint64_t* start) {
  size_t colon = text.find(':');
  std::string p = text.substr(0, colon);
  char* end = nullptr;
  long value = std::strtol(p.c_str(), &end, 10);
  if (p.empty() || *end != '\0' || value <= 0 || value > 4194304) return false;
  *pid = static_cast<int>(value);
  *start = 0;
  if (colon == std::string::npos) return true;
  std::string s = text.substr(colon + 1);
  unsigned long long ticks = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || ticks == 0) return false;
  *start = ticks;
  return true;
}

int Fail(const std::string& why, int code) {
  CheckpointReport report;
  report.error = why;
  std::printf("%s\n", pinpoint::gpu::ReportJson(report).c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage("no action");
  std::string action = argv[1];
  if (action != "suspend" && action != "resume" && action != "state")
    return Usage("unknown action '" + action + "'");
  std::string library = "libcuda.so.1";
  uint32_t lock_timeout_ms = 10000;
  std::vector<int> pids;
  bool cuda_only = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cuda-only") {
      cuda_only = true;
      continue;
    }
    if ((arg == "--lock-timeout-ms" || arg == "--library") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--library") {
        library = value;
        continue;
      }
      char* end = nullptr;
      unsigned long ms = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || ms > 3'600'000) return Usage("bad --lock-timeout-ms");
      lock_timeout_ms = static_cast<uint32_t>(ms);
      continue;
    }
    int pid = 0;
    uint64_t start = 0;
    if (!ParseTarget(arg, &pid, &start)) return Usage("not a PID[:START]: '" + arg + "'");
    if (start != 0) {
      auto stat = pinpoint::ReadProcStat(pid);
      if ((!stat || stat->start_ticks != start) && cuda_only) continue;  // gone: left out
      if (!stat || stat->start_ticks != start)
        return Fail("process " + std::to_string(pid) + " is not the one named (started at " +
                        std::to_string(start) + "): it ended, or its pid was reused",
                    1);
    }
    pids.push_back(pid);
  }
  if (pids.empty() && !cuda_only) return Usage("no process named");
  auto driver = pinpoint::gpu::LoadCheckpointDriver(library);
  if (!driver.ok()) return Fail(driver.status().message(), 3);
  if (cuda_only) {
    size_t named = pids.size();
    pids = pinpoint::gpu::CudaProcesses(**driver, pids);
    if (pids.empty())
      return Fail("none of the " + std::to_string(named) +
                      " process(es) named holds a CUDA context: nothing to suspend",
                  1);
  }
  CheckpointReport report;
  if (action == "suspend") {
    report = pinpoint::gpu::SuspendAll(**driver, pids, lock_timeout_ms, NowMs);
  } else if (action == "resume") {
    report = pinpoint::gpu::ResumeAll(**driver, pids, NowMs);
  } else {
    report.ok = true;
    for (int pid : pids) {
      pinpoint::gpu::ProcessStep step;
      step.pid = pid;
      auto state = (*driver)->State(pid);
      if (state.ok()) {
        step.state = *state;
      } else {
        step.error = state.status().message();
        if (report.ok) report.error = step.error;
        report.ok = false;
      }
      report.steps.push_back(step);
    }
  }
  std::printf("%s\n", pinpoint::gpu::ReportJson(report).c_str());
  return report.ok ? 0 : 1;
}
