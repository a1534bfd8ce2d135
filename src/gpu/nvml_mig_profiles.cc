// NvmlBackend::MigProfiles (nvml_backend.h): read-only, whether or not MIG is enabled.
#include <cstring>
#include <string>

#include "gpu/nvml_backend.h"

namespace pinpoint::gpu {

Result<std::vector<MigProfileInfo>> NvmlBackend::MigProfiles(int index) {
  Result<nvml::Device> handle = Handle(index);
  if (!handle.ok()) return handle.status();
  if (api_.gpu_instance_profile_info == nullptr || api_.gpu_instance_placements == nullptr)
    return Unavailable("GPU " + std::to_string(index) +
                       ": the driver does not list MIG profiles (older than r470?)");
  std::vector<MigProfileInfo> out;
  for (unsigned int i = 0; i < nvml::kGpuInstanceProfileIndexLimit; ++i) {
    nvml::GpuInstanceProfileInfoV2 info{};
    info.version = nvml::kGpuInstanceProfileInfoV2;
    nvml::Return code = api_.gpu_instance_profile_info(*handle, i, &info);
    if (code == nvml::kErrorNotSupported || code == nvml::kErrorInvalidArgument ||
        code == nvml::kErrorNotFound)
      continue;
    if (code != nvml::kSuccess) return Error(index, "nvmlDeviceGetGpuInstanceProfileInfoV", code);
    MigProfileInfo p;
    std::string name(info.name, strnlen(info.name, sizeof(info.name)));
    if (name.rfind("MIG ", 0) == 0) name.erase(0, 4);
    p.name = name;
    p.profile_id = info.id;
    p.compute_slices = static_cast<int>(info.sliceCount);
    p.instance_count = static_cast<int>(info.instanceCount);
    p.mem_bytes = info.memorySizeMB << 20;
    p.sm_count = static_cast<int>(info.multiprocessorCount);
    nvml::GpuInstancePlacement placements[nvml::kGpuInstanceProfileIndexLimit] = {};
    unsigned int count = nvml::kGpuInstanceProfileIndexLimit;
    code = api_.gpu_instance_placements(*handle, info.id, placements, &count);
    if (code != nvml::kSuccess && !nvml::IsUnsupported(code))
      return Error(index, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", code);
    for (unsigned int k = 0;
         code == nvml::kSuccess && k < count && k < nvml::kGpuInstanceProfileIndexLimit; ++k)
      p.placements.push_back(
          {static_cast<int>(placements[k].start), static_cast<int>(placements[k].size)});
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace pinpoint::gpu
