// FaultTracker: the pure rule that drains a device after repeated MPS faults, fed by two sources
// of different trust (docs/security.md, docs/mps.md):
//  - a claim: a fatal-fault line in an MPS server log. The device's user can write that log, so a
//    claim alone never counts;
//  - an Xid: a critical error the driver reported through NVML for the device, which no user can
//    forge.
// A fault is counted when a claim and an Xid of the same device lie within confirm_window_ms of
// each other; it consumes every claim and Xid of that device within the window, so one fault that
// the log reports once per client still counts once. A claim left unconfirmed after the window is
// dropped and reported, never counted. `drain_after` counted faults of one device within
// drain_window_ms drain it (reported once).
//
// Pure: no clock, no I/O; times are passed in. Bounded: at most kMaxPending claims and Xids are
// held per device (the oldest are dropped). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace pinpoint::daemon {

struct FaultOutcome {
  std::vector<int> counted;      // devices with a newly counted (confirmed) fault
  std::vector<int> unconfirmed;  // devices with a claim dropped for want of an Xid
  std::vector<int> drain;        // devices that reached the threshold now
};

class FaultTracker {
 public:
  static constexpr size_t kMaxPending = 64;

  FaultTracker(int drain_after, int64_t confirm_window_ms = 10'000,
               int64_t drain_window_ms = 3'600'000);

  void Claim(int device, int64_t time_ms);
  void Xid(int device, int64_t time_ms);
  // Matches claims with Xids up to now_ms and applies the drain rule.
  FaultOutcome Evaluate(int64_t now_ms);

  // Counted faults of `device` within the drain window before the last Evaluate.
  int CountedFaults(int device) const;

 private:
  struct DeviceFaults {
    std::deque<int64_t> claims;
    std::deque<int64_t> xids;
    std::vector<int64_t> counted;
    bool drained = false;
  };

  int drain_after_;
  int64_t confirm_window_ms_;
  int64_t drain_window_ms_;
  std::map<int, DeviceFaults> devices_;
};

}  // namespace pinpoint::daemon
