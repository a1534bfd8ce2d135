// A job record as the scheduler (sched/placement.h) and the sharing backends see it. Pure.
#pragma once

#include <vector>

#include "common/job_record.h"
#include "daemon/jobs/users.h"
#include "pinpoint/job.h"
#include "sched/placement.h"
#include "sharing/backend.h"

namespace pinpoint::daemon {

// A suspect after an MPS fault runs alone on its device until it has shown it is not the cause.
bool RunsIsolated(const JobRecord& r);
// What a placed job holds: one slot per allocation.
std::vector<sched::Slot> SlotsOf(const JobRecord& job);
// What a pending job (or a lease being opened) asks for.
sched::Demand DemandOf(const JobRecord& r);
// A wait's detail for people: with reason kMpsUser, the uid's name from `users` too; with reason
// kResources, `holds_note` too (what holds devices after its job ended: WatchFeedback::HoldsNote).
std::string WaitDetail(const sched::Wait& wait, UserDirectory& users,
                       const std::string& holds_note = "");
// What a sharing backend is told of `job`'s hold on allocation `a` (sharing::Backend).
sharing::Slice SliceOf(const JobRecord& job, const Allocation& a);

}  // namespace pinpoint::daemon
