// The node as the scheduler sees it: allocatable devices (whole GPUs and MIG instances), their
// sharing modes, and the host's CPUs and memory. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "partition/partition.h"
#include "pinpoint/sharing_mode.h"
#include "sharing/placement_rules.h"

namespace pinpoint::sched {

// One allocatable device.
struct Device {
  int index = 0;     // pinpoint's device index: position in Inventory::devices
  std::string uuid;  // what CUDA_VISIBLE_DEVICES names
  std::string name;
  int gpu_index = 0;       // the physical GPU's NVML index
  uint64_t mem_bytes = 0;  // allocatable device memory
  int sm_count = 0;
  SharingMode mode = SharingMode::kMps;  // which backend serves it; the scheduler reads `rules`
  // What the scheduler may place on it, as its mode's backend says (sharing::Backends::ApplyRules;
  // tests: sched_test_util.h). The defaults are the MPS rules with NVIDIA's 48 clients.
  sharing::PlacementRules rules{
      .whole_device = false, .one_user = true, .max_jobs = 48, .no_slices_reason = ""};
  bool drained = false;  // takes no new jobs
  // The GPU's measured utilisation over about the last minute (0-100), -1 when not measured.
  // Spreading slices (SlicePlacement) prefers the less busy of two devices otherwise alike.
  int busy_pct = -1;
  int numa_node = -1;  // the host NUMA node nearest its GPU; -1 unknown (a job's CPUs go there)
  // What it is: a whole GPU, a MIG instance, or a slot of a mig-dynamic GPU
  // (daemon/mig/mig_slots.h) whose instance may not exist (yet): a vacant slot takes nothing, and
  // its mem_bytes is the most an instance starting there could have. CheckFits counts the largest
  // of Inventory::mig_profiles for a one-device slice on a node with slots in service: pinpoint may
  // make that instance.
  partition::Partition partition = {};
};

// Where a slice goes among the devices it fits (docs/scheduling.md, "Where slices go").
//   kSpread: the least loaded device: least SM share reserved, then fewest jobs, then least busy.
//   kPack:   best fit by memory: the busiest device that still has room, empty GPUs last.
//   kAuto:   spread, but pack while a waiting demand needs an empty GPU that spreading would take
//            (a whole-GPU or isolated job, or a slice of a user whose MPS has no GPU yet).
enum class SlicePlacement { kSpread, kPack, kAuto };
const char* SlicePlacementName(SlicePlacement placement);  // "spread" | "pack" | "auto"
std::optional<SlicePlacement> SlicePlacementFromName(const std::string& name);

struct HostResources {
  int cpus = 1;
  uint64_t mem_bytes = 0;
};

struct Inventory {
  std::vector<Device> devices;
  HostResources host;
  SlicePlacement slice_placement = SlicePlacement::kAuto;
  // kAuto: this many empty GPUs go to slices only when no other device takes them, whether or
  // not a whole-GPU job waits, so that one can start at once (config keep_empty_gpus).
  int keep_empty_gpus = 0;
  // kAuto: for this long after a user's first slice on an MPS GPU starts, their next slices do
  // not take another empty GPU (placement.h; config mps_affinity_ms). 0: no window.
  int64_t mps_affinity_ms = 0;
  // Each MIG profile a slice may name (Demand::mig_profile): the instances there are and those a
  // mig-dynamic GPU could make, with the most device memory one offers.
  partition::ProfileMemory mig_profiles = {};
};

}  // namespace pinpoint::sched
