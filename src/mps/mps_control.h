// MpsControl: what pinpoint needs from NVIDIA MPS. One MPS control daemon per device (GPU or MIG
// instance), each with its own pipe and log directory under pinpointd's state directory, so only
// jobs that carry that pipe directory in their environment become its clients.
//
// This interface is the seam between the daemon and MPS. EnvOnlyMps (real, minimal) computes the
// client environment only; the full lifecycle (starting, health-checking and quitting the control
// daemons, terminate_client) is the MPS issue's work and plugs in behind the same interface.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint::mps {

// One client's slice on one device.
struct ClientSlice {
  int device_index = 0;
  std::string device_uuid;
  uint32_t uid = 0;              // the Unix user the client runs as
  uint64_t gpu_mem_bytes = 0;    // device memory, the CUDA context included
  int gpu_share_pct = 0;         // 0: no SM cap
};

// Not thread-safe: the daemon's main loop owns it.
class MpsControl {
 public:
  virtual ~MpsControl() = default;
  // Makes sure the device's MPS server can take a client of slice.uid and returns the environment
  // variables that make a process its client with the slice's limits:
  // CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT and, when a
  // share was asked for, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE. The process sees the device as CUDA
  // device 0 (CUDA_VISIBLE_DEVICES names only it). Errors: kUnavailable when the server cannot
  // be made ready.
  virtual Result<std::map<std::string, std::string>> PrepareClient(const ClientSlice& slice) = 0;
  // The job's clients on the device are gone; the server may be quit when idle.
  virtual void ReleaseClient(const ClientSlice& slice) = 0;
};

// "0=1536M": the pinned device-memory limit for CUDA device 0, in whole MiB rounded down
// (at least 1).
std::string PinnedMemLimitValue(uint64_t gpu_mem_bytes);

}  // namespace pinpoint::mps
