// DirectRunner: the baselines without pinpoint. `bare` starts the copies itself; `bare-mps` first
// starts an MPS control daemon per GPU measured, each with its own pipe and log directories
// (CUDA_VISIBLE_DEVICES set to that GPU, as pinpoint does), and gives every copy the pipe
// directory of its GPU. Copy i runs on GPU i % (GPUs measured).
#pragma once

#include <string>

#include "bench/driver/runner.h"

namespace pinpoint::bench {

class DirectRunner : public BatchRunner {
 public:
  // mode is kBare or kBareMps. `ctx` must outlive the runner.
  DirectRunner(Mode mode, const RunnerContext* ctx);
  ~DirectRunner() override { Teardown(); }

  Mode mode() const override { return mode_; }
  Status Setup() override;
  Result<BatchResult> Run(int n, const std::string& tag) override;
  void Teardown() override;
  void SaveLogs(const std::string& dir) override;

 private:
  // Where GPU i's control daemon listens and logs (bare-mps).
  std::string PipeDir(size_t gpu) const;
  std::string LogDir(size_t gpu) const;

  Mode mode_;
  const RunnerContext* ctx_;
  std::string dir_;
  size_t mps_started_ = 0;  // control daemons started, for GPUs 0.. of ctx_->gpu_uuids
};

}  // namespace pinpoint::bench
