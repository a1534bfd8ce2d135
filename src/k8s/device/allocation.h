// Allocation policy of pinpoint-k8s: which devices to prefer for a container, and what lease
// a container's devices become. Pure: reads a DeviceBook, does no I/O.
#pragma once

#include <string>
#include <vector>

#include "k8s/device/device_book.h"
#include "k8s/device/slice_source.h"
#include "pinpoint/status.h"

namespace pinpoint::k8s {

// The most device IDs the plugin takes in one container's request or list (a node's units fit:
// 8 GPUs of 141 GiB are 1128 units of 1 GiB), and the most containers in one request.
inline constexpr int kMaxDeviceIds = 8192;
inline constexpr int kMaxContainers = 64;

// GetPreferredAllocation for one container: `size` IDs out of `available`, all of
// `must_include` among them.
//   pinpoint.io/gpu-mem: best fit. The units must be on one device: of the devices holding
//     every must_include unit and at least `size` available healthy units, the one with the
//     fewest available units (ties: the lower index); on it, must_include first, then its
//     lowest-numbered units. The result is in unit order.
//   pinpoint.io/gpu: must_include, then the lowest-indexed available healthy devices.
// IDs this plugin does not list are ignored in `available`. Errors: kInvalidArgument for a
// size out of 1..kMaxDeviceIds, more must_include than size, or a must_include ID it does not
// list; kFailedPrecondition when no single device can hold the units, naming the most one
// device has free (the kubelet fails the pod with this line).
Result<std::vector<std::string>> PreferredAllocation(Resource resource, const DeviceBook& book,
                                                     const std::vector<std::string>& available,
                                                     const std::vector<std::string>& must_include,
                                                     int size);

// What a container's devices (as the kubelet chose them) ask of pinpointd:
//   pinpoint.io/gpu-mem: kMemory on the one device all units are on, N units' bytes;
//   pinpoint.io/gpu: kWholeGpus on those devices.
// Errors: kInvalidArgument for no IDs, more than kMaxDeviceIds, a repeated ID or one this
// plugin does not list; kFailedPrecondition for units on several devices ("span GPUs 0 and 1")
// and for an Unhealthy device.
Result<LeaseRequest> PlanLease(Resource resource, const DeviceBook& book,
                               const std::vector<std::string>& device_ids);

}  // namespace pinpoint::k8s
