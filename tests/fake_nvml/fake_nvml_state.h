// Internal to the fake NVML library (fake_nvml.cc, fake_nvml_mig.cc): its canned machine and the
// per-process state tests script through the fake_nvml_* functions.
#pragma once

#include <string>
#include <vector>

#include "gpu/nvml_api.h"

namespace fake_nvml {

using namespace pinpoint::gpu::nvml;  // NOLINT(google-build-using-namespace): a C shim

inline constexpr unsigned long long kMiB = 1024ULL * 1024ULL;
inline constexpr unsigned long long kGiB = 1024ULL * kMiB;
inline constexpr unsigned int kNoInstance = 0xFFFFFFFF;

struct FakeDevice {
  int gpu;  // the physical GPU (the parent, for a MIG device)
  bool is_mig;
  std::string uuid;
  std::string name;
  unsigned long long mem_total_bytes;
  bool mem_supported;
  unsigned int gpu_instance_id;
  unsigned int sm_count;
};

// One GPU instance profile of GPU 1's GA100 (both GPUs list them, as NVML does).
struct GiProfile {
  unsigned int index;  // NVML's profile index (NVML_GPU_INSTANCE_PROFILE_*)
  unsigned int id;     // the id the placement and create calls take
  const char* name;
  unsigned int slices;  // compute slices
  unsigned int count;   // instances that fit
  unsigned int sms;
  unsigned long long mem_mib;
  unsigned int size;  // memory slices one instance covers
  std::vector<unsigned int> starts;
};
const std::vector<GiProfile>& GiProfiles();
const GiProfile* GiProfileById(unsigned int id);

// A GPU instance of GPU 1, with at most one compute instance over all of it: its MIG device is
// listed (nvmlDeviceGetMigDeviceHandleByIndex) only while the compute instance exists. The slot's
// address is the GPU instance's and the compute instance's handle.
struct FakeMig {
  bool used = false;
  bool has_ci = false;
  unsigned int profile_id = 0;
  unsigned int start = 0;
  FakeDevice device{1, true, "", "", 0, true, 0, 0};
};
inline constexpr unsigned int kMigSlots = 7;

struct State {
  int init_refs = 0;
  unsigned int device_count = 2;
  bool lost[2] = {false, false};
  unsigned long long energy_mj = 5'000'000;
  int mps_clients = 3;
  int process_queries = 0;
  FakeMig migs[kMigSlots];
  std::vector<ProcessInfo> mig_processes;  // GPU 1's compute processes
  int failing_ci_creates = 0;
  unsigned int next_uuid = 0x10;  // the next new MIG device's UUID
};
extern State g_state;
extern FakeDevice g_devices[2];
State FreshState();  // GPU 1 with its two instances and their processes

inline Device ToHandle(FakeDevice* d) { return reinterpret_cast<Device>(d); }
inline FakeDevice* FromHandle(Device h) { return reinterpret_cast<FakeDevice*>(h); }
// The common checks of every device call: NVML initialised, a known handle, the GPU not lost.
Return Check(Device h);

}  // namespace fake_nvml
