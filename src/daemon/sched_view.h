// A job record as the scheduler (sched/placement.h) sees it. Pure.
#pragma once

#include <vector>

#include "pinpoint/job.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

// A suspect after an MPS fault runs alone on its device until it has shown it is not the cause.
bool RunsIsolated(const JobRecord& r);
// What a placed job holds: one slot per allocation.
std::vector<sched::Slot> SlotsOf(const JobRecord& job);
// What a pending job (or a lease being opened) asks for.
sched::Demand DemandOf(const JobRecord& r);

}  // namespace pinpoint::daemon
