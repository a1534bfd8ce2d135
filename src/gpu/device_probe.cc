#include "gpu/device_probe.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>
#include <vector>

namespace pinpoint::gpu {

namespace {

namespace fs = std::filesystem;

// The names in `dir`, sorted so that the answer does not depend on readdir's order; empty when it
// cannot be read.
std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// nvidiactl, or nvidia followed by digits only (not nvidia-uvm, nvidia-modeset, nvidia-caps: they
// exist only beside these).
bool IsNvidiaDeviceNode(const std::string& name) {
  if (name == "nvidiactl") return true;
  constexpr std::string_view kPrefix = "nvidia";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  return std::all_of(name.begin() + kPrefix.size(), name.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

std::string FindNvidiaDevice(const std::string& root) {
  fs::path base(root.empty() ? "/" : root);
  for (const std::string& name : Names(base / "dev")) {
    if (IsNvidiaDeviceNode(name)) return "/dev/" + name;
  }
  std::vector<std::string> gpus = Names(base / "proc/driver/nvidia/gpus");
  if (!gpus.empty()) return "/proc/driver/nvidia/gpus/" + gpus.front();
  return "";
}

}  // namespace pinpoint::gpu
