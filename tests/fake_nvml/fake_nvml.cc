// A fake libnvidia-ml for CI, which has no GPU and no NVML: the same C entry points that
// NvmlBackend loads, answering from a canned machine, so the real dlopen/dlsym code runs in tests.
//
// The machine:
//   GPU 0  "NVIDIA H100 80GB HBM3", no MIG (MIG queries NOT_SUPPORTED), exclusive-process mode,
//          compute capability 9.0 with 16896 cores (132 SMs), 350 W, an energy counter that starts
//          at 5,000,000 mJ and rises 1,500 mJ per read. Processes: compute pids 1000 (2 GiB) and
//          1001 (32 MiB); MPS pids 1000 (1 GiB) and 3000.. (512 MiB each, 3 by default). Its
//          memory affinity is NUMA node 65 (the second word of the node mask).
//   GPU 1  "NVIDIA A100-SXM4-80GB", MIG enabled, 7 MIG slots: slot 0 = 3g.40gb (GI 2 at memory
//          slice 4, 42 SMs), slot 2 = 1g.10gb (GI 9 at slice 0, 14 SMs, memory only through
//          nvmlDeviceGetAttributes_v2), others empty. Power, energy, core count and memory affinity
//          NOT_SUPPORTED. Compute pids 4000 (GI 2, 1 GiB) and 4001 (GI 9, memory not available).
//          Its GPU and compute instances can be made and destroyed by NVML's rules
//          (fake_nvml_mig.cc).
// Both GPUs list the GA100/GH100 GPU instance profiles and their placements (NVML lists them
// whether or not MIG is enabled): profile indices 0-4, 7 and 9, ids and placements as NVIDIA's
// drivers give them (1g.10gb id 19 at slices 0-6; 1g.20gb id 15 at 0, 2, 4, 6; 2g.20gb id 14 at 0,
// 2, 4; 3g.40gb id 9 at 0, 4; 4g.40gb id 5 and 7g.80gb id 0 at 0).
// nvmlDeviceGetUtilizationRates is deliberately not exported (an optional symbol missing).
// nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED when FAKE_NVML_INIT_FAIL=1. With
// FAKE_NVML_INIT_THREAD=1 it starts, once per process, a thread that sleeps, as the real NVML
// starts threads of its own: they inherit the caller's signal mask, so a process-wide signal the
// caller had not blocked yet can land in them.
//
// Like the real NVML, the state is per process (static). Tests script it through the fake_nvml_*
// functions, found with dlsym on the same library, and call fake_nvml_Reset() first.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

#include "fake_nvml/fake_nvml_state.h"

namespace fake_nvml {

FakeDevice g_devices[2] = {
    {0, false, "GPU-fa4e0000-0000-4000-8000-000000000000", "NVIDIA H100 80GB HBM3", 81559 * kMiB,
     true, kNoInstance, 0},
    {1, false, "GPU-fa4e0000-0001-4000-8000-000000000000", "NVIDIA A100-SXM4-80GB", 81920 * kMiB,
     true, kNoInstance, 0},
};

State FreshState() {
  State state;
  FakeMig& three = state.migs[0];
  three.used = three.has_ci = true;
  three.profile_id = 9;  // 3g.40gb
  three.start = 4;
  three.device = {1,
                  true,
                  "MIG-fa4e0000-0001-0000-8000-000000000000",
                  "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
                  40448 * kMiB,
                  true,
                  2,
                  42};
  FakeMig& one = state.migs[2];
  one.used = one.has_ci = true;
  one.profile_id = 19;  // 1g.10gb
  one.start = 0;
  one.device = {1,
                true,
                "MIG-fa4e0000-0001-0002-8000-000000000000",
                "NVIDIA A100-SXM4-80GB MIG 1g.10gb",
                9984 * kMiB,
                false,
                9,
                14};
  state.mig_processes = {{4000, kGiB, 2, 0}, {4001, kValueNotAvailable, 9, 0}};
  return state;
}
State g_state = FreshState();

Return Check(Device h) {
  if (g_state.init_refs <= 0) return kErrorUninitialized;
  if (h == nullptr) return kErrorInvalidArgument;
  return g_state.lost[FromHandle(h)->gpu] ? kErrorGpuIsLost : kSuccess;
}

}  // namespace fake_nvml

using namespace fake_nvml;  // NOLINT(google-build-using-namespace): a C shim

namespace {

Return CopyString(const char* text, char* out, unsigned int length) {
  if (out == nullptr || std::strlen(text) + 1 > length) return kErrorInsufficientSize;
  std::strcpy(out, text);
  return kSuccess;
}

Return ReportProcesses(const std::vector<ProcessInfo>& list, unsigned int* count,
                       ProcessInfo* infos) {
  ++g_state.process_queries;
  if (count == nullptr) return kErrorInvalidArgument;
  if (*count < list.size()) {
    *count = static_cast<unsigned int>(list.size());
    return kErrorInsufficientSize;
  }
  for (size_t i = 0; i < list.size(); ++i) infos[i] = list[i];
  *count = static_cast<unsigned int>(list.size());
  return kSuccess;
}

}  // namespace

extern "C" {

// ---- Control functions for tests (not NVML). ----
void fake_nvml_Reset() { g_state = FreshState(); }
int fake_nvml_InitRefs() { return g_state.init_refs; }
void fake_nvml_SetDeviceCount(unsigned int count) { g_state.device_count = count < 2 ? count : 2; }
void fake_nvml_SetLost(int gpu, int lost) {
  if (gpu >= 0 && gpu < 2) g_state.lost[gpu] = lost != 0;
}
void fake_nvml_SetMpsClients(int count) { g_state.mps_clients = count; }
int fake_nvml_ProcessQueries() { return g_state.process_queries; }

// ---- NVML. ----
Return nvmlInit_v2() {
  const char* fail = std::getenv("FAKE_NVML_INIT_FAIL");
  if (fail != nullptr && std::strcmp(fail, "1") == 0) return kErrorDriverNotLoaded;
  const char* thread = std::getenv("FAKE_NVML_INIT_THREAD");
  static bool thread_started = false;
  if (thread != nullptr && std::strcmp(thread, "1") == 0 && !thread_started) {
    thread_started = true;
    std::thread([] {
      for (;;) ::pause();
    }).detach();
  }
  ++g_state.init_refs;
  return kSuccess;
}

Return nvmlShutdown() {
  if (g_state.init_refs <= 0) return kErrorUninitialized;
  --g_state.init_refs;
  return kSuccess;
}

const char* nvmlErrorString(Return code) {
  switch (code) {
    case kSuccess:
      return "Success";
    case kErrorUninitialized:
      return "Uninitialized";
    case kErrorInvalidArgument:
      return "Invalid Argument";
    case kErrorNotSupported:
      return "Not Supported";
    case kErrorNotFound:
      return "Not Found";
    case kErrorInsufficientSize:
      return "Insufficient Size";
    case kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case kErrorGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

Return nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (g_state.init_refs <= 0) return kErrorUninitialized;
  return CopyString("580.0-fake", version, length);
}

Return nvmlDeviceGetCount_v2(unsigned int* count) {
  if (g_state.init_refs <= 0) return kErrorUninitialized;
  *count = g_state.device_count;
  return kSuccess;
}

Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, Device* device) {
  if (g_state.init_refs <= 0) return kErrorUninitialized;
  if (index >= g_state.device_count) return kErrorInvalidArgument;
  *device = ToHandle(&g_devices[index]);
  return kSuccess;
}

Return nvmlDeviceGetUUID(Device h, char* uuid, unsigned int length) {
  if (Return r = Check(h); r != kSuccess) return r;
  return CopyString(FromHandle(h)->uuid.c_str(), uuid, length);
}

Return nvmlDeviceGetName(Device h, char* name, unsigned int length) {
  if (Return r = Check(h); r != kSuccess) return r;
  return CopyString(FromHandle(h)->name.c_str(), name, length);
}

Return nvmlDeviceGetMemoryInfo(Device h, Memory* memory) {
  if (Return r = Check(h); r != kSuccess) return r;
  const FakeDevice* d = FromHandle(h);
  if (!d->mem_supported) return kErrorNotSupported;
  unsigned long long used = d->gpu == 0 && !d->is_mig ? 3 * kGiB : kGiB;
  *memory = Memory{d->mem_total_bytes, d->mem_total_bytes - used, used};
  return kSuccess;
}

Return nvmlDeviceGetComputeRunningProcesses_v3(Device h, unsigned int* count, ProcessInfo* infos) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu == 0) {
    return ReportProcesses(
        {{1000, 2 * kGiB, kNoInstance, kNoInstance}, {1001, 32 * kMiB, kNoInstance, kNoInstance}},
        count, infos);
  }
  return ReportProcesses(g_state.mig_processes, count, infos);
}

Return nvmlDeviceGetMPSComputeRunningProcesses_v3(Device h, unsigned int* count,
                                                  ProcessInfo* infos) {
  if (Return r = Check(h); r != kSuccess) return r;
  std::vector<ProcessInfo> list;
  if (FromHandle(h)->gpu == 0) {
    list.push_back({1000, kGiB, kNoInstance, kNoInstance});
    for (int i = 0; i < g_state.mps_clients; ++i) {
      list.push_back({3000u + i, 512 * kMiB, kNoInstance, kNoInstance});
    }
  }
  return ReportProcesses(list, count, infos);
}

Return nvmlDeviceGetComputeMode(Device h, int* mode) {
  if (Return r = Check(h); r != kSuccess) return r;
  *mode = FromHandle(h)->gpu == 0 ? kComputeModeExclusiveProcess : kComputeModeDefault;
  return kSuccess;
}

Return nvmlDeviceGetMigMode(Device h, unsigned int* current, unsigned int* pending) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu == 0) return kErrorNotSupported;
  *current = *pending = kMigEnabled;
  return kSuccess;
}

Return nvmlDeviceGetMaxMigDeviceCount(Device h, unsigned int* count) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu == 0) return kErrorNotSupported;
  *count = 7;
  return kSuccess;
}

Return nvmlDeviceGetMigDeviceHandleByIndex(Device h, unsigned int index, Device* mig) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu == 0) return kErrorNotSupported;
  if (index >= kMigSlots) return kErrorInvalidArgument;
  FakeMig& slot = g_state.migs[index];
  if (!slot.used || !slot.has_ci) return kErrorNotFound;
  *mig = ToHandle(&slot.device);
  return kSuccess;
}

Return nvmlDeviceGetGpuInstanceId(Device h, unsigned int* id) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (!FromHandle(h)->is_mig) return kErrorNotSupported;
  *id = FromHandle(h)->gpu_instance_id;
  return kSuccess;
}

Return nvmlDeviceGetComputeInstanceId(Device h, unsigned int* id) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (!FromHandle(h)->is_mig) return kErrorNotSupported;
  *id = 0;
  return kSuccess;
}

Return nvmlDeviceGetAttributes_v2(Device h, DeviceAttributes* attributes) {
  if (Return r = Check(h); r != kSuccess) return r;
  const FakeDevice* d = FromHandle(h);
  if (!d->is_mig) return kErrorNotSupported;  // as NVML: MIG device handles only
  *attributes = DeviceAttributes{};
  attributes->multiprocessorCount = d->sm_count;
  attributes->memorySizeMB = d->mem_total_bytes / kMiB;
  return kSuccess;
}

Return nvmlDeviceGetPowerUsage(Device h, unsigned int* power_mw) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu != 0) return kErrorNotSupported;
  *power_mw = 350000;
  return kSuccess;
}

Return nvmlDeviceGetTotalEnergyConsumption(Device h, unsigned long long* energy_mj) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu != 0) return kErrorNotSupported;
  *energy_mj = g_state.energy_mj;
  g_state.energy_mj += 1500;
  return kSuccess;
}

Return nvmlDeviceGetMemoryAffinity(Device h, unsigned int node_set_size, unsigned long* node_set,
                                   unsigned int scope) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu != 0 || scope != 0) return kErrorNotSupported;
  if (node_set_size < 2) return kErrorInsufficientSize;
  for (unsigned int i = 0; i < node_set_size; ++i) node_set[i] = 0;
  node_set[1] = 0x2;  // node 65
  return kSuccess;
}

Return nvmlDeviceGetNumGpuCores(Device h, unsigned int* cores) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu != 0) return kErrorNotSupported;  // as NVML on MIG-enabled GPUs
  *cores = 16896;
  return kSuccess;
}

Return nvmlDeviceGetCudaComputeCapability(Device h, int* major, int* minor) {
  if (Return r = Check(h); r != kSuccess) return r;
  *major = FromHandle(h)->gpu == 0 ? 9 : 8;
  *minor = 0;
  return kSuccess;
}

}  // extern "C"

// The fake's entry points must have exactly the signatures NvmlBackend declares.
static_assert(std::is_same_v<decltype(&nvmlInit_v2), InitFn>);
static_assert(std::is_same_v<decltype(&nvmlErrorString), ErrorStringFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetHandleByIndex_v2), GetHandleByIndexFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetUUID), GetStringFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMemoryInfo), GetMemoryInfoFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetComputeRunningProcesses_v3), GetProcessesFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMigMode), GetMigModeFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMigDeviceHandleByIndex), GetMigHandleFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetAttributes_v2), GetAttributesFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTotalEnergyConsumption), GetEnergyFn>);
static_assert(
    std::is_same_v<decltype(&nvmlDeviceGetCudaComputeCapability), GetComputeCapabilityFn>);
