#include "daemon/node/fault_tracker.h"

#include <algorithm>

namespace pinpoint::daemon {

namespace {

void PushBounded(std::deque<int64_t>& times, int64_t t) {
  times.push_back(t);
  while (times.size() > FaultTracker::kMaxPending) times.pop_front();
}

}  // namespace

FaultTracker::FaultTracker(int drain_after, int64_t confirm_window_ms, int64_t drain_window_ms)
    : drain_after_(drain_after),
      confirm_window_ms_(confirm_window_ms),
      drain_window_ms_(drain_window_ms) {}

void FaultTracker::Claim(int device, int64_t time_ms) {
  PushBounded(devices_[device].claims, time_ms);
}

void FaultTracker::Xid(int device, int64_t time_ms) { PushBounded(devices_[device].xids, time_ms); }

FaultOutcome FaultTracker::Evaluate(int64_t now_ms) {
  FaultOutcome out;
  for (auto& [device, d] : devices_) {
    bool counted = false, dropped = false;
    while (!d.claims.empty()) {
      int64_t claim = d.claims.front();
      auto near = [&](int64_t t) {
        return t >= claim - confirm_window_ms_ && t <= claim + confirm_window_ms_;
      };
      if (std::any_of(d.xids.begin(), d.xids.end(), near)) {
        d.counted.push_back(claim);
        counted = true;
        // One fault: every claim and Xid around it belongs to it.
        std::erase_if(d.claims, near);
        std::erase_if(d.xids, near);
        continue;
      }
      if (now_ms - claim <= confirm_window_ms_) break;  // its Xid may still come
      d.claims.pop_front();
      dropped = true;
    }
    // Xids no claim can reach any more (a fault outside MPS counts for nothing here).
    std::erase_if(d.xids, [&](int64_t t) { return now_ms - t > 2 * confirm_window_ms_; });
    std::erase_if(d.counted, [&](int64_t t) { return now_ms - t > drain_window_ms_; });
    if (counted) out.counted.push_back(device);
    if (dropped) out.unconfirmed.push_back(device);
    if (counted && !d.drained && drain_after_ > 0 &&
        static_cast<int>(d.counted.size()) >= drain_after_) {
      d.drained = true;
      out.drain.push_back(device);
    }
  }
  return out;
}

int FaultTracker::CountedFaults(int device) const {
  auto it = devices_.find(device);
  return it == devices_.end() ? 0 : static_cast<int>(it->second.counted.size());
}

}  // namespace pinpoint::daemon
