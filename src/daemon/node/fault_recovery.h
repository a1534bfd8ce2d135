// FaultRecovery: the node's MPS faults, device by device (docs/mps.md "Faults"). A fatal fault
// claimed on a device puts the device in recovery with the running jobs the claim may touch: it
// takes no new job until they have all ended (Leave), and then its MPS daemons are reset. Claims
// and the driver's Xids go to FaultTracker, whose verdicts drain a device until pinpointd
// restarts; the reason is kept for the `gpus` reply.
//
// It changes no job record: it says which jobs a fault hit, and Node decides their ends
// (lifecycle::DecideEnd). Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/job_record.h"
#include "daemon/jobs/job_table.h"
#include "daemon/node/fault_tracker.h"
#include "pinpoint/job.h"
#include "sched/inventory.h"
#include "sharing/backends.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

class FaultRecovery {
 public:
  // `drain_after` counted faults drain a device (config mps_fault_drain_after). `store` (not
  // owned, must outlive it) takes each hit job's "mps-fault" event.
  FaultRecovery(int drain_after, store::JobStore* store) : tracker_(drain_after), store_(store) {}

  // A fatal-fault claim from the `fault.mode` server of `fault.uid` on `fault.device_index`, at
  // now_ms. The claim comes from a log its user can write, so it may touch that user's running
  // jobs held there in that mode only: those are in the device's recovery (each gets an event).
  // When none is, the device is reset at once through `sharing`.
  void Claim(const sharing::Event& fault, const JobTable& jobs, sharing::Backends& sharing,
             int64_t now_ms);
  // The driver reported a critical Xid on device `device` at time_ms (it confirms claims).
  void Xid(int device, int64_t time_ms) { tracker_.Xid(device, time_ms); }
  // Applies FaultTracker's verdicts at now_ms: logs counted and unconfirmed faults, and drains the
  // devices past the threshold (`drained` set in `devices`, the reason kept). Returns whether it
  // drained one.
  bool Evaluate(std::vector<sched::Device>& devices, int64_t now_ms);
  // `job` has ended: it leaves the recovery of its devices, and the last job to leave a device
  // resets it through `sharing`. Returns whether a fault hit the job.
  bool Leave(const JobRecord& job, sharing::Backends& sharing);

  bool Recovering(int device) const { return recovering_.count(device) > 0; }
  // The devices in recovery, ascending: the scheduler sees them as drained.
  std::vector<int> RecoveringDevices() const;
  // Why `device` was drained; "" when it was not.
  std::string DrainReason(int device) const;

 private:
  FaultTracker tracker_;
  store::JobStore* store_;
  std::map<int, std::set<JobId>> recovering_;  // device -> the jobs a fault hit there
  std::map<int, std::string> drain_reason_;
};

}  // namespace pinpoint::daemon
