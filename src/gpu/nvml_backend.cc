#include "gpu/nvml_backend.h"

#include <dlfcn.h>

#include <algorithm>
#include <utility>

#include "common/log.h"

namespace pinpoint::gpu {

namespace {

constexpr uint64_t kMiB = 1024ULL * 1024ULL;
// Enough for most GPUs in one call; the buffer grows when NVML says it is too small.
constexpr unsigned int kInitialProcessCapacity = 16;
// Processes can start between two calls, so growing is retried a few times.
constexpr int kProcessQueryAttempts = 5;

std::string ErrorText(const nvml::Api& api, nvml::Return code) {
  const char* text = api.error_string != nullptr ? api.error_string(code) : nullptr;
  return text != nullptr ? text : "NVML error " + std::to_string(code);
}

// Lists the processes `query` reports, growing the buffer on NVML_ERROR_INSUFFICIENT_SIZE.
nvml::Return QueryProcesses(nvml::GetProcessesFn query, nvml::Device device,
                            std::vector<nvml::ProcessInfo>* out) {
  unsigned int capacity = kInitialProcessCapacity;
  for (int attempt = 0; attempt < kProcessQueryAttempts; ++attempt) {
    out->assign(capacity, nvml::ProcessInfo{});
    unsigned int count = capacity;
    nvml::Return code = query(device, &count, out->data());
    if (code == nvml::kSuccess) {
      out->resize(std::min(count, capacity));
      return code;
    }
    if (code != nvml::kErrorInsufficientSize) return code;
    capacity = std::max(count, capacity) * 2;
  }
  return nvml::kErrorInsufficientSize;
}

void MergeProcess(const nvml::ProcessInfo& info, bool mps_client, std::vector<GpuProcess>* out) {
  uint64_t used_bytes = info.usedGpuMemory == nvml::kValueNotAvailable ? 0 : info.usedGpuMemory;
  for (GpuProcess& p : *out) {
    if (p.pid == info.pid && p.gpu_instance_id == info.gpuInstanceId &&
        p.compute_instance_id == info.computeInstanceId) {
      p.used_bytes = std::max(p.used_bytes, used_bytes);
      p.mps_client = p.mps_client || mps_client;
      return;
    }
  }
  GpuProcess p;
  p.pid = info.pid;
  p.used_bytes = used_bytes;
  p.mps_client = mps_client;
  p.gpu_instance_id = info.gpuInstanceId;
  p.compute_instance_id = info.computeInstanceId;
  out->push_back(p);
}

ComputeMode ToComputeMode(int mode) {
  switch (mode) {
    case nvml::kComputeModeDefault:
      return ComputeMode::kDefault;
    case nvml::kComputeModeExclusiveThread:
      return ComputeMode::kExclusiveThread;
    case nvml::kComputeModeProhibited:
      return ComputeMode::kProhibited;
    case nvml::kComputeModeExclusiveProcess:
      return ComputeMode::kExclusiveProcess;
    default:
      return ComputeMode::kUnknown;
  }
}

// NVML names a MIG device "<GPU name> MIG <profile>", e.g. "NVIDIA A100-SXM4-80GB MIG 1g.10gb".
std::string ProfileFromName(const std::string& name) {
  const std::string marker = " MIG ";
  size_t at = name.rfind(marker);
  return at == std::string::npos ? "" : name.substr(at + marker.size());
}

}  // namespace

Result<std::unique_ptr<GpuBackend>> NvmlBackend::Create(const std::string& library_path) {
  dlerror();
  void* dl_handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (dl_handle == nullptr) {
    const char* why = dlerror();
    return Unavailable("NVML not available: " +
                       (why != nullptr ? std::string(why) : library_path + ": cannot be loaded"));
  }
  nvml::Api api;
  if (Status s = nvml::LoadApi(dl_handle, &api); !s.ok()) {
    dlclose(dl_handle);
    return Unavailable("NVML not available: " + library_path + ": " + s.message());
  }
  if (nvml::Return code = api.init(); code != nvml::kSuccess) {
    std::string text = ErrorText(api, code);
    dlclose(dl_handle);
    return Unavailable("NVML not available: nvmlInit_v2 failed: " + text);
  }
  unsigned int count = 0;
  if (nvml::Return code = api.device_count(&count); code != nvml::kSuccess) {
    std::string text = ErrorText(api, code);
    api.shutdown();
    dlclose(dl_handle);
    return Unavailable("NVML not available: nvmlDeviceGetCount_v2 failed: " + text);
  }
  char version[nvml::kDriverVersionBufferSize] = {};
  std::string driver_version = "unknown";
  if (api.driver_version(version, sizeof(version)) == nvml::kSuccess) driver_version = version;
  return std::unique_ptr<GpuBackend>(
      new NvmlBackend(dl_handle, api, std::move(driver_version), static_cast<int>(count)));
}

NvmlBackend::NvmlBackend(void* dl_handle, const nvml::Api& api, std::string driver_version,
                         int device_count)
    : dl_handle_(dl_handle),
      api_(api),
      driver_version_(std::move(driver_version)),
      device_count_(device_count) {}

NvmlBackend::~NvmlBackend() {
  if (xid_events_ != nullptr) api_.event_set_free(xid_events_);
  api_.shutdown();
  dlclose(dl_handle_);
}

Status NvmlBackend::Error(int index, const char* call, nvml::Return code) const {
  return Unavailable("GPU " + std::to_string(index) + ": " + call + ": " + ErrorText(api_, code));
}

Result<nvml::Device> NvmlBackend::Handle(int index) const {
  if (index < 0 || index >= device_count_) {
    return NotFound("no GPU " + std::to_string(index) + " (this node has " +
                    std::to_string(device_count_) + ")");
  }
  nvml::Device device = nullptr;
  nvml::Return code = api_.handle_by_index(static_cast<unsigned int>(index), &device);
  if (code != nvml::kSuccess) return Error(index, "nvmlDeviceGetHandleByIndex_v2", code);
  return device;
}

Result<std::vector<GpuInfo>> NvmlBackend::Inventory() {
  std::vector<GpuInfo> gpus;
  for (int index = 0; index < device_count_; ++index) {
    Result<GpuInfo> gpu = ReadGpu(index);
    if (!gpu.ok()) return gpu.status();
    gpus.push_back(std::move(gpu).value());
  }
  return gpus;
}

Result<GpuInfo> NvmlBackend::ReadGpu(int index) const {
  Result<nvml::Device> handle = Handle(index);
  if (!handle.ok()) return handle.status();
  nvml::Device device = *handle;
  GpuInfo gpu;
  gpu.index = index;
  char text[nvml::kNameBufferSize] = {};
  nvml::Return code = api_.uuid(device, text, sizeof(text));
  if (code != nvml::kSuccess) return Error(index, "nvmlDeviceGetUUID", code);
  gpu.uuid = text;
  code = api_.name(device, text, sizeof(text));
  if (code != nvml::kSuccess) return Error(index, "nvmlDeviceGetName", code);
  gpu.name = text;
  nvml::Memory memory{};
  code = api_.memory_info(device, &memory);
  if (code == nvml::kSuccess) {
    gpu.mem_total_bytes = memory.total;
  } else if (!nvml::IsUnsupported(code)) {
    return Error(index, "nvmlDeviceGetMemoryInfo", code);
  }

  gpu.compute_mode = ComputeMode::kUnknown;
  int mode = 0;
  if (api_.compute_mode != nullptr && api_.compute_mode(device, &mode) == nvml::kSuccess) {
    gpu.compute_mode = ToComputeMode(mode);
  }
  unsigned int cores = 0;
  int cc_major = 0;
  int cc_minor = 0;
  if (api_.num_gpu_cores != nullptr && api_.compute_capability != nullptr &&
      api_.num_gpu_cores(device, &cores) == nvml::kSuccess &&
      api_.compute_capability(device, &cc_major, &cc_minor) == nvml::kSuccess) {
    int per_sm = nvml::CoresPerSm(cc_major, cc_minor);
    if (per_sm > 0 && cores % per_sm == 0) gpu.sm_count = static_cast<int>(cores) / per_sm;
  }
  unsigned int current = 0;
  unsigned int pending = 0;
  if (api_.mig_mode != nullptr && api_.mig_mode(device, &current, &pending) == nvml::kSuccess) {
    gpu.mig_enabled = current == nvml::kMigEnabled;
  }
  if (gpu.mig_enabled) PP_RETURN_IF_ERROR(ReadMigs(index, device, &gpu.migs));
  gpu.numa_node = NumaNode(device);
  return gpu;
}

int NvmlBackend::NumaNode(nvml::Device device) const {
  // The lowest NUMA node NVML calls ideal for the GPU's memory traffic; -1 when it cannot tell
  // (no such call, a machine without NUMA, or no node set).
  constexpr unsigned int kWords = 4;  // 256 nodes
  unsigned long nodes[kWords] = {};
  if (api_.memory_affinity == nullptr ||
      api_.memory_affinity(device, kWords, nodes, nvml::kAffinityScopeNode) != nvml::kSuccess) {
    return -1;
  }
  constexpr int kBits = static_cast<int>(sizeof(unsigned long)) * 8;
  for (unsigned int w = 0; w < kWords; ++w) {
    if (nodes[w] != 0) return static_cast<int>(w) * kBits + __builtin_ctzl(nodes[w]);
  }
  return -1;
}

Status NvmlBackend::ReadMigs(int index, nvml::Device device, std::vector<MigInfo>* migs) const {
  if (api_.max_mig_device_count == nullptr || api_.mig_handle_by_index == nullptr) {
    return Status::Ok();
  }
  unsigned int max_count = 0;
  nvml::Return code = api_.max_mig_device_count(device, &max_count);
  if (code != nvml::kSuccess) {
    return nvml::IsUnsupported(code) ? Status::Ok()
                                     : Error(index, "nvmlDeviceGetMaxMigDeviceCount", code);
  }
  for (unsigned int slot = 0; slot < max_count; ++slot) {
    nvml::Device mig = nullptr;
    code = api_.mig_handle_by_index(device, slot, &mig);
    if (code == nvml::kErrorNotFound) continue;  // an empty slot
    if (code != nvml::kSuccess) return Error(index, "nvmlDeviceGetMigDeviceHandleByIndex", code);
    MigInfo info;
    char text[nvml::kNameBufferSize] = {};
    code = api_.uuid(mig, text, sizeof(text));
    if (code != nvml::kSuccess) return Error(index, "nvmlDeviceGetUUID (MIG)", code);
    info.uuid = text;
    if (api_.name(mig, text, sizeof(text)) == nvml::kSuccess) info.profile = ProfileFromName(text);
    if (api_.gpu_instance_id != nullptr) api_.gpu_instance_id(mig, &info.gpu_instance_id);
    if (api_.compute_instance_id != nullptr) {
      api_.compute_instance_id(mig, &info.compute_instance_id);
    }
    info.placement_start = PlacementStart(device, info.gpu_instance_id);
    nvml::DeviceAttributes attributes{};
    bool have_attributes =
        api_.attributes != nullptr && api_.attributes(mig, &attributes) == nvml::kSuccess;
    if (have_attributes) info.sm_count = static_cast<int>(attributes.multiprocessorCount);
    nvml::Memory memory{};
    if (api_.memory_info(mig, &memory) == nvml::kSuccess) {
      info.mem_total_bytes = memory.total;
    } else if (have_attributes) {
      info.mem_total_bytes = attributes.memorySizeMB * kMiB;
    }
    migs->push_back(std::move(info));
  }
  return Status::Ok();
}

Result<GpuSample> NvmlBackend::Sample(int index) {
  Result<nvml::Device> handle = Handle(index);
  if (!handle.ok()) return handle.status();
  nvml::Device device = *handle;
  GpuSample sample;
  sample.index = index;
  nvml::Memory memory{};
  nvml::Return code = api_.memory_info(device, &memory);
  if (code == nvml::kSuccess) {
    sample.mem_used_bytes = memory.used;
  } else if (!nvml::IsUnsupported(code)) {
    return Error(index, "nvmlDeviceGetMemoryInfo", code);
  }
  if (api_.power_usage != nullptr) {
    unsigned int power_mw = 0;
    code = api_.power_usage(device, &power_mw);
    if (code == nvml::kSuccess) {
      sample.power_mw = power_mw;
    } else if (!nvml::IsUnsupported(code)) {
      return Error(index, "nvmlDeviceGetPowerUsage", code);
    }
  }
  if (api_.total_energy != nullptr) {
    unsigned long long energy_mj = 0;
    code = api_.total_energy(device, &energy_mj);
    if (code == nvml::kSuccess) {
      sample.energy_mj = energy_mj;
    } else if (!nvml::IsUnsupported(code)) {
      return Error(index, "nvmlDeviceGetTotalEnergyConsumption", code);
    }
  }
  if (api_.utilization != nullptr) {
    nvml::Utilization utilization{};
    code = api_.utilization(device, &utilization);
    if (code == nvml::kSuccess) {
      sample.utilization_pct = static_cast<int>(utilization.gpu);
    } else if (!nvml::IsUnsupported(code)) {
      return Error(index, "nvmlDeviceGetUtilizationRates", code);
    }
  }
  PP_RETURN_IF_ERROR(ReadProcesses(index, device, &sample.processes));
  return sample;
}

Status NvmlBackend::ReadProcesses(int index, nvml::Device device,
                                  std::vector<GpuProcess>* out) const {
  std::vector<nvml::ProcessInfo> infos;
  nvml::Return code = QueryProcesses(api_.compute_processes, device, &infos);
  if (code != nvml::kSuccess && !nvml::IsUnsupported(code)) {
    return Error(index, "nvmlDeviceGetComputeRunningProcesses_v3", code);
  }
  if (code == nvml::kSuccess) {
    for (const nvml::ProcessInfo& info : infos) MergeProcess(info, false, out);
  }
  if (api_.mps_processes != nullptr) {
    code = QueryProcesses(api_.mps_processes, device, &infos);
    if (code != nvml::kSuccess && !nvml::IsUnsupported(code)) {
      return Error(index, "nvmlDeviceGetMPSComputeRunningProcesses_v3", code);
    }
    if (code == nvml::kSuccess) {
      for (const nvml::ProcessInfo& info : infos) MergeProcess(info, true, out);
    }
  }
  std::sort(out->begin(), out->end(), [](const GpuProcess& a, const GpuProcess& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.gpu_instance_id < b.gpu_instance_id;
  });
  return Status::Ok();
}

Result<std::vector<XidEvent>> NvmlBackend::TakeXidEvents() {
  std::vector<XidEvent> out;
  if (!xid_tried_) {
    xid_tried_ = true;
    if (api_.event_set_create == nullptr || api_.event_set_free == nullptr ||
        api_.register_events == nullptr || api_.event_set_wait == nullptr) {
      log::Warn("NVML: this driver has no event API: MPS faults cannot be confirmed by Xid");
      return out;
    }
    if (nvml::Return code = api_.event_set_create(&xid_events_); code != nvml::kSuccess) {
      xid_events_ = nullptr;
      log::Warn("NVML: nvmlEventSetCreate: {}", ErrorText(api_, code));
      return out;
    }
    int registered = 0;
    for (int i = 0; i < device_count_; ++i) {
      auto device = Handle(i);
      if (!device.ok()) continue;
      nvml::Return code =
          api_.register_events(*device, nvml::kEventTypeXidCriticalError, xid_events_);
      if (code == nvml::kSuccess)
        ++registered;
      else
        log::Warn("NVML: GPU {}: Xid events: {}", i, ErrorText(api_, code));
    }
    if (registered == 0) {
      api_.event_set_free(xid_events_);
      xid_events_ = nullptr;
    }
  }
  if (xid_events_ == nullptr) return out;
  // Bounded: a storm of events is read over several polls.
  for (int n = 0; n < 256; ++n) {
    nvml::EventData data{};
    nvml::Return code = api_.event_set_wait(xid_events_, &data, 0);
    if (code == nvml::kErrorTimeout) break;
    if (code != nvml::kSuccess)
      return Unavailable("NVML: nvmlEventSetWait_v2: " + ErrorText(api_, code));
    if ((data.eventType & nvml::kEventTypeXidCriticalError) == 0) continue;
    for (int i = 0; i < device_count_; ++i) {
      auto device = Handle(i);
      if (device.ok() && *device == data.device) out.push_back({i, data.eventData});
    }
  }
  return out;
}

}  // namespace pinpoint::gpu
