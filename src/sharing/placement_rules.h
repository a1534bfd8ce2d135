// What the scheduler may do with a device: plain data that a device's sharing backend declares
// (Backend::Rules) and the daemon copies into each sched::Device. The scheduler reads these rules
// and never a mode, so a new mode with rules of its own needs no change in sched/.
#pragma once

#include <string>

namespace pinpoint::sharing {

struct PlacementRules {
  // Every job on the device holds all of it, whatever it asked for (exclusive): a slice placed
  // there leaves no room for another job.
  bool whole_device = false;
  // Jobs of one Unix user at a time share the device (an MPS server serves one uid): another
  // user's slice waits until the device is empty (wait reason mps-user).
  bool one_user = false;
  // At most this many jobs at once on the device; -1: no bound; 0: it takes no slices at all
  // (whole-device jobs still run), for the reason in no_slices_reason.
  int max_jobs = -1;
  // Why the device takes no slices (max_jobs 0), one phrase a user reads at submit; "" else.
  std::string no_slices_reason = "";

  bool takes_slices() const { return max_jobs != 0; }
  bool operator==(const PlacementRules&) const = default;
};

}  // namespace pinpoint::sharing
