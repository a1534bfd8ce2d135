// A job record as the scheduler (sched/placement.h) and the sharing backends see it. Pure.
#pragma once

#include <vector>

#include "common/job_record.h"
#include "daemon/jobs/users.h"
#include "pinpoint/job.h"
#include "pinpoint/service_class.h"
#include "sched/placement.h"
#include "sharing/backend.h"

namespace pinpoint::daemon {

// A suspect after an MPS fault runs alone on its device until it has shown it is not the cause.
bool RunsIsolated(const JobRecord& r);
// What a placed job holds: one slot per allocation.
std::vector<sched::Slot> SlotsOf(const JobRecord& job);
// What a pending job (or a lease being opened) asks for.
// The priority the scheduler orders `r` by: its own, with `classes` (config qos) its service
// class's added (a class not among them, as an old record's "", adds nothing).
int PriorityOf(const JobRecord& r, const std::vector<ServiceClass>* classes);
// The class a job runs in: the one it names, or `default_qos` for a record from before service
// classes (it names none); null when the node has no such class.
const ServiceClass* ClassOf(const JobRecord& job, const std::vector<ServiceClass>& classes,
                            const std::string& default_qos);
// With `classes` (config qos), its service class's priority is added to its own (a class not
// among them, as an old record's "", adds nothing).
sched::Demand DemandOf(const JobRecord& r, const std::vector<ServiceClass>* classes = nullptr);
// A wait's detail for people: with reason kMpsUser, the uid's name from `users` too; with reason
// kResources, `holds_note` too (what holds devices after its job ended: WatchFeedback::HoldsNote).
std::string WaitDetail(const sched::Wait& wait, UserDirectory& users,
                       const std::string& holds_note = "");
// What a sharing backend is told of `job`'s hold on allocation `a` (sharing::Backend).
// With `classes` (config qos), client_priority is its service class's mps_client_priority (0 for a
// class not among them, or "" when `default_qos` is not given).
sharing::Slice SliceOf(const JobRecord& job, const Allocation& a,
                       const std::vector<ServiceClass>* classes = nullptr,
                       const std::string& default_qos = kDefaultQos);

}  // namespace pinpoint::daemon
