#include "gpu/backend_factory.h"

#include <string_view>
#include <utility>

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

// "auto": NVML when it has a GPU; otherwise the fallback, with the reason NVML was passed over.
Result<std::unique_ptr<GpuBackend>> Auto(std::string* why, const GpuBackendOptions& options) {
  std::string reason;
  Result<std::unique_ptr<GpuBackend>> nvml = NvmlBackend::Create(options.nvml_library);
  if (!nvml.ok()) {
    std::string detail = nvml.status().message();
    if (detail.rfind(kNvmlUnavailablePrefix, 0) == 0)
      detail.erase(0, kNvmlUnavailablePrefix.size());
    reason = "NVML not available (" + detail + ")";
  } else {
    // A failing inventory still means NVML has GPUs (one is lost, say): a real node must not
    // quietly turn into a simulated one, so NVML is used and the failure is reported later.
    Result<std::vector<GpuInfo>> gpus = (*nvml)->Inventory();
    if (!gpus.ok() || !gpus->empty()) {
      Tell(why, gpus.ok()
                    ? Describe(**nvml, gpus->size())
                    : "using NVML, whose inventory fails now (" + gpus.status().message() + ")");
      return nvml;
    }
    reason = "NVML reports no GPU";
  }
  Result<std::unique_ptr<GpuBackend>> simulated = Simulated(options.fallback_preset);
  if (simulated.ok()) {
    Tell(why, "no NVIDIA GPU: " + reason + "; using simulated node " + options.fallback_preset);
  }
  return simulated;
}

}  // namespace

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
