// NvmlBackend: the real GpuBackend, over NVIDIA's NVML loaded at run time with dlopen, so that
// pinpoint starts (and falls back) on a machine with no GPU and no driver.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/nvml_api.h"

namespace pinpoint::gpu {

inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// Thread-compatible (callers serialise calls on one instance; NVML itself is thread-safe, so
// separate instances may be used from separate threads). Not a singleton: each instance holds its
// own dlopen reference and NVML initialisation (NVML counts them), released by the destructor.
//
// Fields NVML cannot report on this device or driver (optional symbol missing, NOT_SUPPORTED,
// NO_PERMISSION) read as unsupported: power_mw 0, energy_mj 0, utilization_pct -1, sm_count 0,
// compute_mode kUnknown, MigInfo::profile "". Every other NVML failure is an error.
class NvmlBackend final : public GpuBackend {
 public:
  // Loads `library_path`, resolves the entry points and initialises NVML.
  // Errors: kUnavailable with one line "NVML not available: <why>" when the library cannot be
  // loaded, lacks a required symbol, or nvmlInit_v2 / the device count fails.
  static Result<std::unique_ptr<GpuBackend>> Create(const std::string& library_path = kNvmlLibrary);

  ~NvmlBackend() override;  // nvmlShutdown, then dlclose
  NvmlBackend(const NvmlBackend&) = delete;
  NvmlBackend& operator=(const NvmlBackend&) = delete;

  Source source() const override { return Source::kNvml; }
  std::string Kind() const override { return "nvml"; }
  std::string DriverVersion() const override { return driver_version_; }
  // SM count of a whole GPU comes from NVML's core count and the compute capability (NVML reports
  // multiprocessors for MIG instances only); 0 when either is unavailable, e.g. with MIG enabled.
  // Errors: kUnavailable naming the GPU and the NVML call that failed.
  Result<std::vector<GpuInfo>> Inventory() override;
  // Processes are those of the compute query and of the MPS query, merged by (pid, MIG instance);
  // mps_client is set for any the MPS query lists. Errors: kNotFound for an index outside
  // [0, device count); kUnavailable when an NVML call fails (a lost GPU included).
  Result<GpuSample> Sample(int index) override;
  // Through an NVML event set for critical Xid errors on every GPU, registered on the first call;
  // empty when the driver lacks events or no GPU supports them (logged once).
  Result<std::vector<XidEvent>> TakeXidEvents() override;
  // nvmlDeviceGetGpuInstanceProfileInfoV for each profile index, and each profile's possible
  // placements (nvml_mig_profiles.cc). Names lose NVML's "MIG " prefix. Empty on a GPU without
  // MIG (every index unsupported). Errors: kNotFound, kUnavailable when the driver lacks the calls
  // (before r470) or one fails.
  Result<std::vector<MigProfileInfo>> MigProfiles(int index) override;
  // Dynamic MIG (nvml_mig_instances.cc): nvmlDeviceCreateGpuInstanceWithPlacement, then one
  // compute instance of the profile index whose compute slices are all the GPU instance's; a
  // compute instance that fails destroys the GPU instance again. NVML's "no room"
  // (INSUFFICIENT_RESOURCES) is kFailedPrecondition; NO_PERMISSION (not root) is kUnavailable.
  // Errors as GpuBackend's, and kUnavailable when the driver lacks the calls.
  Result<MigInfo> CreateMigInstance(int index, const std::string& profile, int start) override;
  // Refuses (kFailedPrecondition) while NVML lists a process on the instance, before touching
  // anything; then destroys its compute instances and the GPU instance (NVML_ERROR_IN_USE:
  // kFailedPrecondition).
  Status DestroyMigInstance(int index, uint32_t gpu_instance_id) override;

 private:
  NvmlBackend(void* dl_handle, const nvml::Api& api, std::string driver_version, int device_count);

  // kUnavailable "GPU <index>: <call>: <NVML's error string>".
  Status Error(int index, const char* call, nvml::Return code) const;
  Result<nvml::Device> Handle(int index) const;
  Result<GpuInfo> ReadGpu(int index) const;
  Status ReadMigs(int index, nvml::Device device, std::vector<MigInfo>* migs) const;
  int PlacementStart(nvml::Device device, uint32_t gpu_instance_id) const;  // MigInfo's; -1 unknown
  // The compute instance profiles GPU instance `gi` offers (the shared engine profile).
  Result<std::vector<nvml::ComputeInstanceProfileInfo>> ComputeProfiles(int index,
                                                                        nvml::GpuInstance gi) const;
  Status CreateComputeInstance(int index, nvml::GpuInstance gi, int compute_slices) const;
  Status DestroyComputeInstances(int index, nvml::GpuInstance gi, const std::string& which) const;
  int NumaNode(nvml::Device device) const;  // GpuInfo::numa_node
  Status ReadProcesses(int index, nvml::Device device, std::vector<GpuProcess>* out) const;

  void* dl_handle_;
  nvml::Api api_;
  std::string driver_version_;
  int device_count_;
  nvml::EventSet xid_events_ = nullptr;
  bool xid_tried_ = false;
};

}  // namespace pinpoint::gpu
