// Simulated device memory declared by live processes (SimulatedBackend::SetDeclaredUsageFromProc).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

// The variable that ties a declaration to one simulated node: pinpointd sets it in its jobs'
// environments to its node's name (its state directory), so that several simulated nodes on one
// machine (tests run side by side) never see each other's processes on their GPUs, which share
// their UUIDs.
inline constexpr char kSimulatedNodeVar[] = "PINPOINT_SIMULATED_NODE";

// From the text of /proc/<pid>/environ: the bytes of PINPOINT_SIMULATED_GPU_MEM when the first
// UUID of CUDA_VISIBLE_DEVICES is `gpu_uuid` and the process names no other node than `node` in
// kSimulatedNodeVar (one that names none is every node's), else nullopt (MIG instances: not
// simulated).
std::optional<uint64_t> DeclaredGpuMem(const std::string& environ_text, const std::string& gpu_uuid,
                                       const std::string& node = "");

// Every live process's declaration for the GPU `gpu_uuid` of `node` (environ read as root, at
// most 256 KiB each), each program's environment read once: kept by pid, start time and where the
// kernel laid the environment out (an exec lays out a new one), so a node of many processes with
// large environments costs one stat a process a call, not a read of each environment. Thread-safe.
class DeclaredUsage {
 public:
  std::vector<GpuProcess> For(const std::string& gpu_uuid, const std::string& node);

 private:
  struct Program {
    std::string layout;   // start ticks and environment bounds, from /proc/<pid>/stat
    std::string environ;  // the declaring variables only ("" when it declares nothing)
  };
  std::mutex mu_;
  std::map<int64_t, Program> programs_;  // guarded by mu_
};

}  // namespace pinpoint::gpu
