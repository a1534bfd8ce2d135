// Test-side control of the fake NVML library (tests/fake_nvml/fake_nvml.cc): opens the same
// library NvmlBackend loads (dlopen returns the same instance) and calls its fake_nvml_* functions.
// Resets the fake on construction.
#pragma once

#include <dlfcn.h>

#include <string>

namespace pinpoint::gpu {

class FakeNvmlControl {
 public:
  explicit FakeNvmlControl(const std::string& path) : handle_(dlopen(path.c_str(), RTLD_NOW)) {
    if (handle_ == nullptr) return;
    reset_ = Find<void (*)()>("fake_nvml_Reset");
    init_refs_ = Find<int (*)()>("fake_nvml_InitRefs");
    set_device_count_ = Find<void (*)(unsigned int)>("fake_nvml_SetDeviceCount");
    set_lost_ = Find<void (*)(int, int)>("fake_nvml_SetLost");
    set_mps_clients_ = Find<void (*)(int)>("fake_nvml_SetMpsClients");
    process_queries_ = Find<int (*)()>("fake_nvml_ProcessQueries");
    fail_ci_creates_ = Find<void (*)(int)>("fake_nvml_FailComputeInstanceCreates");
    clear_mig_processes_ = Find<void (*)()>("fake_nvml_ClearMigProcesses");
    gpu_instance_count_ = Find<int (*)()>("fake_nvml_GpuInstanceCount");
    if (ok()) reset_();
  }
  ~FakeNvmlControl() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  FakeNvmlControl(const FakeNvmlControl&) = delete;
  FakeNvmlControl& operator=(const FakeNvmlControl&) = delete;

  bool ok() const {
    return reset_ && init_refs_ && set_device_count_ && set_lost_ && set_mps_clients_ &&
           process_queries_ && fail_ci_creates_ && clear_mig_processes_ && gpu_instance_count_;
  }
  int InitRefs() const { return init_refs_(); }
  void SetDeviceCount(unsigned int count) const { set_device_count_(count); }
  void SetLost(int gpu, bool lost) const { set_lost_(gpu, lost ? 1 : 0); }
  void SetMpsClients(int count) const { set_mps_clients_(count); }
  int ProcessQueries() const { return process_queries_(); }
  // GPU 1's MIG (fake_nvml_mig.cc).
  void FailComputeInstanceCreates(int count) const { fail_ci_creates_(count); }
  void ClearMigProcesses() const { clear_mig_processes_(); }
  int GpuInstanceCount() const { return gpu_instance_count_(); }

 private:
  template <typename Fn>
  Fn Find(const char* symbol) {
    return reinterpret_cast<Fn>(dlsym(handle_, symbol));
  }

  void* handle_;
  void (*reset_)() = nullptr;
  int (*init_refs_)() = nullptr;
  void (*set_device_count_)(unsigned int) = nullptr;
  void (*set_lost_)(int, int) = nullptr;
  void (*set_mps_clients_)(int) = nullptr;
  int (*process_queries_)() = nullptr;
  void (*fail_ci_creates_)(int) = nullptr;
  void (*clear_mig_processes_)() = nullptr;
  int (*gpu_instance_count_)() = nullptr;
};

}  // namespace pinpoint::gpu
