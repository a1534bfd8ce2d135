// Simulated device memory declared by live processes (SimulatedBackend::SetDeclaredUsageFromProc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

// From the text of /proc/<pid>/environ: the bytes of PINPOINT_SIMULATED_GPU_MEM when the first
// UUID of CUDA_VISIBLE_DEVICES is `gpu_uuid`, else nullopt (MIG instances: not simulated).
std::optional<uint64_t> DeclaredGpuMem(const std::string& environ_text, const std::string& gpu_uuid);

// Every live process's declaration for the GPU `gpu_uuid` (environ read as root, at most 256 KiB
// each).
std::vector<GpuProcess> DeclaredGpuProcesses(const std::string& gpu_uuid);

}  // namespace pinpoint::gpu
