#include "k8s/device/device_state.h"

namespace pinpoint::k8s {

Status DeviceState::Refresh(SliceSource& source) {
  Result<SliceInventory> inventory = source.Inventory();
  {
    std::lock_guard lock(mu_);
    std::vector<bool> changed = book_.Update(inventory);
    for (Resource r : kResources) {
      if (changed[static_cast<int>(r)]) ++generation_[static_cast<int>(r)];
    }
  }
  changed_.notify_all();
  return inventory.ok() ? Status::Ok() : inventory.status();
}

DeviceState::Snapshot DeviceState::Current(Resource resource) const {
  std::lock_guard lock(mu_);
  return {generation_[static_cast<int>(resource)], book_.Devices(resource)};
}

bool DeviceState::WaitForChange(Resource resource, uint64_t seen,
                                const std::function<bool()>& stop) {
  std::unique_lock lock(mu_);
  while (generation_[static_cast<int>(resource)] == seen) {
    if (stop()) return false;
    changed_.wait_for(lock, std::chrono::seconds(1));
  }
  return true;
}

void DeviceState::WakeAll() {
  { std::lock_guard lock(mu_); }
  changed_.notify_all();
}

}  // namespace pinpoint::k8s
