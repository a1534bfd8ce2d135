// EnvOnlyMps: the minimal real MpsControl. Computes each client's environment (per-device pipe
// and log directories under `mps_root`, pinned memory limit, SM share) and creates the
// directories; it starts no control daemon. Without a running control daemon, CUDA runs the
// client without MPS, so limits are not enforced yet: the daemon logs this at start.
#pragma once

#include "mps/mps_control.h"

namespace pinpoint::mps {

class EnvOnlyMps : public MpsControl {
 public:
  // `mps_root`: absolute directory; <mps_root>/<device uuid>/{pipe,log} are used.
  explicit EnvOnlyMps(std::string mps_root) : mps_root_(std::move(mps_root)) {}
  Result<std::map<std::string, std::string>> PrepareClient(const ClientSlice& slice) override;
  void ReleaseClient(const ClientSlice& slice) override {}

 private:
  std::string mps_root_;
};

}  // namespace pinpoint::mps
