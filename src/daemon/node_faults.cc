// Node's MPS faults (node.h, docs/mps.md "Faults"): which jobs a fatal fault on a device
// touched, the suspects and victims, a device drained after repeated faults, and leaving the
// recovery once the faulted jobs have ended.
#include <algorithm>
#include <set>

#include "common/log.h"
#include "daemon/lifecycle.h"
#include "daemon/node.h"

namespace pinpoint::daemon {

sharing::Slice Node::SliceOf(const JobRecord& job, const Allocation& a) const {
  sharing::Slice s;
  s.device_index = a.device_index;
  s.device_uuid = a.uuid;
  s.uid = job.uid;
  s.gid = job.gid;
  s.gpu_mem_bytes = a.gpu_mem_bytes;
  s.gpu_share_pct = a.gpu_share_pct;
  s.job_id = static_cast<uint64_t>(job.id);
  return s;
}

void Node::HandleSharingEvents() {
  for (const auto& e : sharing_->Poll(deps_.clock->NowMs())) {
    switch (e.kind) {
      case sharing::Event::Kind::kFault:
        RecordFault(e);
        break;
      case sharing::Event::Kind::kServerDied:
        log::Error("{}: {}", SharingModeName(e.mode), e.detail);
        break;
      case sharing::Event::Kind::kServerQuit:
        log::Info("{}: {}", SharingModeName(e.mode), e.detail);
        dirty_ = true;  // a job of another user may wait for the device
        break;
      case sharing::Event::Kind::kServerReady:
        dirty_ = true;  // the jobs that waited for it start
        break;
      case sharing::Event::Kind::kServerStartFailed:
        dirty_ = true;  // the job that waited for it is told why
        break;
      case sharing::Event::Kind::kServerUnresponsive:
        StopUnservedJobs(e);
        break;
    }
  }
  EvaluateFaults();
}

void Node::StopUnservedJobs(const sharing::Event& e) {
  log::Error("{}: {}", SharingModeName(e.mode), e.detail);
  for (auto& [id, job] : jobs_) {
    if (job.state != JobState::kRunning || job.uid != e.uid) continue;
    bool served_there = std::any_of(job.allocations.begin(), job.allocations.end(), [&](const Allocation& a) {
      return a.device_index == e.device_index && a.mode == e.mode;
    });
    if (served_there) StopJob(job, Reason::kMpsUnresponsive, e.detail);
  }
  dirty_ = true;  // the device is free again: the queue may move
}

void Node::RecordFault(const sharing::Event& fault) {
  const int device = fault.device_index;
  const uint32_t uid = fault.uid;
  int64_t now = deps_.clock->NowMs();
  std::set<JobId>& affected = recovering_[device];
  for (auto& [id, job] : jobs_) {
    // The claim comes from a log its user can write: it may touch that user's jobs only.
    if (job.state != JobState::kRunning || job.uid != uid) continue;
    for (const auto& a : job.allocations) {
      if (a.device_index != device || a.mode != fault.mode) continue;
      affected.insert(id);
      store::JobEvent ev{id, now, "mps-fault", "fatal GPU error on device " + std::to_string(device)};
      Status s = deps_.store->AppendEvent(ev);
      if (!s.ok()) log::Warn("job {}: {}", id, s.message());
    }
  }
  log::Error("MPS: fatal GPU error on device {} reported by the MPS server of uid {} ({} jobs affected): {}",
             device, uid, affected.size(), fault.detail);
  faults_.Claim(device, now);
  if (affected.empty()) {
    recovering_.erase(device);
    sharing_->ResetDevice(device);
  }
  dirty_ = true;
}

void Node::EvaluateFaults() {
  FaultOutcome outcome = faults_.Evaluate(deps_.clock->NowMs());
  for (int device : outcome.unconfirmed) {
    log::Warn("MPS: a fatal-fault report on device {} was not confirmed by the driver (no Xid): "
              "not counted toward draining it", device);
  }
  for (int device : outcome.counted) {
    log::Error("device {}: MPS fault confirmed by the driver ({} within the drain window)", device,
               faults_.CountedFaults(device));
  }
  for (int device : outcome.drain) {
    auto& d = options_.inventory.devices.at(static_cast<size_t>(device));
    if (d.drained) continue;
    d.drained = true;
    drain_reason_[device] = std::to_string(faults_.CountedFaults(device)) +
                            " MPS faults confirmed by the driver within an hour";
    log::Error("device {} drained: {}; it takes no new jobs until pinpointd restarts", device,
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
      sharing_->ResetDevice(a.device_index);
      recovering_.erase(it);
      log::Info("device {} recovered from its MPS fault", a.device_index);
    }
  }
  return faulted;
}

}  // namespace pinpoint::daemon
