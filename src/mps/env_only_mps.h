// EnvOnlyMps: the MPS mode (mps_backend.h) computing each client's environment (per-device pipe
// and log directories under `mps_root`, pinned memory limit, SM share) and starting no daemon.
// Used where MPS cannot run (the simulated node, nodes without nvidia-cuda-mps-control): without a
// control daemon CUDA runs such clients without MPS, and the daemon logs this at start.
#pragma once

#include "mps/mps_backend.h"

namespace pinpoint::mps {

class EnvOnlyMps : public MpsBackend {
 public:
  // `mps_root`: absolute directory; <mps_root>/<device uuid>/{pipe,log} are used.
  explicit EnvOnlyMps(std::string mps_root, sharing::PlacementRules rules = MpsRules())
      : MpsBackend(std::move(rules)), mps_root_(std::move(mps_root)) {}
  // Errors: kUnavailable when the directories cannot be made; kInternal for a device uuid that
  // cannot name a directory.
  Result<std::map<std::string, std::string>> Prepare(const sharing::Slice& slice) override;
  void Adopt(const sharing::Slice&) override {}
  void Release(const sharing::Slice&) override {}

 private:
  std::string mps_root_;
};

}  // namespace pinpoint::mps
