// NvmlBackend's dynamic MIG (nvml_backend.h): making and destroying GPU and compute instances.
// Only on a GPU already in MIG mode: nothing here changes the MIG mode.
#include <algorithm>
#include <string>

#include "gpu/nvml_backend.h"

namespace pinpoint::gpu {

namespace {

bool HasInstanceCalls(const nvml::Api& api) {
  return api.gpu_instance_by_id != nullptr && api.gpu_instance_info != nullptr &&
         api.create_gpu_instance != nullptr && api.destroy_gpu_instance != nullptr &&
         api.compute_instance_profile_info != nullptr && api.create_compute_instance != nullptr &&
         api.compute_instances != nullptr && api.destroy_compute_instance != nullptr &&
         api.mig_mode != nullptr;
}

std::string Starts(const MigProfileInfo& p) {
  std::string out;
  for (const auto& at : p.placements) out += (out.empty() ? "" : ", ") + std::to_string(at.start);
  return out.empty() ? "nowhere" : out;
}

}  // namespace

int NvmlBackend::PlacementStart(nvml::Device device, uint32_t gpu_instance_id) const {
  if (api_.gpu_instance_by_id == nullptr || api_.gpu_instance_info == nullptr) return -1;
  nvml::GpuInstance gi = nullptr;
  nvml::GpuInstanceInfo info{};
  if (api_.gpu_instance_by_id(device, gpu_instance_id, &gi) != nvml::kSuccess ||
      api_.gpu_instance_info(gi, &info) != nvml::kSuccess)
    return -1;
  return static_cast<int>(info.placement.start);
}

Result<MigInfo> NvmlBackend::CreateMigInstance(int index, const std::string& profile, int start) {
  Result<nvml::Device> handle = Handle(index);
  if (!handle.ok()) return handle.status();
  std::string where = "GPU " + std::to_string(index);
  if (!HasInstanceCalls(api_))
    return Unavailable(where + ": the driver cannot make MIG instances (older than r470?)");
  unsigned int current = 0;
  unsigned int pending = 0;
  nvml::Return code = api_.mig_mode(*handle, &current, &pending);
  if (code != nvml::kSuccess && !nvml::IsUnsupported(code))
    return Error(index, "nvmlDeviceGetMigMode", code);
  if (code != nvml::kSuccess || current != nvml::kMigEnabled)
    return FailedPrecondition(where + ": MIG is disabled");
  Result<std::vector<MigProfileInfo>> profiles = MigProfiles(index);
  if (!profiles.ok()) return profiles.status();
  auto p = std::find_if(profiles->begin(), profiles->end(),
                        [&](const MigProfileInfo& i) { return i.name == profile; });
  if (p == profiles->end()) return NotFound(where + " has no MIG profile '" + profile + "'");
  auto at = std::find_if(p->placements.begin(), p->placements.end(),
                         [&](const MigProfileInfo::Placement& pl) { return pl.start == start; });
  if (at == p->placements.end())
    return FailedPrecondition(where + ": " + profile + " may start at memory slice " + Starts(*p) +
                              ", not " + std::to_string(start));
  nvml::GpuInstancePlacement placement{static_cast<unsigned int>(at->start),
                                       static_cast<unsigned int>(at->size)};
  nvml::GpuInstance gi = nullptr;
  code = api_.create_gpu_instance(*handle, p->profile_id, &placement, &gi);
  if (code == nvml::kErrorInsufficientResources)
    return FailedPrecondition(where + ": no room for " + profile + " at memory slice " +
                              std::to_string(start) +
                              ": an instance covers part of it, or no more " + profile + " fit");
  if (code == nvml::kErrorNoPermission)
    return Unavailable(where + ": making a MIG instance needs root (NVML: no permission)");
  if (code != nvml::kSuccess) return Error(index, "nvmlDeviceCreateGpuInstanceWithPlacement", code);
  nvml::GpuInstanceInfo info{};
  code = api_.gpu_instance_info(gi, &info);
  Status made = code == nvml::kSuccess ? CreateComputeInstance(index, gi, p->compute_slices)
                                       : Error(index, "nvmlGpuInstanceGetInfo", code);
  if (!made.ok()) {
    // Half way: the GPU instance goes again, so the layout is as it was.
    code = api_.destroy_gpu_instance(gi);
    if (code != nvml::kSuccess)
      return Unavailable(made.message() + "; destroying the new GPU instance failed too (" +
                         Error(index, "nvmlGpuInstanceDestroy", code).message() +
                         "): it stays, unused");
    return Unavailable(made.message() + "; the new GPU instance was destroyed");
  }
  std::vector<MigInfo> migs;
  PP_RETURN_IF_ERROR(ReadMigs(index, *handle, &migs));
  for (MigInfo& m : migs)
    if (m.gpu_instance_id == info.id) return m;
  return Unavailable(where + ": GPU instance " + std::to_string(info.id) +
                     " was made, but NVML lists no MIG device for it");
}

Result<std::vector<nvml::ComputeInstanceProfileInfo>> NvmlBackend::ComputeProfiles(
    int index, nvml::GpuInstance gi) const {
  std::vector<nvml::ComputeInstanceProfileInfo> out;
  for (unsigned int i = 0; i < nvml::kComputeInstanceProfileIndexLimit; ++i) {
    nvml::ComputeInstanceProfileInfo info{};
    nvml::Return code =
        api_.compute_instance_profile_info(gi, i, nvml::kComputeInstanceEngineProfileShared, &info);
    if (code == nvml::kErrorNotSupported || code == nvml::kErrorInvalidArgument ||
        code == nvml::kErrorNotFound)
      continue;
    if (code != nvml::kSuccess)
      return Error(index, "nvmlGpuInstanceGetComputeInstanceProfileInfo", code);
    out.push_back(info);
  }
  return out;
}

Status NvmlBackend::CreateComputeInstance(int index, nvml::GpuInstance gi,
                                          int compute_slices) const {
  Result<std::vector<nvml::ComputeInstanceProfileInfo>> profiles = ComputeProfiles(index, gi);
  if (!profiles.ok()) return profiles.status();
  for (const nvml::ComputeInstanceProfileInfo& info : *profiles) {
    if (static_cast<int>(info.sliceCount) != compute_slices) continue;
    nvml::ComputeInstance ci = nullptr;
    nvml::Return code = api_.create_compute_instance(gi, info.id, &ci);
    return code == nvml::kSuccess ? Status::Ok()
                                  : Error(index, "nvmlGpuInstanceCreateComputeInstance", code);
  }
  return Unavailable("GPU " + std::to_string(index) + ": no compute instance profile of " +
                     std::to_string(compute_slices) + " slices");
}

Status NvmlBackend::DestroyMigInstance(int index, uint32_t gpu_instance_id) {
  Result<nvml::Device> handle = Handle(index);
  if (!handle.ok()) return handle.status();
  std::string which =
      "GPU " + std::to_string(index) + " instance " + std::to_string(gpu_instance_id);
  if (!HasInstanceCalls(api_))
    return Unavailable("GPU " + std::to_string(index) +
                       ": the driver cannot destroy MIG instances (older than r470?)");
  nvml::GpuInstance gi = nullptr;
  nvml::Return code = api_.gpu_instance_by_id(*handle, gpu_instance_id, &gi);
  if (code == nvml::kErrorNotFound || code == nvml::kErrorInvalidArgument ||
      code == nvml::kErrorNotSupported)
    return NotFound("no MIG " + which);
  if (code != nvml::kSuccess) return Error(index, "nvmlDeviceGetGpuInstanceById", code);
  std::vector<GpuProcess> processes;
  PP_RETURN_IF_ERROR(ReadProcesses(index, *handle, &processes));
  for (const GpuProcess& proc : processes)
    if (proc.gpu_instance_id == gpu_instance_id)
      return FailedPrecondition("MIG " + which + " is in use by process " +
                                std::to_string(proc.pid) + ": not destroyed");
  PP_RETURN_IF_ERROR(DestroyComputeInstances(index, gi, which));
  code = api_.destroy_gpu_instance(gi);
  if (code == nvml::kErrorInUse)
    return FailedPrecondition("MIG " + which + " is in use: not destroyed");
  return code == nvml::kSuccess ? Status::Ok() : Error(index, "nvmlGpuInstanceDestroy", code);
}

Status NvmlBackend::DestroyComputeInstances(int index, nvml::GpuInstance gi,
                                            const std::string& which) const {
  Result<std::vector<nvml::ComputeInstanceProfileInfo>> profiles = ComputeProfiles(index, gi);
  if (!profiles.ok()) return profiles.status();
  for (const nvml::ComputeInstanceProfileInfo& info : *profiles) {
    if (info.instanceCount > nvml::kMaxComputeInstances)  // NVML fills up to instanceCount handles
      return Unavailable("GPU " + std::to_string(index) + ": a GPU instance with " +
                         std::to_string(info.instanceCount) +
                         " compute instances of a profile: more than pinpoint reads");
    nvml::ComputeInstance cis[nvml::kMaxComputeInstances] = {};
    unsigned int count = 0;
    nvml::Return code = api_.compute_instances(gi, info.id, cis, &count);
    if (code != nvml::kSuccess) return Error(index, "nvmlGpuInstanceGetComputeInstances", code);
    for (unsigned int k = 0; k < count && k < nvml::kMaxComputeInstances; ++k) {
      code = api_.destroy_compute_instance(cis[k]);
      if (code == nvml::kErrorInUse)
        return FailedPrecondition("MIG " + which + " is in use: not destroyed");
      if (code != nvml::kSuccess) return Error(index, "nvmlComputeInstanceDestroy", code);
    }
  }
  return Status::Ok();
}

}  // namespace pinpoint::gpu
