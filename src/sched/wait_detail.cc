#include "sched/wait_detail.h"

#include "pinpoint/units.h"

namespace pinpoint::sched {

namespace {

std::string Count(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string DeviceLabel(const Inventory& inventory, int index) {
  const Device& d = inventory.devices[index];
  if (!d.partition.is_mig()) {
    return "GPU " + std::to_string(index);
  }
  return "MIG device " + std::to_string(index) + " on GPU " + std::to_string(d.gpu_index);
}

std::string DeviceLabels(const Inventory& inventory, const std::vector<int>& indices) {
  std::string out;
  for (int i : indices) {
    if (!out.empty()) {
      out += ", ";
    }
    out += DeviceLabel(inventory, i);
  }
  return out;
}

std::string DeviceShortage(const Demand& demand, const DeviceScan& scan) {
  if (demand.gpu_mem_bytes == 0) {
    return "needs " + Count(demand.gpus, "empty GPU", "empty GPUs") + ", " +
           std::to_string(scan.fits + scan.reserved) + " free";
  }
  std::string text = "needs " + FormatSize(demand.gpu_mem_bytes) + " of device memory";
  if (demand.gpu_share_pct > 0) {
    text += " and " + std::to_string(demand.gpu_share_pct) + "% SM share";
  }
  if (demand.gpus == 1) {
    return text + " on one device, none can take it now";
  }
  return text + " on each of " + std::to_string(demand.gpus) + " devices, " +
         std::to_string(scan.fits) + " can take it now";
}

std::string OtherUidDetail(const Inventory& inventory, const NodeState& state, int index) {
  return DeviceLabel(inventory, index) + " MPS server belongs to uid " +
         std::to_string(state.devices()[index].uid);
}

std::string HostShortage(const Demand& demand, const NodeState& state) {
  int64_t free_cpus = state.FreeCpus(false);
  if (demand.cpus > free_cpus) {
    return "needs " + Count(demand.cpus, "CPU", "CPUs") + ", " +
           std::to_string(free_cpus < 0 ? 0 : free_cpus) + " free";
  }
  return "needs " + FormatSize(demand.mem_bytes) + " of host memory, " +
         FormatSize(state.FreeMemBytes(false)) + " free";
}

}  // namespace pinpoint::sched
