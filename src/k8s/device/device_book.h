// What pinpoint-k8s advertises to the kubelet, derived from pinpointd's devices. Pure: no I/O,
// no clock. Not thread-safe; the plugin holds it under a lock.
//
// Two resources, each a device plugin of its own:
//   pinpoint.io/gpu      one device "gpu<index>" per device in `exclusive` mode (a whole GPU or
//                        a MIG instance)
//   pinpoint.io/gpu-mem  per device in `mps` or `timeslice` mode, one device
//                        "gpu<index>-mem<unit>" per memory unit (1 GiB by default) of its
//                        allocatable memory, units numbered from 0
// A device offers itself under one resource only, so the kubelet can never hand out a whole GPU
// and a unit of it to two pods. The admin chooses with pinpointd's gpu_modes (docs/kubernetes.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/device/slice_source.h"
#include "pinpoint/status.h"

namespace pinpoint::k8s {

enum class Resource { kGpu, kGpuMem };
inline constexpr Resource kResources[] = {Resource::kGpu, Resource::kGpuMem};

// "pinpoint.io/gpu", "pinpoint.io/gpu-mem".
const char* ResourceName(Resource resource);
// The plugin's socket name in the device-plugins directory: "pinpoint-gpu.sock", ...
const char* ResourceEndpoint(Resource resource);

inline constexpr char kHealthy[] = "Healthy";
inline constexpr char kUnhealthy[] = "Unhealthy";

// The most units one device offers: past it the rest of its memory is not advertised (a tiny
// unit would otherwise make lists of many thousand devices).
inline constexpr int kMaxUnitsPerDevice = 4096;

struct PluginDevice {
  std::string id;  // "gpu0" or "gpu0-mem12"; at most 63 characters
  bool healthy = true;
  int device_index = 0;  // pinpoint's device index
  int unit = -1;         // pinpoint.io/gpu-mem: the unit's number on its device; else -1
  std::string unhealthy_reason;
};

// The device index and unit an ID names, if it is one this plugin makes for the resource
// (strict: no sign, no leading zeros, no trailing text).
struct ParsedId {
  int device_index = 0;
  int unit = -1;
};
std::optional<ParsedId> ParseDeviceId(Resource resource, std::string_view id);

class DeviceBook {
 public:
  // mem_unit_bytes > 0.
  explicit DeviceBook(uint64_t mem_unit_bytes) : mem_unit_bytes_(mem_unit_bytes) {}

  // Takes a new reading of pinpointd's devices. A device seen before and missing now stays
  // listed as Unhealthy (a pod may hold it; the kubelet must not count it as free). An error
  // (pinpointd unreachable) marks every known device Unhealthy. Returns, per resource, whether
  // its list changed: changed[static_cast<int>(resource)].
  std::vector<bool> Update(const Result<SliceInventory>& inventory);

  // The resource's devices, devices in index order, units in unit order.
  const std::vector<PluginDevice>& Devices(Resource resource) const;
  // The device listed under that ID; nullopt if none is.
  std::optional<PluginDevice> Find(Resource resource, std::string_view id) const;
  // The pinpoint device with that index as last seen; nullopt if never seen.
  std::optional<SliceDevice> Device(int index) const;

  uint64_t mem_unit_bytes() const { return mem_unit_bytes_; }

 private:
  struct Known {
    SliceDevice device;
    bool present = true;
  };
  std::vector<PluginDevice> Build(Resource resource, bool reachable) const;

  uint64_t mem_unit_bytes_;
  std::map<int, Known> known_;  // by device index
  std::vector<PluginDevice> lists_[2];
};

}  // namespace pinpoint::k8s
