// The MPS sharing mode (sharing/backend.h): slices of one device are clients of the MPS server
// of their Unix user, with pinned device memory and SM limits (docs/mps.md). A thin adapter over
// MpsControl, which runs the control daemons asynchronously (MpsDaemons; EnvOnlyMps where none
// can run; FakeMps in tests).
#pragma once

#include <string>

#include "mps/mps_control.h"
#include "sharing/backend.h"

namespace pinpoint::mps {

// MPS's placements: one uid per device at a time, at most `client_limit` clients (NVIDIA's 48 on
// Volta and later; 0: the node takes no MPS slices, for `no_slices_reason`).
inline sharing::PlacementRules MpsRules(int client_limit = 48, std::string no_slices_reason = "") {
  return sharing::PlacementRules{.whole_device = false, .one_user = true, .max_jobs = client_limit,
                                 .no_slices_reason = std::move(no_slices_reason)};
}

class MpsBackend : public sharing::Backend {
 public:
  // `control` is not owned and must outlive the backend.
  MpsBackend(MpsControl* control, sharing::PlacementRules rules)
      : control_(control), rules_(std::move(rules)) {}

  SharingMode mode() const override { return SharingMode::kMps; }
  sharing::PlacementRules Rules() const override { return rules_; }
  // One process can be the client of one MPS server only: a slice over several devices is
  // time-sliced instead (docs/design.md).
  SharingMode HoldsAs(uint64_t slot_gpu_mem_bytes, size_t devices) const override;
  // CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT and
  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (MpsControl::PrepareClient).
  std::vector<std::string> OwnVariables() const override;
  Result<std::map<std::string, std::string>> Prepare(const sharing::Slice& slice) override;
  void Adopt(const sharing::Slice& slice) override;
  void Release(const sharing::Slice& slice) override;
  // terminate_client for each of the job's processes that is a client
  // (MpsControl::TerminateClients).
  Status StopClients(const sharing::Slice& slice,
                     const std::function<std::vector<int64_t>()>& pids) override;
  bool Stopping(uint64_t job_id) const override;
  std::vector<sharing::Event> Poll(int64_t now_ms) override;
  std::vector<int> WaitFds() const override;
  void ResetDevice(int device_index) override;
  std::map<int, sharing::ServerInfo> Servers() const override;

 private:
  MpsControl* control_;
  sharing::PlacementRules rules_;
};

}  // namespace pinpoint::mps
