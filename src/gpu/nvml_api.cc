#include "gpu/nvml_api.h"

#include <dlfcn.h>

#include <string>
#include <utility>

namespace pinpoint::gpu::nvml {

namespace {

template <typename Fn>
void Resolve(void* dl_handle, const char* symbol, Fn* slot) {
  *slot = reinterpret_cast<Fn>(dlsym(dl_handle, symbol));
}

}  // namespace

Status LoadApi(void* dl_handle, Api* api) {
  Api a;
  Resolve(dl_handle, "nvmlInit_v2", &a.init);
  Resolve(dl_handle, "nvmlShutdown", &a.shutdown);
  Resolve(dl_handle, "nvmlErrorString", &a.error_string);
  Resolve(dl_handle, "nvmlSystemGetDriverVersion", &a.driver_version);
  Resolve(dl_handle, "nvmlDeviceGetCount_v2", &a.device_count);
  Resolve(dl_handle, "nvmlDeviceGetHandleByIndex_v2", &a.handle_by_index);
  Resolve(dl_handle, "nvmlDeviceGetUUID", &a.uuid);
  Resolve(dl_handle, "nvmlDeviceGetName", &a.name);
  Resolve(dl_handle, "nvmlDeviceGetMemoryInfo", &a.memory_info);
  Resolve(dl_handle, "nvmlDeviceGetComputeRunningProcesses_v3", &a.compute_processes);

  Resolve(dl_handle, "nvmlEventSetCreate", &a.event_set_create);
  Resolve(dl_handle, "nvmlEventSetFree", &a.event_set_free);
  Resolve(dl_handle, "nvmlDeviceRegisterEvents", &a.register_events);
  Resolve(dl_handle, "nvmlEventSetWait_v2", &a.event_set_wait);

  const std::pair<const char*, const void*> required[] = {
      {"nvmlInit_v2", reinterpret_cast<const void*>(a.init)},
      {"nvmlShutdown", reinterpret_cast<const void*>(a.shutdown)},
      {"nvmlErrorString", reinterpret_cast<const void*>(a.error_string)},
      {"nvmlSystemGetDriverVersion", reinterpret_cast<const void*>(a.driver_version)},
      {"nvmlDeviceGetCount_v2", reinterpret_cast<const void*>(a.device_count)},
      {"nvmlDeviceGetHandleByIndex_v2", reinterpret_cast<const void*>(a.handle_by_index)},
      {"nvmlDeviceGetUUID", reinterpret_cast<const void*>(a.uuid)},
      {"nvmlDeviceGetName", reinterpret_cast<const void*>(a.name)},
      {"nvmlDeviceGetMemoryInfo", reinterpret_cast<const void*>(a.memory_info)},
      {"nvmlDeviceGetComputeRunningProcesses_v3",
       reinterpret_cast<const void*>(a.compute_processes)},
  };
  for (const auto& [symbol, fn] : required) {
    if (fn == nullptr) {
      return Unavailable(std::string("the library lacks ") + symbol + " (driver older than r510?)");
    }
  }

  Resolve(dl_handle, "nvmlDeviceGetMPSComputeRunningProcesses_v3", &a.mps_processes);
  Resolve(dl_handle, "nvmlDeviceGetComputeMode", &a.compute_mode);
  Resolve(dl_handle, "nvmlDeviceGetMigMode", &a.mig_mode);
  Resolve(dl_handle, "nvmlDeviceGetMaxMigDeviceCount", &a.max_mig_device_count);
  Resolve(dl_handle, "nvmlDeviceGetMigDeviceHandleByIndex", &a.mig_handle_by_index);
  Resolve(dl_handle, "nvmlDeviceGetGpuInstanceId", &a.gpu_instance_id);
  Resolve(dl_handle, "nvmlDeviceGetComputeInstanceId", &a.compute_instance_id);
  Resolve(dl_handle, "nvmlDeviceGetAttributes_v2", &a.attributes);
  Resolve(dl_handle, "nvmlDeviceGetPowerUsage", &a.power_usage);
  Resolve(dl_handle, "nvmlDeviceGetTotalEnergyConsumption", &a.total_energy);
  Resolve(dl_handle, "nvmlDeviceGetUtilizationRates", &a.utilization);
  Resolve(dl_handle, "nvmlDeviceGetNumGpuCores", &a.num_gpu_cores);
  Resolve(dl_handle, "nvmlDeviceGetCudaComputeCapability", &a.compute_capability);
  Resolve(dl_handle, "nvmlDeviceGetGpuInstanceProfileInfoV", &a.gpu_instance_profile_info);
  Resolve(dl_handle, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", &a.gpu_instance_placements);
  Resolve(dl_handle, "nvmlDeviceGetMemoryAffinity", &a.memory_affinity);
  Resolve(dl_handle, "nvmlDeviceGetGpuInstanceById", &a.gpu_instance_by_id);
  Resolve(dl_handle, "nvmlGpuInstanceGetInfo", &a.gpu_instance_info);
  Resolve(dl_handle, "nvmlDeviceCreateGpuInstanceWithPlacement", &a.create_gpu_instance);
  Resolve(dl_handle, "nvmlGpuInstanceDestroy", &a.destroy_gpu_instance);
  Resolve(dl_handle, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
          &a.compute_instance_profile_info);
  Resolve(dl_handle, "nvmlGpuInstanceCreateComputeInstance", &a.create_compute_instance);
  Resolve(dl_handle, "nvmlGpuInstanceGetComputeInstances", &a.compute_instances);
  Resolve(dl_handle, "nvmlComputeInstanceDestroy", &a.destroy_compute_instance);
  *api = a;
  return Status::Ok();
}

bool IsUnsupported(Return code) {
  return code == kErrorNotSupported || code == kErrorFunctionNotFound || code == kErrorNoPermission;
}

int CoresPerSm(int cc_major, int cc_minor) {
  // CUDA cores per SM by architecture, as in NVIDIA's CUDA samples (helper_cuda.h).
  switch (cc_major) {
    case 3:
      return 192;  // Kepler
    case 5:
      return 128;  // Maxwell
    case 6:
      return cc_minor == 0 ? 64 : 128;  // Pascal: GP100 vs GP10x
    case 7:
      return 64;  // Volta, Turing
    case 8:
      return cc_minor == 0 ? 64 : 128;  // Ampere: GA100 vs GA10x, Ada
    case 9:
    case 10:
    case 11:
    case 12:
      return 128;  // Hopper, Blackwell
    default:
      return 0;
  }
}

}  // namespace pinpoint::gpu::nvml
