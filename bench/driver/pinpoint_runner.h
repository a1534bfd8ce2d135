// PinpointRunner: a private pinpointd whose devices are all in one sharing mode (exclusive,
// timeslice or mps), started with its own configuration, state directory, socket and MPS
// directory under the scratch directory, and driven through the `pinpoint` CLI as a user would:
// `submit --json` for each copy, `wait --json` for each job, `logs --json` for its output.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/driver/runner.h"

namespace pinpoint::bench {

struct DaemonPaths {
  std::string state_dir;
  std::string socket_path;
  std::string mps_dir;
};

// pinpointd's configuration for one mode: `defaults` (pinpointd --print-default-config) with the
// paths, backend, mode and benchmark settings put in: host CPUs high enough that no job waits for
// CPUs, MPS control daemons never quit for being idle, cgroups as asked, no metrics endpoint
// (several daemons run at once; set only where `defaults` has that setting, so the file suits
// older daemons too). Everything else keeps pinpointd's defaults. Then options.daemon_set
// (KEY=VALUE, VALUE parsed as JSON or else taken as a string) is put in as given, whatever
// `defaults` holds.
nlohmann::json MakeDaemonConfig(const nlohmann::json& defaults, Mode mode, const DaemonPaths& paths,
                                const BenchOptions& options);

// The pinpoint command line that submits one copy.
std::vector<std::string> SubmitArgs(const std::string& pinpoint, const std::string& socket,
                                    const Workload& workload, const BenchOptions& options,
                                    const std::string& name);

class PinpointRunner : public BatchRunner {
 public:
  // mode is kExclusive, kTimeslice or kMps. `ctx` must outlive the runner.
  PinpointRunner(Mode mode, const RunnerContext* ctx);
  ~PinpointRunner() override { Teardown(); }

  Mode mode() const override { return mode_; }
  Status Setup() override;
  Result<BatchResult> Run(int n, const std::string& tag) override;
  void Teardown() override;
  void SaveLogs(const std::string& dir) override;
  std::string Note() const override { return note_; }

 private:
  // `pinpoint --socket S --json ARGS...`, its stdout parsed as JSON. Errors: its stderr line.
  Result<nlohmann::json> Cli(const std::vector<std::string>& args, int timeout_ms);
  void CancelActive();
  // Submits n copies at once; their ids go to active_. Errors: interrupted, or a refused submit
  // (the others are cancelled).
  Status SubmitAll(int n, const std::string& tag);
  // A job record of `pinpoint wait --json`, with its work read from its stdout.
  JobResult ToJobResult(const nlohmann::json& record);

  Mode mode_;
  const RunnerContext* ctx_;
  std::string dir_, log_path_;
  DaemonPaths paths_;
  pid_t daemon_ = -1;
  std::vector<int64_t> active_;  // jobs submitted and not yet seen ending
  std::string note_;
};

}  // namespace pinpoint::bench
