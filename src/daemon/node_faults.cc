// Node's side of a sharing backend's events (node.h, docs/mps.md "Faults"): fatal faults go to
// FaultRecovery (fault_recovery.h), an unresponsive MPS server stops the jobs it served.
#include <algorithm>
#include <set>

#include "common/log.h"
#include "daemon/lifecycle.h"
#include "daemon/node.h"

namespace pinpoint::daemon {

void Node::HandleSharingEvents() {
  for (const auto& e : sharing_->Poll(deps_.clock->NowMs())) {
    switch (e.kind) {
      case sharing::Event::Kind::kFault:
        faults_.Claim(e, jobs_, *sharing_, deps_.clock->NowMs());
        dirty_ = true;
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
  if (faults_.Evaluate(options_.inventory.devices, deps_.clock->NowMs())) dirty_ = true;
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

}  // namespace pinpoint::daemon
