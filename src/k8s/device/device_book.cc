#include "k8s/device/device_book.h"

#include <algorithm>
#include <charconv>

namespace pinpoint::k8s {

namespace {

bool OffersWhole(const SliceDevice& d) { return d.mode == SharingMode::kExclusive; }
bool OffersUnits(const SliceDevice& d) { return d.mode != SharingMode::kExclusive; }

// A non-negative decimal without sign or leading zeros, below 10^7.
std::optional<int> ParseIndex(std::string_view text) {
  if (text.empty() || text.size() > 7 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

const char* ResourceName(Resource resource) {
  return resource == Resource::kGpu ? "pinpoint.io/gpu" : "pinpoint.io/gpu-mem";
}

const char* ResourceEndpoint(Resource resource) {
  return resource == Resource::kGpu ? "pinpoint-gpu.sock" : "pinpoint-gpu-mem.sock";
}

std::optional<ParsedId> ParseDeviceId(Resource resource, std::string_view id) {
  if (id.size() > 63 || id.substr(0, 3) != "gpu") return std::nullopt;
  id.remove_prefix(3);
  ParsedId parsed;
  if (resource == Resource::kGpu) {
    auto index = ParseIndex(id);
    if (!index) return std::nullopt;
    parsed.device_index = *index;
    return parsed;
  }
  size_t dash = id.find("-mem");
  if (dash == std::string_view::npos) return std::nullopt;
  auto index = ParseIndex(id.substr(0, dash));
  auto unit = ParseIndex(id.substr(dash + 4));
  if (!index || !unit) return std::nullopt;
  parsed.device_index = *index;
  parsed.unit = *unit;
  return parsed;
}

std::vector<bool> DeviceBook::Update(const Result<SliceInventory>& inventory) {
  if (inventory.ok()) {
    for (auto& [index, known] : known_) known.present = false;
    for (const SliceDevice& d : inventory->devices) known_[d.index] = Known{d, true};
  }
  std::vector<bool> changed;
  for (Resource r : kResources) {
    std::vector<PluginDevice> list = Build(r, inventory.ok());
    auto& current = lists_[static_cast<int>(r)];
    bool same = list.size() == current.size() &&
                std::equal(list.begin(), list.end(), current.begin(),
                           [](const PluginDevice& a, const PluginDevice& b) {
                             return a.id == b.id && a.healthy == b.healthy;
                           });
    changed.push_back(!same);
    current = std::move(list);
  }
  return changed;
}

std::vector<PluginDevice> DeviceBook::Build(Resource resource, bool reachable) const {
  std::vector<PluginDevice> list;
  for (const auto& [index, known] : known_) {
    const SliceDevice& d = known.device;
    PluginDevice base;
    base.device_index = index;
    base.healthy = reachable && known.present && d.healthy;
    if (!reachable) {
      base.unhealthy_reason = "pinpointd cannot be reached";
    } else if (!known.present) {
      base.unhealthy_reason = "pinpointd no longer lists it";
    } else if (!d.healthy) {
      base.unhealthy_reason = d.unhealthy_reason;
    }
    if (resource == Resource::kGpu && OffersWhole(d)) {
      base.id = "gpu" + std::to_string(index);
      list.push_back(base);
    } else if (resource == Resource::kGpuMem && OffersUnits(d)) {
      uint64_t units = std::min<uint64_t>(d.mem_bytes / mem_unit_bytes_, kMaxUnitsPerDevice);
      for (uint64_t u = 0; u < units; ++u) {
        PluginDevice unit = base;
        unit.unit = static_cast<int>(u);
        unit.id = "gpu" + std::to_string(index) + "-mem" + std::to_string(u);
        list.push_back(std::move(unit));
      }
    }
  }
  return list;
}

const std::vector<PluginDevice>& DeviceBook::Devices(Resource resource) const {
  return lists_[static_cast<int>(resource)];
}

std::optional<PluginDevice> DeviceBook::Find(Resource resource, std::string_view id) const {
  auto parsed = ParseDeviceId(resource, id);
  if (!parsed) return std::nullopt;
  const auto& list = Devices(resource);
  // Lists are sorted by (device index, unit): a binary search keeps Allocate of thousands of
  // IDs linear-logarithmic.
  auto it = std::lower_bound(
      list.begin(), list.end(), *parsed, [](const PluginDevice& d, const ParsedId& p) {
        return d.device_index != p.device_index ? d.device_index < p.device_index : d.unit < p.unit;
      });
  if (it == list.end() || it->id != id) return std::nullopt;
  return *it;
}

std::optional<SliceDevice> DeviceBook::Device(int index) const {
  auto it = known_.find(index);
  if (it == known_.end()) return std::nullopt;
  return it->second.device;
}

}  // namespace pinpoint::k8s
