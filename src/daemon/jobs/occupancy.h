// What differs between the kinds of what occupies a device (JobKind, pinpoint/job.h): a job, whose
// command pinpoint starts and supervises (daemon/node/occupant.h ShimOccupant), or a lease, whose
// container attaches to its slice (LeaseOccupant). Each difference is a property here, read where
// it matters, instead of a branch on the kind; Occupant (daemon/node) is who runs the processes.
// Pure, constant.
#pragma once

#include "common/job_record.h"
#include "pinpoint/job.h"

namespace pinpoint::daemon {

struct Occupancy {
  // `update` may change its request while it waits: a job keeps its place in the queue; a lease
  // has none (it is placed at once or refused): only its time limit changes, by a running job's
  // rules, and for the rest it is closed and opened again. (Both end at their time limit.)
  bool editable = true;
  // pinpoint picks the host CPUs it runs on (JobRecord::cpuset); a container's are its runtime's.
  bool pinned_cpus = true;
  // Pending means placed and waiting for its MPS control daemon (open_lease answers once it
  // serves), not waiting in the queue: at a restart it is resumed as such.
  bool pending_is_starting = false;
};

inline const Occupancy& OccupancyOf(JobKind kind) {
  static constexpr Occupancy kJob{};
  static constexpr Occupancy kLease{
      .editable = false, .pinned_cpus = false, .pending_is_starting = true};
  return kind == JobKind::kLease ? kLease : kJob;
}

}  // namespace pinpoint::daemon
