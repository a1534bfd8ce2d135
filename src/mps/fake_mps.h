// FakeMps: an MpsControl for tests. Records every call; can be told to fail. Per instance.
#pragma once

#include <vector>

#include "mps/mps_control.h"

namespace pinpoint::mps {

class FakeMps : public MpsControl {
 public:
  Result<std::map<std::string, std::string>> PrepareClient(const ClientSlice& slice) override {
    prepared_.push_back(slice);
    if (!failure_.ok()) return failure_;
    return std::map<std::string, std::string>{
        {"CUDA_MPS_PIPE_DIRECTORY", "/fake/mps/" + slice.device_uuid + "/pipe"},
        {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", PinnedMemLimitValue(slice.gpu_mem_bytes)}};
  }
  void ReleaseClient(const ClientSlice& slice) override { released_.push_back(slice); }

  void Fail(Status status) { failure_ = std::move(status); }
  const std::vector<ClientSlice>& prepared() const { return prepared_; }
  const std::vector<ClientSlice>& released() const { return released_; }

 private:
  std::vector<ClientSlice> prepared_;
  std::vector<ClientSlice> released_;
  Status failure_;
};

}  // namespace pinpoint::mps
