// SimulatedBackend: named fake machines (and small JSON-described ones) for tests, the demo and the
// labelled simulated node a daemon runs on when a machine has no NVIDIA GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "gpu/declared_usage.h"
#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

// Everything is deterministic: UUIDs derive from the preset name and indices
// ("GPU-<hash>-0001-...", "MIG-<hash>-0001-0002-..."), memory in use is the sum of the scripted
// processes, energy moves only when scripted. State is per instance, never static.
//
// Thread-safe: the scripting calls may run on a test's thread while a daemon samples on another.
class SimulatedBackend final : public GpuBackend {
 public:
  // A named machine:
  //   h100x2      2x "NVIDIA H100 80GB HBM3", 81559 MiB, 132 SMs
  //   a100x8      8x "NVIDIA A100-SXM4-80GB", 81920 MiB, 108 SMs
  //   a100x8-mig  as a100x8, with MIG on GPU 0 (3g.40gb + 2x 2g.20gb) and GPU 1 (7x 1g.10gb)
  //   v100sx8     8x "Tesla V100S-PCIE-32GB", 32 GiB, 80 SMs
  // Errors: kInvalidArgument "unknown simulated node 'x' (known: h100x2, ...)".
  static Result<std::unique_ptr<SimulatedBackend>> FromPreset(const std::string& preset);

  // A machine described by JSON:
  //   {"gpus": [{"name": "...", "mem": "80G" | <bytes>, "sm_count": 132,
  //              "compute_mode": "default" | "exclusive_process" | ...,
  //              "mig": [{"profile": "1g.10gb", "mem": ..., "sm_count": ...}]}]}
  // "mem" of a GPU is required; "name" defaults to "Simulated GPU", "sm_count" to 0 (unknown).
  // A MIG entry needs "profile"; its "mem" and "sm_count" default from the A100-80GB profiles
  // (1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb); for any other profile "mem" is
  // required and "sm_count" defaults to 0. Instances get GPU instance ids 1, 2, ... on each GPU.
  // Errors: kInvalidArgument with one line naming the offending field (e.g. "gpus[1].mem: ...").
  static Result<std::unique_ptr<SimulatedBackend>> FromJson(const nlohmann::json& config);

  // FromJson on the contents of a file. Errors: kNotFound when it cannot be read,
  // kInvalidArgument for bad JSON or a bad description, naming the path.
  static Result<std::unique_ptr<SimulatedBackend>> FromFile(const std::string& path);

  // The preset names, in the order listed above, and as one string "h100x2, a100x8, ...".
  static std::vector<std::string> PresetNames();
  static std::string PresetList();

  // GpuBackend. Kind() is "simulated:<preset>" or "simulated:config"; DriverVersion() "simulated".
  // Sample errors: kNotFound for an unknown index; kUnavailable for a GPU marked lost.
  Source source() const override { return Source::kSimulated; }
  std::string Kind() const override;
  std::string DriverVersion() const override { return "simulated"; }
  Result<std::vector<GpuInfo>> Inventory() override;
  Result<GpuSample> Sample(int index) override;
  // The Xids injected since the last call.
  Result<std::vector<XidEvent>> TakeXidEvents() override;

  // MIG (simulated_mig.cc). An A100 80GB lists its profiles and placements as its driver does
  // (mig_profiles.h); other GPUs list none. Instances are made and destroyed by the real rules:
  // a placement the profile allows and no instance overlaps, at most its count, MIG mode on,
  // no process on an instance destroyed; a GPU instance gets the lowest id free, its compute
  // instance id 0, a UUID from the node's name and both ids.
  Result<std::vector<MigProfileInfo>> MigProfiles(int index) override;
  Result<MigInfo> CreateMigInstance(int index, const std::string& profile, int start) override;
  Status DestroyMigInstance(int index, uint32_t gpu_instance_id) override;
  // Fault: the next `count` creates fail half way (their compute instance), as a driver can.
  void FailCreatesHalfWay(int count);

  // Scripting. Each returns kNotFound for an unknown GPU index, kInvalidArgument for a bad value.
  // The processes on GPU `index` (MIG instance ids included); mem_used_bytes is their sum.
  Status SetProcesses(int index, std::vector<GpuProcess> processes);
  Status AddEnergy(int index, uint64_t energy_mj);
  // Energy added by every later Sample of GPU `index`, so counters move in a demo.
  Status SetEnergyPerSample(int index, uint64_t energy_mj);
  Status SetPower(int index, uint32_t power_mw);
  Status SetUtilization(int index, int utilization_pct);  // -1 (unsupported) or 0..100
  Status SetLost(int index, bool lost);
  // A critical Xid error on GPU `index`, reported by the next TakeXidEvents.
  Status InjectXid(int index, uint64_t xid);

  // On: every Sample also lists the live processes that declare simulated device memory in their
  // environment (PINPOINT_SIMULATED_GPU_MEM=<size>, on the GPU whose UUID their
  // CUDA_VISIBLE_DEVICES names first). pinpointd turns it on for its simulated node, so a
  // process it did not start (a container's) can stand for a GPU program in tests and demos.
  // `node`: this node's name; a process that names another (declared_usage.h) is not listed.
  void SetDeclaredUsageFromProc(bool on, std::string node = "") override;

  // How many Sample / Inventory calls this instance served (errors included).
  int sample_calls() const;
  int inventory_calls() const;

 private:
  struct GpuState {
    std::vector<GpuProcess> processes;
    uint64_t energy_mj = 0;
    uint64_t energy_per_sample_mj = 0;
    uint32_t power_mw = 0;
    int utilization_pct = 0;
    bool lost = false;
  };

  SimulatedBackend(std::string name, std::vector<GpuInfo> gpus);
  // The state of GPU `index`, or null. Caller holds mu_.
  GpuState* StateOf(int index);
  // Runs fn(state of GPU `index`) under mu_; kNotFound for an unknown index.
  template <typename Fn>
  Status WithState(int index, Fn fn);

  const std::string name_;
  mutable std::mutex mu_;
  std::vector<GpuInfo> gpus_;        // guarded by mu_ (MIG instances change)
  std::vector<GpuState> state_;      // guarded by mu_
  int sample_calls_ = 0;             // guarded by mu_
  int inventory_calls_ = 0;          // guarded by mu_
  std::vector<XidEvent> xids_;       // guarded by mu_
  bool declared_from_proc_ = false;  // guarded by mu_
  std::string declared_node_;        // guarded by mu_
  int failing_creates_ = 0;          // guarded by mu_
  DeclaredUsage declared_;           // its own lock
  // The serial in each new instance's UUID (simulated_mig.cc, MigSerial): an instance id is
  // reused once its instance is gone (as NVML's are), a UUID never, not even after a restart.
};

}  // namespace pinpoint::gpu
