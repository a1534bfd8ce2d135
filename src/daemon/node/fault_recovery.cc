#include "daemon/node/fault_recovery.h"

#include "common/log.h"

namespace pinpoint::daemon {

void FaultRecovery::Claim(const sharing::Event& fault, const JobTable& jobs,
                          sharing::Backends& sharing, int64_t now_ms) {
  const int device = fault.device_index;
  std::set<JobId>& affected = recovering_[device];
  for (const auto& [id, job] : jobs) {
    if (job.state != JobState::kRunning || job.uid != fault.uid) continue;
    for (const auto& a : job.allocations) {
      if (a.device_index != device || a.mode != fault.mode) continue;
      affected.insert(id);
      store::JobEvent ev{id, now_ms, "mps-fault",
                         "fatal GPU error on device " + std::to_string(device)};
      Status s = store_->AppendEvent(ev);
      if (!s.ok()) log::Warn("job {}: {}", id, s.message());
    }
  }
  log::Error(
      "MPS: fatal GPU error on device {} reported by the MPS server of uid {} ({} jobs affected): "
      "{}",
      device, fault.uid, affected.size(), fault.detail);
  tracker_.Claim(device, now_ms);
  if (affected.empty()) {
    recovering_.erase(device);
    sharing.ResetDevice(device);
  }
}

bool FaultRecovery::Evaluate(std::vector<sched::Device>& devices, int64_t now_ms) {
  FaultOutcome outcome = tracker_.Evaluate(now_ms);
  for (int device : outcome.unconfirmed) {
    log::Warn(
        "MPS: a fatal-fault report on device {} was not confirmed by the driver (no Xid): "
        "not counted toward draining it",
        device);
  }
  for (int device : outcome.counted) {
    log::Error("device {}: MPS fault confirmed by the driver ({} within the drain window)", device,
               tracker_.CountedFaults(device));
  }
  bool drained = false;
  for (int device : outcome.drain) {
    auto& d = devices.at(static_cast<size_t>(device));
    if (d.drained) continue;
    d.drained = true;
    drain_reason_[device] = std::to_string(tracker_.CountedFaults(device)) +
                            " MPS faults confirmed by the driver within an hour";
    log::Error("device {} drained: {}; it takes no new jobs until pinpointd restarts", device,
               drain_reason_[device]);
    drained = true;
  }
  return drained;
}

bool FaultRecovery::Leave(const JobRecord& job, sharing::Backends& sharing) {
  bool faulted = false;
  for (const auto& a : job.allocations) {
    auto it = recovering_.find(a.device_index);
    if (it == recovering_.end() || !it->second.erase(job.id)) continue;
    faulted = true;
    if (it->second.empty()) {
      // Every client the fault touched is gone: give the device a fresh MPS server.
      sharing.ResetDevice(a.device_index);
      recovering_.erase(it);
      log::Info("device {} recovered from its MPS fault", a.device_index);
    }
  }
  return faulted;
}

std::vector<int> FaultRecovery::RecoveringDevices() const {
  std::vector<int> devices;
  for (const auto& [device, jobs] : recovering_) devices.push_back(device);
  return devices;
}

std::string FaultRecovery::DrainReason(int device) const {
  auto it = drain_reason_.find(device);
  return it == drain_reason_.end() ? "" : it->second;
}

}  // namespace pinpoint::daemon
