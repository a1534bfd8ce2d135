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
  std::string fallback_preset = "h100x2";   // what "auto" simulates on a machine with no GPU
  // Where "auto" looks for NVIDIA devices (FindNvidiaDevice): "/" on a real machine; tests lay
  // out a machine with or without a GPU in a directory.
  std::string device_root = "/";
};

// What NVML said when "auto" tried it.
enum class NvmlOutcome {
  kHasGpus,         // loaded, initialised, at least one GPU
  kInventoryFails,  // has GPUs, but reading one fails now (a lost GPU, say)
  kNoGpu,           // loaded and initialised, zero GPUs
  kUnavailable,     // dlopen, a symbol, nvmlInit or the device count failed
};
enum class AutoChoice { kNvml, kSimulated, kRefuse };

// The policy of "auto", pure: NVML whenever it has GPUs; otherwise a simulated node only on a
// machine with no NVIDIA device at all, and a refusal to start where one exists (its driver is
// broken: running jobs on made-up GPUs there would hide it).
AutoChoice ChooseAutoBackend(NvmlOutcome nvml, bool nvidia_device_present);

// `spec` is one of:
//   "auto"                   ChooseAutoBackend: NVML if it loads and reports at least one GPU
//                            (even if reading one fails now); else, on a machine with no NVIDIA
//                            device (FindNvidiaDevice(options.device_root)), the simulated
//                            fallback node (options.fallback_preset); else an error
//   "nvml"                   NVML, or its error
//   "simulated:<preset>"     SimulatedBackend::FromPreset
//   "simulated-file:<path>"  SimulatedBackend::FromFile
// On success, if `why` is not null it receives one line saying which backend and why, e.g.
// "no NVIDIA device on this machine: running a SIMULATED node h100x2 (NVML not available
// (libnvidia-ml.so.1: cannot open shared object file: No such file or directory))".
// Errors: kInvalidArgument with one line for a bad spec or unknown preset; for "nvml", kUnavailable
// from NvmlBackend::Create; for "auto" on a machine with an NVIDIA device whose NVML fails or
// reports no GPU, kUnavailable with one line naming the device, NVML's failure and the way out
// ("this machine has an NVIDIA device (/dev/nvidia0) but NVML not available (...): ...");
// for "simulated-file:", FromFile's errors.
Result<std::unique_ptr<GpuBackend>> MakeGpuBackend(const std::string& spec, std::string* why,
                                                   const GpuBackendOptions& options = {});

}  // namespace pinpoint::gpu
