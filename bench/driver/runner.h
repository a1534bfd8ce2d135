// BatchRunner: one way of running N copies of a workload (a mode of the benchmark), behind an
// interface so the campaign can be tested with a fake. Implementations: PinpointRunner (a private
// pinpointd in one device mode, driven through pinpoint's client library) and DirectRunner
// (copies started by the driver itself, with or without an MPS control daemon of its own).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "bench/driver/options.h"
#include "bench/driver/results.h"
#include "bench/driver/workload.h"
#include "pinpoint/status.h"

namespace pinpoint::bench {

// What every runner needs; owned by the caller, outlives the runners.
struct RunnerContext {
  BenchOptions options;
  Workload workload;
  std::string bin_dir;      // absolute
  std::string scratch_dir;  // absolute and short: sockets and MPS pipes go below it
  // The GPUs measured (options.gpus), as CUDA_VISIBLE_DEVICES names them; copy i of a batch runs
  // on gpu_uuids[i % size].
  std::vector<std::string> gpu_uuids;
  const std::atomic<bool>* stop = nullptr;  // set on SIGINT/SIGTERM
};

// Not thread-safe: the campaign calls one runner at a time.
class BatchRunner {
 public:
  virtual ~BatchRunner() = default;
  virtual Mode mode() const = 0;
  // Starts what the mode needs (pinpointd, an MPS control daemon). Errors: one line for a person.
  virtual Status Setup() = 0;
  // Runs n copies and returns once all have ended. `tag` names them (job names, file names).
  // A copy that fails is a JobResult with ok=false, not an error. Errors: the batch could not be
  // run (a submit was refused, the daemon died, interrupted).
  virtual Result<BatchResult> Run(int n, const std::string& tag) = 0;
  // Stops what Setup started, cancelling copies still running. Safe after a failed Setup and twice.
  virtual void Teardown() = 0;
  // Copies its logs (daemon logs) into `dir`, named after the mode.
  virtual void SaveLogs(const std::string& dir) = 0;
  // A line to show once after Setup (e.g. a warning), or "".
  virtual std::string Note() const { return ""; }
};

// Quits the MPS control daemon whose pipe directory is `pipe_dir` ("quit" through
// `control_binary`), waits up to 10 s for it to exit and kills it (by the pid in its pid file)
// if it did not. Returns a line describing a failure, or "".
std::string QuitMpsControl(const std::string& control_binary, const std::string& pipe_dir);

}  // namespace pinpoint::bench
