// NVML's C interface, declared here by hand: the build and CI machines have no nvml.h and no
// libnvidia-ml. Only the entry points and structs pinpoint uses, with the names, signatures and
// layouts of NVIDIA's nvml.h (driver r510 and later, where the *_v3 process queries exist).
// Used by NvmlBackend and by the fake NVML library in tests/fake_nvml/. Only src/gpu/ and that fake
// may include this file.
#pragma once

#include <cstddef>

#include "pinpoint/status.h"

namespace pinpoint::gpu::nvml {

// nvmlReturn_t (a C enum: int-sized).
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorInUse = 19;
inline constexpr Return kErrorInsufficientResources = 23;
inline constexpr Return kErrorUnknown = 999;

// nvmlComputeMode_t values.
inline constexpr int kComputeModeDefault = 0;
inline constexpr int kComputeModeExclusiveThread = 1;
inline constexpr int kComputeModeProhibited = 2;
inline constexpr int kComputeModeExclusiveProcess = 3;

inline constexpr unsigned int kMigEnabled = 1;                   // NVML_DEVICE_MIG_ENABLE
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
inline constexpr unsigned int kUuidBufferSize = 96;              // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned int kNameBufferSize = 96;              // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned int kDriverVersionBufferSize =
    80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

// nvmlDevice_t: an opaque handle owned by the library.
struct DeviceOpaque;
using Device = DeviceOpaque*;

// nvmlEventSet_t: an opaque handle owned by the library.
struct EventSetOpaque;
using EventSet = EventSetOpaque*;
inline constexpr unsigned long long kEventTypeXidCriticalError =
    0x8;  // nvmlEventTypeXidCriticalError

// nvmlEventData_t as filled by nvmlEventSetWait_v2.
struct EventData {
  Device device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid number for kEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// nvmlMemory_t (the v1 struct taken by nvmlDeviceGetMemoryInfo), bytes.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlProcessInfo_t as filled by the *_v3 process queries.
struct ProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or kValueNotAvailable
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when not on a MIG instance
  unsigned int computeInstanceId;
};

// nvmlUtilization_t, percent over the last sample period.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2). NVML fills it for MIG device handles only.
struct DeviceAttributes {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;  // MiB
};

// nvmlGpuInstancePlacement_t: a placement's first memory slice and how many it covers.
struct GpuInstancePlacement {
  unsigned int start;
  unsigned int size;
};

// nvmlGpuInstanceProfileInfo_v2_t (nvmlDeviceGetGpuInstanceProfileInfoV), `version` set to
// kGpuInstanceProfileInfoV2 by the caller.
struct GpuInstanceProfileInfoV2 {
  unsigned int version;
  unsigned int id;  // the profile id the placement and create calls take
  unsigned int isP2pSupported;
  unsigned int sliceCount;  // compute slices ("1g")
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;  // MiB
  char name[kNameBufferSize];       // "MIG 1g.10gb"
};
// NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2).
inline constexpr unsigned int kGpuInstanceProfileInfoV2 =
    sizeof(GpuInstanceProfileInfoV2) | (2u << 24);
// The GPU instance profile indices NVML numbers 0 (NVML_GPU_INSTANCE_PROFILE_1_SLICE) upwards;
// an index a GPU lacks answers kErrorNotSupported or kErrorInvalidArgument.
inline constexpr unsigned int kGpuInstanceProfileIndexLimit = 16;

// nvmlGpuInstance_t, nvmlComputeInstance_t: opaque handles owned by the library.
struct GpuInstanceOpaque;
using GpuInstance = GpuInstanceOpaque*;
struct ComputeInstanceOpaque;
using ComputeInstance = ComputeInstanceOpaque*;

// nvmlGpuInstanceInfo_t (nvmlGpuInstanceGetInfo).
struct GpuInstanceInfo {
  Device device;  // the parent GPU
  unsigned int id;
  unsigned int profileId;
  GpuInstancePlacement placement;
};

// nvmlComputeInstanceProfileInfo_t (nvmlGpuInstanceGetComputeInstanceProfileInfo).
struct ComputeInstanceProfileInfo {
  unsigned int id;          // the profile id the create call takes
  unsigned int sliceCount;  // compute slices
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
};
// The compute instance profile indices (NVML_COMPUTE_INSTANCE_PROFILE_*) pinpoint looks through,
// and the engine profile it asks for (NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED).
inline constexpr unsigned int kComputeInstanceProfileIndexLimit = 16;
inline constexpr unsigned int kComputeInstanceEngineProfileShared = 0;
// The compute instances of one profile pinpoint reads from a GPU instance (NVML's instanceCount;
// 7 on an A100 or H100).
inline constexpr unsigned int kMaxComputeInstances = 16;

// The layouts must match nvml.h on x86-64 and aarch64 exactly.
static_assert(sizeof(Memory) == 24);
static_assert(sizeof(ProcessInfo) == 24 && offsetof(ProcessInfo, usedGpuMemory) == 8 &&
              offsetof(ProcessInfo, computeInstanceId) == 20);
static_assert(sizeof(Utilization) == 8);
static_assert(sizeof(EventData) == 32 && offsetof(EventData, gpuInstanceId) == 24);
static_assert(sizeof(DeviceAttributes) == 40 && offsetof(DeviceAttributes, memorySizeMB) == 32);
static_assert(sizeof(GpuInstancePlacement) == 8);
static_assert(sizeof(GpuInstanceInfo) == 24 && offsetof(GpuInstanceInfo, placement) == 16);
static_assert(sizeof(ComputeInstanceProfileInfo) == 36);
static_assert(sizeof(GpuInstanceProfileInfoV2) == 152 &&
              offsetof(GpuInstanceProfileInfoV2, memorySizeMB) == 48 &&
              offsetof(GpuInstanceProfileInfoV2, name) == 56);

// Entry point signatures, one per shape.
using InitFn = Return (*)();                                   // nvmlInit_v2, nvmlShutdown
using ErrorStringFn = const char* (*)(Return);                 // nvmlErrorString
using GetDriverVersionFn = Return (*)(char*, unsigned int);    // nvmlSystemGetDriverVersion
using GetCountFn = Return (*)(unsigned int*);                  // nvmlDeviceGetCount_v2
using GetHandleByIndexFn = Return (*)(unsigned int, Device*);  // nvmlDeviceGetHandleByIndex_v2
using GetStringFn = Return (*)(Device, char*, unsigned int);   // nvmlDeviceGetUUID, GetName
using GetMemoryInfoFn = Return (*)(Device, Memory*);           // nvmlDeviceGetMemoryInfo
using GetProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);  // *RunningProcesses_v3
using GetComputeModeFn = Return (*)(Device, int*);                       // nvmlDeviceGetComputeMode
using GetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);   // current, pending
using GetUintFn = Return (*)(Device, unsigned int*);  // MaxMigDeviceCount, Gpu/ComputeInstanceId,
                                                      // PowerUsage (mW), NumGpuCores
using GetMigHandleFn = Return (*)(Device, unsigned int, Device*);  // MigDeviceHandleByIndex
using GetAttributesFn = Return (*)(Device, DeviceAttributes*);     // nvmlDeviceGetAttributes_v2
using GetEnergyFn = Return (*)(Device, unsigned long long*);       // TotalEnergyConsumption (mJ)
using GetUtilizationFn = Return (*)(Device, Utilization*);         // nvmlDeviceGetUtilizationRates
using GetComputeCapabilityFn = Return (*)(Device, int*, int*);     // CudaComputeCapability
using EventSetCreateFn = Return (*)(EventSet*);                    // nvmlEventSetCreate
using EventSetFreeFn = Return (*)(EventSet);                       // nvmlEventSetFree
using RegisterEventsFn = Return (*)(Device, unsigned long long,
                                    EventSet);                          // nvmlDeviceRegisterEvents
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned int);  // nvmlEventSetWait_v2
using GetGiProfileInfoFn = Return (*)(Device, unsigned int,
                                      GpuInstanceProfileInfoV2*);  // ...ProfileInfoV
using GetGiPlacementsFn = Return (*)(Device, unsigned int, GpuInstancePlacement*,
                                     unsigned int*);  // ..._v2
// nvmlDeviceGetMemoryAffinity(device, nodeSetSize, nodeSet, scope): a bitmask of NUMA nodes.
using GetMemoryAffinityFn = Return (*)(Device, unsigned int, unsigned long*, unsigned int);
inline constexpr unsigned int kAffinityScopeNode = 0;  // NVML_AFFINITY_SCOPE_NODE
// Dynamic MIG.
using CreateGiFn = Return (*)(Device, unsigned int, const GpuInstancePlacement*,
                              GpuInstance*);  // ...CreateGpuInstanceWithPlacement
using GiByIdFn = Return (*)(Device, unsigned int, GpuInstance*);  // nvmlDeviceGetGpuInstanceById
using GiInfoFn = Return (*)(GpuInstance, GpuInstanceInfo*);       // nvmlGpuInstanceGetInfo
using GiDestroyFn = Return (*)(GpuInstance);                      // nvmlGpuInstanceDestroy
using CiProfileInfoFn =
    Return (*)(GpuInstance, unsigned int, unsigned int,
               ComputeInstanceProfileInfo*);  // ...GetComputeInstanceProfileInfo
using CreateCiFn = Return (*)(GpuInstance, unsigned int,
                              ComputeInstance*);  // ...CreateComputeInstance
using GetCisFn = Return (*)(GpuInstance, unsigned int, ComputeInstance*,
                            unsigned int*);       // nvmlGpuInstanceGetComputeInstances
using CiDestroyFn = Return (*)(ComputeInstance);  // nvmlComputeInstanceDestroy

// The entry points resolved from one loaded library. Optional members are null when the library
// lacks the symbol; the fields they feed then read as unsupported.
struct Api {
  // Required.
  InitFn init = nullptr;                 // nvmlInit_v2
  InitFn shutdown = nullptr;             // nvmlShutdown
  ErrorStringFn error_string = nullptr;  // nvmlErrorString
  GetDriverVersionFn driver_version = nullptr;
  GetCountFn device_count = nullptr;             // nvmlDeviceGetCount_v2
  GetHandleByIndexFn handle_by_index = nullptr;  // nvmlDeviceGetHandleByIndex_v2
  GetStringFn uuid = nullptr;
  GetStringFn name = nullptr;
  GetMemoryInfoFn memory_info = nullptr;
  GetProcessesFn compute_processes = nullptr;  // nvmlDeviceGetComputeRunningProcesses_v3
  // Optional.
  GetProcessesFn mps_processes = nullptr;  // nvmlDeviceGetMPSComputeRunningProcesses_v3
  GetComputeModeFn compute_mode = nullptr;
  GetMigModeFn mig_mode = nullptr;
  GetUintFn max_mig_device_count = nullptr;
  GetMigHandleFn mig_handle_by_index = nullptr;
  GetUintFn gpu_instance_id = nullptr;
  GetUintFn compute_instance_id = nullptr;
  GetAttributesFn attributes = nullptr;  // nvmlDeviceGetAttributes_v2
  GetUintFn power_usage = nullptr;
  GetEnergyFn total_energy = nullptr;
  GetUtilizationFn utilization = nullptr;
  GetUintFn num_gpu_cores = nullptr;
  GetComputeCapabilityFn compute_capability = nullptr;
  EventSetCreateFn event_set_create = nullptr;  // the four event calls: all or none are used
  EventSetFreeFn event_set_free = nullptr;
  RegisterEventsFn register_events = nullptr;
  EventSetWaitFn event_set_wait = nullptr;
  GetGiProfileInfoFn gpu_instance_profile_info = nullptr;  // nvmlDeviceGetGpuInstanceProfileInfoV
  GetGiPlacementsFn gpu_instance_placements = nullptr;     // ...GpuInstancePossiblePlacements_v2
  GetMemoryAffinityFn memory_affinity = nullptr;           // nvmlDeviceGetMemoryAffinity
  // Dynamic MIG (r470 and later): NvmlBackend makes and destroys instances only with all eight;
  // the first two also give an instance's placement.
  GiByIdFn gpu_instance_by_id = nullptr;
  GiInfoFn gpu_instance_info = nullptr;
  CreateGiFn create_gpu_instance = nullptr;
  GiDestroyFn destroy_gpu_instance = nullptr;
  CiProfileInfoFn compute_instance_profile_info = nullptr;
  CreateCiFn create_compute_instance = nullptr;
  GetCisFn compute_instances = nullptr;
  CiDestroyFn destroy_compute_instance = nullptr;
};

// Resolves the entry points from `dl_handle` (from dlopen) into *api. Errors: kUnavailable naming
// the first required symbol that is missing.
Status LoadApi(void* dl_handle, Api* api);

// True for the codes that mean "this device or driver cannot tell", which pinpoint reports as an
// unsupported field rather than an error.
bool IsUnsupported(Return code);

// CUDA cores per SM for a compute capability, or 0 when unknown. Lets NvmlBackend derive the SM
// count of a whole GPU, which nvmlDeviceGetAttributes_v2 does not report.
int CoresPerSm(int cc_major, int cc_minor);

}  // namespace pinpoint::gpu::nvml
