// MPS, the sharing mode (sharing/backend.h): slices of one device are clients of the MPS server
// of their Unix user, with pinned device memory and SM limits (docs/mps.md). One control daemon
// per device (a GPU or a MIG instance) and user, each with its own pipe and log directory, so only
// jobs that carry that pipe directory in their environment become its clients.
//
// MpsBackend is what every implementation of the mode shares: its rules, which holds are clients,
// the variables it owns. The implementations are sharing::Backends themselves: MpsDaemons (runs
// nvidia-cuda-mps-control, mps_daemons.h), EnvOnlyMps (the environment only, where no daemon can
// run: env_only_mps.h) and FakeMps (tests, fake_mps.h). Their Prepare sets
// CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT and, with a
// share, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; the process sees its device as CUDA device 0.
// Not thread-safe: the daemon's main loop owns it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sharing/backend.h"
#include "sharing/placement_rules.h"

namespace pinpoint::mps {

// MPS's placements: one uid per device at a time, at most `client_limit` clients (NVIDIA's 48 on
// Volta and later; 0: the node takes no MPS slices, for `no_slices_reason`).
inline sharing::PlacementRules MpsRules(int client_limit = 48, std::string no_slices_reason = "") {
  return sharing::PlacementRules{.whole_device = false,
                                 .one_user = true,
                                 .max_jobs = client_limit,
                                 .no_slices_reason = std::move(no_slices_reason)};
}

// The mode a slot of `slot_gpu_mem_bytes` (0: a whole device) over `devices` devices is held in on
// an MPS device: one process can be the client of one MPS server only, so a slice over several
// devices is time-sliced instead (docs/design.md).
SharingMode MpsHoldsAs(uint64_t slot_gpu_mem_bytes, size_t devices);

// The variables MPS sets (Backend::OwnVariables).
std::vector<std::string> MpsVariables();

// What an MPS client's hold applies (Backend::Applies): its pinned device memory limit and its
// active thread percentage, each read back from the client's environment. The limits are the
// driver's, and a client can raise them for itself (docs/enforcement.md): pinpointd's watcher
// still stops the job above its memory.
std::vector<AppliedLimit> MpsApplies(const sharing::Slice& slice);
// The paths an MPS client reaches (Backend::ClientPaths): its pipe directory.
std::vector<std::string> MpsClientPaths(const std::map<std::string, std::string>& env);

class MpsBackend : public sharing::Backend {
 public:
  explicit MpsBackend(sharing::PlacementRules rules) : rules_(std::move(rules)) {}
  SharingMode mode() const final { return SharingMode::kMps; }
  sharing::PlacementRules Rules() const final { return rules_; }
  SharingMode HoldsAs(uint64_t slot_gpu_mem_bytes, size_t devices) const final {
    return MpsHoldsAs(slot_gpu_mem_bytes, devices);
  }
  std::vector<std::string> OwnVariables() const final { return MpsVariables(); }
  std::vector<AppliedLimit> Applies(const sharing::Slice& slice) const final {
    return MpsApplies(slice);
  }
  std::vector<std::string> ClientPaths(const std::map<std::string, std::string>& env) const final {
    return MpsClientPaths(env);
  }

 private:
  sharing::PlacementRules rules_;
};

// "0=1536M": the pinned device-memory limit for CUDA device 0, in whole MiB rounded down
// (at least 1).
std::string PinnedMemLimitValue(uint64_t gpu_mem_bytes);

// The client environment for a pipe/log directory pair and a slice.
std::map<std::string, std::string> ClientEnvironment(const std::string& pipe_dir,
                                                     const std::string& log_dir,
                                                     const sharing::Slice& slice);

// An event of the MPS mode (Poll).
inline sharing::Event MpsEvent(int device_index, sharing::Event::Kind kind, std::string detail,
                               uint32_t uid = 0) {
  return sharing::Event{SharingMode::kMps, device_index, kind, uid, std::move(detail)};
}

}  // namespace pinpoint::mps
