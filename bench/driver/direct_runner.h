// DirectRunner: the baselines without pinpoint. `bare` starts the copies itself; `bare-mps` first
// starts an MPS control daemon with its own pipe and log directories (CUDA_VISIBLE_DEVICES set to
// the measured GPU, as pinpoint does) and gives every copy its pipe directory.
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
  Mode mode_;
  const RunnerContext* ctx_;
  std::string dir_, pipe_dir_, log_dir_;
  bool mps_started_ = false;
};

}  // namespace pinpoint::bench
