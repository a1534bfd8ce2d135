#include "daemon/node/lease_edits.h"

#include <set>

namespace pinpoint::daemon {

LeaseEdits LeaseEditsOf(const std::vector<std::string>& env,
                        const std::vector<Allocation>& allocations,
                        const sched::Inventory& inventory, const std::string& device_dir,
                        const std::function<bool(const std::string&)>& exists,
                        const std::vector<std::string>& client_paths) {
  LeaseEdits edits;
  for (const std::string& entry : env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    if (name.rfind("PINPOINT_", 0) != 0 && name.rfind("CUDA_", 0) != 0) continue;
    edits.env[name] = entry.substr(eq + 1);
  }
  std::set<int> gpus;
  std::vector<std::string> nodes;
  for (const Allocation& a : allocations) {
    if (a.device_index < 0 || static_cast<size_t>(a.device_index) >= inventory.devices.size())
      continue;
    int gpu = inventory.devices[static_cast<size_t>(a.device_index)].gpu_index;
    if (gpus.insert(gpu).second) nodes.push_back(device_dir + "/nvidia" + std::to_string(gpu));
  }
  for (const char* shared : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"})
    nodes.push_back(device_dir + "/" + shared);
  for (const auto& n : nodes)
    if (exists(n)) edits.device_nodes.push_back(n);
  for (const std::string& path : client_paths)
    if (!path.empty()) edits.mounts.push_back({path, path, false});
  return edits;
}

}  // namespace pinpoint::daemon
