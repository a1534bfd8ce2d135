#include "sched/node_limits.h"

#include <algorithm>
#include <string>

#include "pinpoint/units.h"

namespace pinpoint::sched {

namespace {

std::string Plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "on one device" / "on each of 3 devices"
std::string OnDevices(int n) {
  return n == 1 ? "on one device" : "on each of " + std::to_string(n) + " devices";
}

}  // namespace

NodeLimits::NodeLimits(const Inventory& inventory) : host_(inventory.host), inventory_(inventory) {
  bool slots_in_service = false;  // of a mig-dynamic GPU, whose instances pinpoint makes
  for (const Device& d : inventory.devices) {
    if (d.drained) {
      ++drained_devices_;
      continue;
    }
    slots_in_service = slots_in_service || (d.partition.is_slot() && d.rules.takes_slices());
    if (!d.partition.usable()) continue;
    if (!d.partition.is_mig()) {
      ++whole_devices_;
    }
    if (d.rules.takes_slices()) {
      slice_mem_bytes_.push_back(d.mem_bytes);
    } else if (++without_slices_ == 1) {
      no_slices_reason_ = d.rules.no_slices_reason;
    }
  }
  std::sort(slice_mem_bytes_.begin(), slice_mem_bytes_.end());
  if (slots_in_service) mig_max_bytes_ = inventory.mig_profiles.Most();
}

Status NodeLimits::Check(const Demand& demand) const {
  if (demand.gpus < 0 || demand.cpus < 0) {
    return FailedPrecondition("needs a negative number of GPUs or CPUs, which no node has");
  }
  PP_RETURN_IF_ERROR(CheckDevices(demand));
  return CheckHost(demand);
}

Status NodeLimits::CheckDevices(const Demand& demand) const {
  if (demand.gpus == 0) {
    return Status::Ok();
  }
  if (!demand.devices.empty()) {
    return CheckPinned(demand);
  }
  if (!demand.mig_profile.empty()) {
    return CheckMigProfile(demand);
  }
  std::string in_service = drained_devices_ > 0 ? " in service" : "";
  if (demand.gpu_mem_bytes == 0) {
    if (demand.gpus <= whole_devices_) {
      return Status::Ok();
    }
    return FailedPrecondition("needs " + Plural(demand.gpus, "whole GPU", "whole GPUs") +
                              ", this node has " + std::to_string(whole_devices_) + in_service);
  }
  if (demand.gpu_share_pct > 100) {
    return FailedPrecondition("needs a " + std::to_string(demand.gpu_share_pct) +
                              "% SM share, a device has at most 100%");
  }
  std::string need =
      "needs " + FormatSize(demand.gpu_mem_bytes) + " of device memory " + OnDevices(demand.gpus);
  // A MIG instance pinpoint may make on a mig-dynamic GPU serves one slice of one device.
  if (demand.gpus == 1 && demand.gpu_mem_bytes <= mig_max_bytes_) return Status::Ok();
  if (slice_mem_bytes_.empty()) {
    if (without_slices_ > 0 && !no_slices_reason_.empty()) {
      return FailedPrecondition(need + ", and this node takes no slices: " + no_slices_reason_);
    }
    return FailedPrecondition(need + ", this node has no devices" + in_service);
  }
  auto first_big =
      std::lower_bound(slice_mem_bytes_.begin(), slice_mem_bytes_.end(), demand.gpu_mem_bytes);
  int big_enough = static_cast<int>(slice_mem_bytes_.end() - first_big);
  if (big_enough >= demand.gpus) {
    return Status::Ok();
  }
  if (big_enough == 0) {
    return FailedPrecondition(need + ", largest has " + FormatSize(slice_mem_bytes_.back()) +
                              NoSlicesNote());
  }
  return FailedPrecondition(need + ", this node has " + std::to_string(big_enough) +
                            " with that much" + in_service + NoSlicesNote());
}

Status NodeLimits::CheckMigProfile(const Demand& demand) const {
  const partition::ProfileMemory& profiles = inventory_.mig_profiles;
  std::optional<uint64_t> offered = profiles.Of(demand.mig_profile);
  if (!offered) {
    std::string names = profiles.Names();
    return FailedPrecondition(
        "needs a MIG instance of profile " + demand.mig_profile + ", which this node " +
        (names.empty() ? "has none of (no MIG)"
                       : "neither has nor can make (its profiles: " + names + ")"));
  }
  if (demand.gpu_mem_bytes > *offered)
    return FailedPrecondition("needs " + FormatSize(demand.gpu_mem_bytes) +
                              " of device memory on a " + demand.mig_profile +
                              " instance, which has " + FormatSize(*offered));
  return Status::Ok();
}

std::string NodeLimits::NoSlicesNote() const {
  if (without_slices_ == 0 || no_slices_reason_.empty()) {
    return "";
  }
  return "; " + std::to_string(without_slices_) + " of its devices " +
         (without_slices_ == 1 ? "takes" : "take") + " no slices: " + no_slices_reason_;
}

Status NodeLimits::CheckPinned(const Demand& demand) const {
  if (demand.gpu_share_pct > 100) {
    return FailedPrecondition("needs a " + std::to_string(demand.gpu_share_pct) +
                              "% SM share, a device has at most 100%");
  }
  const std::vector<Device>& devices = inventory_.devices;
  for (int i : demand.devices) {
    if (i < 0 || i >= static_cast<int>(devices.size())) {
      return FailedPrecondition("needs GPU " + std::to_string(i) + ", this node has " +
                                Plural(static_cast<int>(devices.size()), "device", "devices"));
    }
    const Device& d = devices[static_cast<size_t>(i)];
    std::string gpu = "GPU " + std::to_string(i);
    if (d.drained) {
      return FailedPrecondition("needs " + gpu + ", which is drained");
    }
    if (d.partition.is_slot()) {  // its instance may come and go: a pinned job could wait forever
      return FailedPrecondition(
          "needs " + gpu + ", a MIG slot of a mig-dynamic GPU: pinpoint places jobs there itself");
    }
    if (demand.gpu_mem_bytes == 0 && d.partition.is_mig()) {
      return FailedPrecondition("needs " + gpu + " whole, and it is a MIG instance");
    }
    if (demand.gpu_mem_bytes > d.mem_bytes) {
      return FailedPrecondition("needs " + FormatSize(demand.gpu_mem_bytes) +
                                " of device memory on " + gpu + ", which has " +
                                FormatSize(d.mem_bytes));
    }
    if (demand.gpu_mem_bytes > 0 && !d.rules.takes_slices()) {
      const std::string& why = d.rules.no_slices_reason;
      return FailedPrecondition("needs a slice of " + gpu + ", which takes no slices" +
                                (why.empty() ? "" : ": " + why));
    }
  }
  return Status::Ok();
}

Status NodeLimits::CheckHost(const Demand& demand) const {
  if (demand.cpus > host_.cpus) {
    return FailedPrecondition("needs " + Plural(demand.cpus, "CPU", "CPUs") + ", host has " +
                              std::to_string(host_.cpus));
  }
  if (demand.mem_bytes > host_.mem_bytes) {
    return FailedPrecondition("needs " + FormatSize(demand.mem_bytes) +
                              " of host memory, host has " + FormatSize(host_.mem_bytes));
  }
  return Status::Ok();
}

Status CheckFits(const Demand& demand, const Inventory& inventory) {
  return NodeLimits(inventory).Check(demand);
}

}  // namespace pinpoint::sched
