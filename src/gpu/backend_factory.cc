#include "gpu/backend_factory.h"

#include <string_view>
#include <utility>

#include "gpu/device_probe.h"
#include "gpu/simulated_backend.h"

namespace pinpoint::gpu {

namespace {

constexpr std::string_view kSimulatedPrefix = "simulated:";
constexpr std::string_view kSimulatedFilePrefix = "simulated-file:";
constexpr std::string_view kNvmlUnavailablePrefix = "NVML not available: ";

void Tell(std::string* why, std::string line) {
  if (why != nullptr) *why = std::move(line);
}

std::string Describe(GpuBackend& backend, size_t gpu_count) {
  return "using NVML: " + std::to_string(gpu_count) + (gpu_count == 1 ? " GPU" : " GPUs") +
         ", driver " + backend.DriverVersion();
}

Result<std::unique_ptr<GpuBackend>> Simulated(const std::string& preset) {
  Result<std::unique_ptr<SimulatedBackend>> backend = SimulatedBackend::FromPreset(preset);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<GpuBackend>(std::move(backend).value());
}

// "auto": NVML when it has a GPU; otherwise the fallback on a machine without an NVIDIA device,
// and a refusal where one exists. Either says why NVML was passed over.
Result<std::unique_ptr<GpuBackend>> Auto(std::string* why, const GpuBackendOptions& options) {
  NvmlOutcome outcome = NvmlOutcome::kUnavailable;
  std::string reason;
  Result<std::unique_ptr<GpuBackend>> nvml = NvmlBackend::Create(options.nvml_library);
  Result<std::vector<GpuInfo>> gpus = std::vector<GpuInfo>{};
  if (!nvml.ok()) {
    std::string detail = nvml.status().message();
    if (detail.rfind(kNvmlUnavailablePrefix, 0) == 0)
      detail.erase(0, kNvmlUnavailablePrefix.size());
    reason = "NVML not available (" + detail + ")";
  } else {
    gpus = (*nvml)->Inventory();
    outcome = !gpus.ok()      ? NvmlOutcome::kInventoryFails
              : gpus->empty() ? NvmlOutcome::kNoGpu
                              : NvmlOutcome::kHasGpus;
    reason = "NVML reports no GPU";
  }
  // Only asked when NVML failed: a working NVML is the better witness.
  std::string device = outcome == NvmlOutcome::kHasGpus || outcome == NvmlOutcome::kInventoryFails
                           ? ""
                           : FindNvidiaDevice(options.device_root);
  switch (ChooseAutoBackend(outcome, !device.empty())) {
    case AutoChoice::kNvml:
      // A failing inventory still means NVML has GPUs (one is lost, say): the failure is reported
      // later.
      Tell(why, gpus.ok()
                    ? Describe(**nvml, gpus->size())
                    : "using NVML, whose inventory fails now (" + gpus.status().message() + ")");
      return nvml;
    case AutoChoice::kRefuse:
      return Unavailable("this machine has an NVIDIA device (" + device + ") but " + reason +
                         ": repair the driver until nvidia-smi works, or set backend to "
                         "simulated:<preset> to run a simulated node on purpose");
    case AutoChoice::kSimulated:
      break;
  }
  Result<std::unique_ptr<GpuBackend>> simulated = Simulated(options.fallback_preset);
  if (simulated.ok()) {
    Tell(why, "no NVIDIA device on this machine: running a SIMULATED node " +
                  options.fallback_preset + " (" + reason + ")");
  }
  return simulated;
}

}  // namespace

AutoChoice ChooseAutoBackend(NvmlOutcome nvml, bool nvidia_device_present) {
  switch (nvml) {
    case NvmlOutcome::kHasGpus:
    case NvmlOutcome::kInventoryFails:
      return AutoChoice::kNvml;
    case NvmlOutcome::kNoGpu:
    case NvmlOutcome::kUnavailable:
      break;
  }
  return nvidia_device_present ? AutoChoice::kRefuse : AutoChoice::kSimulated;
}

Result<std::unique_ptr<GpuBackend>> MakeGpuBackend(const std::string& spec, std::string* why,
                                                   const GpuBackendOptions& options) {
  if (spec == "auto") return Auto(why, options);
  if (spec == "nvml") {
    Result<std::unique_ptr<GpuBackend>> nvml = NvmlBackend::Create(options.nvml_library);
    if (!nvml.ok()) return nvml;
    Result<std::vector<GpuInfo>> gpus = (*nvml)->Inventory();
    Tell(why, gpus.ok() ? Describe(**nvml, gpus->size()) : "using NVML (as asked)");
    return nvml;
  }
  std::string_view view = spec;
  if (view.rfind(kSimulatedPrefix, 0) == 0) {
    std::string preset(view.substr(kSimulatedPrefix.size()));
    Result<std::unique_ptr<GpuBackend>> backend = Simulated(preset);
    if (backend.ok()) Tell(why, "using simulated node " + preset + " (as asked)");
    return backend;
  }
  if (view.rfind(kSimulatedFilePrefix, 0) == 0) {
    std::string path(view.substr(kSimulatedFilePrefix.size()));
    if (path.empty()) return InvalidArgument("GPU backend 'simulated-file:' needs a path");
    Result<std::unique_ptr<SimulatedBackend>> backend = SimulatedBackend::FromFile(path);
    if (!backend.ok()) return backend.status();
    Tell(why, "using simulated node from " + path + " (as asked)");
    return std::unique_ptr<GpuBackend>(std::move(backend).value());
  }
  return InvalidArgument("unknown GPU backend '" + spec +
                         "' (expected auto, nvml, simulated:<preset> or simulated-file:<path>; "
                         "presets: " +
                         SimulatedBackend::PresetList() + ")");
}

}  // namespace pinpoint::gpu
