// PinpointRunner: a private pinpointd whose devices are all in one sharing mode (exclusive,
// timeslice or mps), started with its own configuration, state directory, socket and MPS
// directory under the scratch directory, and driven through pinpoint's client library
// (pinpoint/client.h) as a batch system's submitter would: on one connection, a "submit" for each
// copy sent back to back, then one "wait" for all of them, then "logs" for their output. No process
// is started per copy, so what is measured is pinpoint, not the start-up of a CLI.
#pragma once

#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/driver/runner.h"
#include "pinpoint/client.h"

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

// What the driver submits for the n copies of a batch: one request each, named <tag>-<i>, a
// slice of one GPU of the workload's size (and options.gpu_share_pct of its SMs), options.cpus
// host CPUs, the workload's command, run in `cwd` with `env` (as `pinpoint submit` would send
// them), on pinpointd's device devices[i % size] (submit --device; none when `devices` is empty).
// The whole batch, so that it can go as one array request where pinpointd takes one.
std::vector<JobRequest> CopyRequests(const Workload& workload, const BenchOptions& options,
                                     const std::string& tag, int n,
                                     const std::map<std::string, std::string>& env,
                                     const std::string& cwd, const std::vector<int>& devices = {});

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

 private:
  // A new connection to the daemon. Errors: the client's (kUnavailable).
  Result<Client> Connect();
  // Cancels the jobs of active_ and waits (up to 15 s) for them to end.
  void CancelActive();
  // Submits the copies on `client`, all at once (Client::SubmitEach), stamping each JobResult's
  // submit_call_s; their ids go to active_. Errors: a refused submit (the copies submitted are
  // cancelled), the connection's. To submit a batch as one array request, only this changes.
  Status SubmitAll(Client& client, const std::vector<JobRequest>& copies,
                   std::vector<JobResult>* jobs);
  // Completes a copy's result from its ended record and its output (pp-work, pp-cuda lines);
  // `gpu`: the UUID it was submitted for.
  void FillJobResult(Client& client, const JobView& record, const std::string& gpu, JobResult* job);

  Mode mode_;
  const RunnerContext* ctx_;
  std::string dir_, log_path_;
  DaemonPaths paths_;
  pid_t daemon_ = -1;
  std::vector<JobId> active_;         // jobs submitted and not yet seen ending
  std::vector<int> devices_;          // pinpointd's index of each GPU of ctx_->gpu_uuids
  bool placed_by_pinpointd_ = false;  // copies name no device (see BenchOptions::gpus)
  std::map<std::string, std::string>
      env_;  // what every copy runs with (the driver's, as the CLI's)
  std::string cwd_;
};

}  // namespace pinpoint::bench
