// Node's side of the watcher: what WatchFeedback (watch_feedback.h) hands it to act on.

#include "common/log.h"
#include "daemon/node.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

namespace {

std::string OverBudgetDetail(const watch::OverBudget& over) {
  std::string who = over.processes == 1 ? "its process" : "its " + std::to_string(over.processes) + " processes";
  return who + " used " + FormatSize(over.used_bytes) + " of device memory on GPU " + std::to_string(over.gpu_index) +
         ", over its " + FormatSize(over.budget_bytes);
}

}  // namespace

void Node::ApplyWatch() {
  WatchFeedback::Found found = watch_.Apply(jobs_, deps_.clock->NowMs());
  if (found.settled) dirty_ = true;
  // An Xid is the driver's word on a GPU: it confirms MPS fault claims of every device on it.
  for (const auto& [xid, time_ms] : found.xids) {
    log::Warn("GPU {}: critical Xid {} reported by the driver", xid.index, xid.xid);
    for (const auto& d : options_.inventory.devices) {
      if (d.gpu_index == xid.index) faults_.Xid(d.index, time_ms);
    }
  }
  for (const auto& over : found.over_budget) {
    auto it = jobs_.find(over.id);
    if (it != jobs_.end() && it->second.state == JobState::kRunning)
      StopJob(it->second, Reason::kGpuMemExceeded, OverBudgetDetail(over));
  }
}

}  // namespace pinpoint::daemon
