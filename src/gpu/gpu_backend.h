// GpuBackend: everything pinpoint reads from the GPUs. Only src/gpu/ knows NVML exists.
// Implementations: NvmlBackend (libnvidia-ml.so.1 through dlopen) and SimulatedBackend
// (named fake machines for tests and the labelled simulated node).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::gpu {

enum class ComputeMode { kDefault, kExclusiveThread, kProhibited, kExclusiveProcess, kUnknown };
const char* ComputeModeName(ComputeMode mode);  // "default", "exclusive_process", ...

// A MIG instance: an allocatable device of its own.
struct MigInfo {
  std::string uuid;     // "MIG-..."
  std::string profile;  // e.g. "1g.10gb"; may be empty when the backend cannot tell
  uint32_t gpu_instance_id = 0;
  uint32_t compute_instance_id = 0;
  uint64_t mem_total_bytes = 0;
  int sm_count = 0;
  int placement_start = -1;  // the first memory slice its GPU instance covers; -1: unknown
};

// Static facts about one physical GPU.
struct GpuInfo {
  int index = 0;     // NVML index
  std::string uuid;  // "GPU-..."
  std::string name;  // "NVIDIA H100 80GB HBM3"
  uint64_t mem_total_bytes = 0;
  int sm_count = 0;  // multiprocessors; 0 when unknown
  ComputeMode compute_mode = ComputeMode::kDefault;
  bool mig_enabled = false;
  std::vector<MigInfo> migs;  // empty unless mig_enabled
  int numa_node = -1;  // the host NUMA node nearest the GPU (NVML's memory affinity); -1 unknown
};

// GpuProcess's instance ids when the process is not on a MIG instance (NVML's 0xFFFFFFFF).
inline constexpr uint32_t kNoMigInstance = 0xFFFFFFFF;

// A process using a GPU (MPS clients included) and its device memory.
struct GpuProcess {
  int64_t pid = 0;
  uint64_t used_bytes = 0;  // 0 when the driver does not tell (e.g. without privileges)
  bool mps_client = false;  // listed by the MPS query rather than the plain compute query
  // The MIG instance the process runs on (matches MigInfo's ids), or kNoMigInstance.
  uint32_t gpu_instance_id = kNoMigInstance;
  uint32_t compute_instance_id = kNoMigInstance;
};

// What changes: read on each sample.
struct GpuSample {
  int index = 0;
  uint64_t mem_used_bytes = 0;
  uint32_t power_mw = 0;     // 0 when unsupported
  uint64_t energy_mj = 0;    // total energy counter since driver load; 0 when unsupported
  int utilization_pct = -1;  // -1 when unsupported
  std::vector<GpuProcess> processes;
};

// A critical Xid error the driver reported for a GPU (a fatal fault, for example an illegal
// address of an MPS client). Unlike anything in an MPS log, users cannot forge it.
struct XidEvent {
  int index = 0;     // the GPU (NVML index)
  uint64_t xid = 0;  // the Xid number (13, 31, 43, ...)
};

// One GPU instance profile a GPU offers (MIG), and where NVML says it may be placed. NVML lists
// these whether or not MIG is enabled.
struct MigProfileInfo {
  std::string name;         // "1g.10gb"
  uint32_t profile_id = 0;  // NVML's id for the placement and create calls
  int compute_slices = 0;   // the "1g"
  int instance_count = 0;   // how many fit on the GPU at once
  uint64_t mem_bytes = 0;
  int sm_count = 0;
  struct Placement {
    int start = 0;  // first memory slice
    int size = 0;   // memory slices covered
    bool operator==(const Placement&) const = default;
  };
  std::vector<Placement> placements;
};

// Thread-compatible: callers serialise calls on one instance.
class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // Where the GPUs come from: the driver, or a simulation. What depends on it (MPS control
  // daemons, a handle of its own for the MIG thread, stand-in device nodes) is chosen by this,
  // never by Kind()'s words.
  enum class Source { kNvml, kSimulated };
  virtual Source source() const = 0;
  // "nvml" or "simulated:<preset>"; shown at start and in every listing.
  virtual std::string Kind() const = 0;
  // Driver version ("580.159.04") or "simulated".
  virtual std::string DriverVersion() const = 0;
  // The GPUs with their MIG instances. Errors: kUnavailable when the driver fails.
  virtual Result<std::vector<GpuInfo>> Inventory() = 0;
  // Current readings of GPU `index`. Errors: kNotFound for an unknown index, kUnavailable when the
  // device is lost or the driver fails.
  virtual Result<GpuSample> Sample(int index) = 0;
  // The critical Xid errors reported since the last call; never blocks. Empty where the backend
  // cannot watch for them (the default). Errors: kUnavailable when the driver fails.
  virtual Result<std::vector<XidEvent>> TakeXidEvents() { return std::vector<XidEvent>{}; }
  // A simulated node lists, in each Sample, the live processes that declare simulated device
  // memory (SimulatedBackend); real GPUs have their own processes and ignore it.
  virtual void SetDeclaredUsageFromProc(bool on, std::string node = "") {
    (void)on;
    (void)node;
  }
  // The GPU instance profiles GPU `index` offers, with their possible placements; empty for a GPU
  // without MIG. Read-only: nothing is created. Errors: kNotFound for an unknown index,
  // kUnavailable when the driver fails or cannot tell (the default).
  virtual Result<std::vector<MigProfileInfo>> MigProfiles(int index) {
    (void)index;
    return Unavailable("this backend does not list MIG profiles");
  }
  // Dynamic MIG (issue 26): makes a GPU instance of `profile` at memory slice `start` on GPU
  // `index`, which must already be in MIG mode (a backend never turns MIG on), with one compute
  // instance over all of it; returns the new MIG device. A create that fails half way (the
  // compute instance) destroys the GPU instance it made: the layout is as it was. Errors:
  // kNotFound (no such GPU or profile), kFailedPrecondition (MIG disabled; `start` is no placement
  // of the profile; the placement overlaps an instance; no more instances of the profile fit),
  // kUnavailable (the driver failed; the default: this backend cannot).
  virtual Result<MigInfo> CreateMigInstance(int index, const std::string& profile, int start) {
    (void)index, (void)profile, (void)start;
    return Unavailable("this backend does not make MIG instances");
  }
  // Destroys GPU instance `gpu_instance_id` of GPU `index` with its compute instances. Errors:
  // kNotFound (no such GPU or instance), kFailedPrecondition (a process still runs on it: nothing
  // is destroyed), kUnavailable (the driver failed; the default).
  virtual Status DestroyMigInstance(int index, uint32_t gpu_instance_id) {
    (void)index, (void)gpu_instance_id;
    return Unavailable("this backend does not destroy MIG instances");
  }
};

}  // namespace pinpoint::gpu
