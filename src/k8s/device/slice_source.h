// What pinpoint-k8s needs from pinpointd, as an interface: the devices it schedules on, and
// leases (a slice handed to a container pinpointd did not start). PinpointSliceSource
// (pinpoint_slice_source.h) is the real one; FakeSliceSource (fake_slice_source.h) the tests'.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pinpoint/sharing_mode.h"
#include "pinpoint/status.h"

namespace pinpoint::k8s {

// One device pinpointd schedules on: a whole GPU or a MIG instance.
struct SliceDevice {
  int index = 0;      // pinpoint's device index (`pinpoint gpus`, DEV)
  std::string uuid;   // GPU-... or MIG-...
  std::string name;   // "NVIDIA H100 80GB HBM3"
  int gpu_index = 0;  // the physical GPU's NVML index
  bool is_mig = false;
  SharingMode mode = SharingMode::kMps;
  uint64_t mem_bytes = 0;        // allocatable device memory
  bool healthy = true;           // false while drained or recovering from an MPS fault
  std::string unhealthy_reason;  // why, when !healthy
};

struct SliceInventory {
  std::vector<SliceDevice> devices;  // in index order
};

enum class LeaseKind {
  kWholeGpus,  // whole devices, all of each
  kMemory,     // a slice of one device: gpu_mem_bytes of its memory
};

// What one container was given by the kubelet, as pinpointd should hold it.
struct LeaseRequest {
  LeaseKind kind = LeaseKind::kMemory;
  std::vector<int> device_indices;      // kWholeGpus: one or more; kMemory: exactly one
  uint64_t gpu_mem_bytes = 0;           // kMemory: the slice
  std::string resource;                 // "pinpoint.io/gpu-mem", for the lease's name
  std::vector<std::string> device_ids;  // the kubelet's device IDs, for the lease's record
};

struct LeaseMount {
  std::string container_path;
  std::string host_path;
  bool read_only = false;
};

struct LeaseDeviceNode {
  std::string container_path;
  std::string host_path;
  std::string permissions;  // "rw", "rwm"
};

// What a container needs to use its slice. A runtime with CDI needs only cdi_devices; one
// without needs env, mounts and device_nodes.
struct Lease {
  std::string id;                        // "L42"
  std::vector<std::string> cdi_devices;  // "pinpoint.io/slice=L42"
  std::map<std::string, std::string> env;
  std::vector<LeaseMount> mounts;
  std::vector<LeaseDeviceNode> device_nodes;
};

// Implementations must be safe to call from several threads at once: the plugin calls
// Inventory from its poll thread and the lease calls from gRPC handler threads.
class SliceSource {
 public:
  virtual ~SliceSource() = default;

  // The devices now. Errors: kUnavailable when pinpointd cannot be reached; kInternal for a
  // reply that does not decode.
  virtual Result<SliceInventory> Inventory() = 0;

  // Opens a lease on what the request names. Errors: kUnavailable (pinpointd unreachable, or
  // a pinpointd without leases); kFailedPrecondition when the slice cannot be placed on the
  // named devices; kInvalidArgument for a request pinpointd refuses.
  virtual Result<Lease> OpenLease(const LeaseRequest& request) = 0;

  // Ends a lease opened by OpenLease. Errors: kNotFound for an unknown id; kUnavailable.
  virtual Status CloseLease(const std::string& lease_id) = 0;
};

}  // namespace pinpoint::k8s
