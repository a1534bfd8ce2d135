// MakeGpuBackend: the one place that turns a backend spec (a daemon flag or config value) into a
// GpuBackend.
#pragma once

#include <memory>
#include <string>

#include "gpu/gpu_backend.h"
#include "gpu/nvml_backend.h"

namespace pinpoint::gpu {

struct GpuBackendOptions {
  std::string nvml_library = kNvmlLibrary;  // what "auto" and "nvml" load
  std::string fallback_preset = "h100x2";   // what "auto" simulates when NVML has no GPU
};

// `spec` is one of:
//   "auto"                   NVML if it loads and reports at least one GPU (even if reading
//                            one fails now), else the simulated fallback node
//                            (options.fallback_preset)
//   "nvml"                   NVML, or its error
//   "simulated:<preset>"     SimulatedBackend::FromPreset
//   "simulated-file:<path>"  SimulatedBackend::FromFile
// On success, if `why` is not null it receives one line saying which backend and why, e.g.
// "no NVIDIA GPU: NVML not available (libnvidia-ml.so.1: cannot open shared object file: No such
// file or directory); using simulated node h100x2".
// Errors: kInvalidArgument with one line for a bad spec or unknown preset; for "nvml", kUnavailable
// from NvmlBackend::Create; for "simulated-file:", FromFile's errors.
Result<std::unique_ptr<GpuBackend>> MakeGpuBackend(const std::string& spec, std::string* why,
                                                   const GpuBackendOptions& options = {});

}  // namespace pinpoint::gpu
