#include "k8s/device/allocation.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "pinpoint/escape.h"

namespace pinpoint::k8s {

namespace {

// The healthy, listed devices among `ids`, keyed by (device index, unit) so that iteration is
// in index and unit order.
std::map<std::pair<int, int>, PluginDevice> Listed(Resource resource, const DeviceBook& book,
                                                   const std::vector<std::string>& ids) {
  std::map<std::pair<int, int>, PluginDevice> out;
  for (const std::string& id : ids) {
    auto device = book.Find(resource, id);
    if (device && device->healthy)
      out.emplace(std::pair{device->device_index, device->unit}, *device);
  }
  return out;
}

Result<std::vector<std::string>> PreferWhole(const DeviceBook& book,
                                             const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             int size) {
  std::vector<std::string> chosen = must_include;
  std::set<std::string> taken(must_include.begin(), must_include.end());
  for (const auto& [key, device] : Listed(Resource::kGpu, book, available)) {
    if (static_cast<int>(chosen.size()) >= size) break;
    if (taken.insert(device.id).second) chosen.push_back(device.id);
  }
  if (static_cast<int>(chosen.size()) < size) {
    return FailedPrecondition(
        fmt::format("pinpoint.io/gpu: {} GPUs asked for, {} available", size, chosen.size()));
  }
  return chosen;
}

Result<std::vector<std::string>> PreferUnits(const DeviceBook& book,
                                             const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             int size) {
  std::map<int, std::vector<std::string>> free_by_device;  // in unit order
  for (const auto& [key, device] : Listed(Resource::kGpuMem, book, available)) {
    free_by_device[key.first].push_back(device.id);
  }
  std::set<int> must_devices;
  for (const std::string& id : must_include) {
    must_devices.insert(book.Find(Resource::kGpuMem, id)->device_index);
  }
  if (must_devices.size() > 1) {
    return FailedPrecondition(fmt::format(
        "pinpoint.io/gpu-mem: the units that must be included are on {} GPUs; a slice must be "
        "on one GPU",
        must_devices.size()));
  }
  int best = -1;
  size_t best_free = 0, most_free = 0;
  for (const auto& [index, ids] : free_by_device) {
    std::set<std::string> free(ids.begin(), ids.end());
    size_t count = free.size();
    for (const std::string& id : must_include) {
      // A must_include unit of this GPU that the kubelet left out of `available`.
      if (!free.count(id) && book.Find(Resource::kGpuMem, id)->device_index == index) ++count;
    }
    most_free = std::max(most_free, count);
    if (!must_devices.empty() && *must_devices.begin() != index) continue;
    if (count >= static_cast<size_t>(size) && (best < 0 || count < best_free)) {
      best = index;
      best_free = count;
    }
  }
  if (best < 0) {
    return FailedPrecondition(fmt::format(
        "pinpoint.io/gpu-mem: {} units asked for, but no GPU has {} free units (the most on one "
        "GPU is {}); a slice must be on one GPU",
        size, size, most_free));
  }
  std::set<std::string> chosen(must_include.begin(), must_include.end());
  for (const std::string& id : free_by_device[best]) {
    if (static_cast<int>(chosen.size()) >= size) break;
    chosen.insert(id);
  }
  std::vector<std::string> out(chosen.begin(), chosen.end());
  // Unit order, not string order ("mem10" after "mem9").
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return ParseDeviceId(Resource::kGpuMem, a)->unit < ParseDeviceId(Resource::kGpuMem, b)->unit;
  });
  return out;
}

// An ID from the kubelet as it goes into an error line (which the kubelet shows in the pod's
// events, and the plugin logs): at most 63 bytes of it, escaped.
std::string Shown(const std::string& id) { return EscapeForTerminal(id.substr(0, 63)); }

// "0 and 1", "0, 1 and 3".
std::string JoinIndices(const std::set<int>& indices) {
  std::string out;
  size_t i = 0;
  for (int index : indices) {
    if (i > 0) out += i + 1 == indices.size() ? " and " : ", ";
    out += std::to_string(index);
    ++i;
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> PreferredAllocation(Resource resource, const DeviceBook& book,
                                                     const std::vector<std::string>& available,
                                                     const std::vector<std::string>& must_include,
                                                     int size) {
  const char* name = ResourceName(resource);
  if (size < 1 || size > kMaxDeviceIds) {
    return InvalidArgument(
        fmt::format("{}: allocation size {} is not in 1..{}", name, size, kMaxDeviceIds));
  }
  if (static_cast<int>(must_include.size()) > size) {
    return InvalidArgument(fmt::format("{}: {} devices must be included in an allocation of {}",
                                       name, must_include.size(), size));
  }
  std::set<std::string> seen;
  for (const std::string& id : must_include) {
    if (!book.Find(resource, id)) {
      return InvalidArgument(fmt::format("{}: unknown device ID '{}'", name, Shown(id)));
    }
    if (!seen.insert(id).second) {
      return InvalidArgument(fmt::format("{}: device ID '{}' repeated", name, Shown(id)));
    }
  }
  return resource == Resource::kGpu ? PreferWhole(book, available, must_include, size)
                                    : PreferUnits(book, available, must_include, size);
}

Result<LeaseRequest> PlanLease(Resource resource, const DeviceBook& book,
                               const std::vector<std::string>& device_ids) {
  const char* name = ResourceName(resource);
  if (device_ids.empty() || static_cast<int>(device_ids.size()) > kMaxDeviceIds) {
    return InvalidArgument(fmt::format("{}: a container asks for {} devices; 1 to {} are allowed",
                                       name, device_ids.size(), kMaxDeviceIds));
  }
  std::set<std::string> seen;
  std::set<int> devices;
  for (const std::string& id : device_ids) {
    auto device = book.Find(resource, id);
    if (!device) {
      return InvalidArgument(fmt::format("{}: unknown device ID '{}'", name, Shown(id)));
    }
    if (!seen.insert(id).second) {
      return InvalidArgument(fmt::format("{}: device ID '{}' repeated", name, Shown(id)));
    }
    if (!device->healthy) {
      return FailedPrecondition(
          fmt::format("{}: device {} is unhealthy: {}", name, id, device->unhealthy_reason));
    }
    devices.insert(device->device_index);
  }
  LeaseRequest request;
  request.resource = name;
  request.device_ids = device_ids;
  request.device_indices.assign(devices.begin(), devices.end());
  if (resource == Resource::kGpu) {
    request.kind = LeaseKind::kWholeGpus;
    return request;
  }
  if (devices.size() > 1) {
    return FailedPrecondition(fmt::format(
        "{}: the {} units span GPUs {}; a slice must be on one GPU (ask for units that fit on "
        "one GPU, and let GetPreferredAllocation choose them)",
        name, device_ids.size(), JoinIndices(devices)));
  }
  request.kind = LeaseKind::kMemory;
  request.gpu_mem_bytes = static_cast<uint64_t>(device_ids.size()) * book.mem_unit_bytes();
  return request;
}

}  // namespace pinpoint::k8s
