// Node's MPS faults (node.h, docs/mps.md "Faults"): which jobs a fatal fault on a device
// touched, the suspects and victims, a device drained after repeated faults, and leaving the
// recovery once the faulted jobs have ended.
#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "daemon/lifecycle.h"
#include "daemon/node.h"

namespace pinpoint::daemon {

mps::ClientSlice Node::SliceOf(const JobRecord& job, const Allocation& a) const {
  mps::ClientSlice s;
  s.device_index = a.device_index;
  s.device_uuid = a.uuid;
  s.uid = job.uid;
  s.gid = job.gid;
  s.gpu_mem_bytes = a.gpu_mem_bytes;
  s.gpu_share_pct = a.gpu_share_pct;
  return s;
}

void Node::HandleMpsEvents() {
  for (const auto& e : deps_.mps->Poll(deps_.clock->NowMs())) {
    switch (e.kind) {
      case mps::MpsEvent::Kind::kFatalFault:
        RecordFault(e.device_index, e.uid, e.detail);
        break;
      case mps::MpsEvent::Kind::kDaemonDied:
        spdlog::error("MPS: {}", e.detail);
        break;
      case mps::MpsEvent::Kind::kDaemonQuit:
        spdlog::info("MPS: {}", e.detail);
        dirty_ = true;  // a job of another user may wait for the device
        break;
      case mps::MpsEvent::Kind::kDaemonReady:
        dirty_ = true;  // the jobs that waited for it start
        break;
      case mps::MpsEvent::Kind::kDaemonStartFailed:
        dirty_ = true;  // the job that waited for it is told why
        break;
      case mps::MpsEvent::Kind::kDaemonUnresponsive:
        StopUnservedMpsJobs(e.device_index, e.uid, e.detail);
        break;
    }
  }
  EvaluateFaults();
}

void Node::StopUnservedMpsJobs(int device, uint32_t uid, const std::string& detail) {
  spdlog::error("MPS: {}", detail);
  for (auto& [id, job] : jobs_) {
    if (job.state != JobState::kRunning || job.uid != uid) continue;
    bool served_there = std::any_of(job.allocations.begin(), job.allocations.end(), [&](const Allocation& a) {
      return a.device_index == device && a.mode == AllocationMode::kMps;
    });
    if (served_there) StopJob(job, reason::kMpsUnresponsive, detail);
  }
  dirty_ = true;  // the device is free again: the queue may move
}

void Node::RecordFault(int device, uint32_t uid, const std::string& detail) {
  int64_t now = deps_.clock->NowMs();
  std::set<JobId>& affected = recovering_[device];
  for (auto& [id, job] : jobs_) {
    // The claim comes from a log its user can write: it may touch that user's jobs only.
    if (job.state != JobState::kRunning || job.uid != uid) continue;
    for (const auto& a : job.allocations) {
      if (a.device_index != device || a.mode != AllocationMode::kMps) continue;
      affected.insert(id);
      store::JobEvent ev{id, now, "mps-fault", "fatal GPU error on device " + std::to_string(device)};
      Status s = deps_.store->AppendEvent(ev);
      if (!s.ok()) spdlog::warn("job {}: {}", id, s.message());
    }
  }
  spdlog::error("MPS: fatal GPU error on device {} reported by the MPS server of uid {} ({} jobs affected): {}",
                device, uid, affected.size(), detail);
  faults_.Claim(device, now);
  if (affected.empty()) {
    recovering_.erase(device);
    deps_.mps->ResetDevice(device);
  }
  dirty_ = true;
}

void Node::EvaluateFaults() {
  FaultOutcome outcome = faults_.Evaluate(deps_.clock->NowMs());
  for (int device : outcome.unconfirmed) {
    spdlog::warn("MPS: a fatal-fault report on device {} was not confirmed by the driver (no Xid): "
                 "not counted toward draining it", device);
  }
  for (int device : outcome.counted) {
    spdlog::error("device {}: MPS fault confirmed by the driver ({} within the drain window)", device,
                  faults_.CountedFaults(device));
  }
  for (int device : outcome.drain) {
    auto& d = options_.inventory.devices.at(static_cast<size_t>(device));
    if (d.drained) continue;
    d.drained = true;
    drain_reason_[device] = std::to_string(faults_.CountedFaults(device)) +
                            " MPS faults confirmed by the driver within an hour";
    spdlog::error("device {} drained: {}; it takes no new jobs until pinpointd restarts", device,
                  drain_reason_[device]);
    dirty_ = true;
  }
}

bool Node::LeaveFaultRecovery(const JobRecord& job) {
  bool faulted = false;
  for (const auto& a : job.allocations) {
    auto it = recovering_.find(a.device_index);
    if (it == recovering_.end() || !it->second.erase(job.id)) continue;
    faulted = true;
    if (it->second.empty()) {
      // Every client the fault touched is gone: give the device a fresh MPS server.
      deps_.mps->ResetDevice(a.device_index);
      recovering_.erase(it);
      spdlog::info("device {} recovered from its MPS fault", a.device_index);
    }
  }
  return faulted;
}

}  // namespace pinpoint::daemon
