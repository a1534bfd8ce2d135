// EnvOnlyMps: an MpsControl that computes each client's environment (per-device pipe and log
// directories under `mps_root`, pinned memory limit, SM share) and starts no daemon. Used where
// MPS cannot run (the simulated node, nodes without nvidia-cuda-mps-control): without a control
// daemon CUDA runs such clients without MPS, and the daemon logs this at start.
#pragma once

#include "mps/mps_control.h"

namespace pinpoint::mps {

class EnvOnlyMps : public MpsControl {
 public:
  // `mps_root`: absolute directory; <mps_root>/<device uuid>/{pipe,log} are used.
  explicit EnvOnlyMps(std::string mps_root) : mps_root_(std::move(mps_root)) {}
  Result<std::map<std::string, std::string>> PrepareClient(const ClientSlice& slice) override;
  void ReleaseClient(const ClientSlice& slice) override {}
  Status TerminateClients(const ClientSlice&, const std::vector<int64_t>&, uint64_t) override {
    return Status::Ok();
  }
  std::vector<MpsEvent> Poll(int64_t) override { return {}; }
  void ResetDevice(int) override {}
  std::vector<MpsDaemonInfo> Describe() const override { return {}; }

 private:
  std::string mps_root_;
};

// The client environment for a pipe/log directory pair and a slice.
std::map<std::string, std::string> ClientEnvironment(const std::string& pipe_dir,
                                                     const std::string& log_dir,
                                                     const ClientSlice& slice);

}  // namespace pinpoint::mps
