#include "sharing/applied.h"

#include "pinpoint/units.h"
#include "sharing/backend.h"

namespace pinpoint::sharing {

AppliedLimit DeviceMemory(const Slice& slice) {
  AppliedLimit a{.resource = "gpu_mem", .strength = LimitStrength::kHardware};
  a.expected = slice.device_mem_bytes > 0 ? FormatSize(slice.device_mem_bytes) : "the device's";
  a.what = slice.mig_instance ? "its MIG instance's own memory" : "the whole device's memory";
  return a;
}

AppliedLimit WatcherMemory(const Slice& slice) {
  AppliedLimit a{.resource = "gpu_mem", .strength = LimitStrength::kWatcher};
  a.expected = FormatSize(slice.gpu_mem_bytes);
  a.what = "no hardware limit: pinpointd's watcher stops it above " + a.expected;
  return a;
}

AppliedLimit DeviceSms(const Slice& slice) {
  AppliedLimit a{.resource = "gpu_share", .strength = LimitStrength::kHardware};
  a.expected = "all";
  a.what = slice.mig_instance ? "every SM of its MIG instance" : "every SM of the whole device";
  return a;
}

AppliedLimit NoSmCap() {
  AppliedLimit a{.resource = "gpu_share", .strength = LimitStrength::kNone};
  a.expected = "none";
  a.what = "no SM cap: the device's SMs are shared in time";
  return a;
}

}  // namespace pinpoint::sharing
