#include "daemon/jobs/sched_view.h"

namespace pinpoint::daemon {

bool RunsIsolated(const JobRecord& r) { return r.fault_suspect && r.request.IsSlice(); }

std::vector<sched::Slot> SlotsOf(const JobRecord& job) {
  std::vector<sched::Slot> slots;
  for (const auto& a : job.allocations)
    slots.push_back({a.device_index, a.gpu_mem_bytes, a.gpu_share_pct, RunsIsolated(job)});
  return slots;
}

sharing::Slice SliceOf(const JobRecord& job, const Allocation& a,
                       const std::vector<ServiceClass>* classes, const std::string& default_qos) {
  sharing::Slice s;
  s.device_index = a.device_index;
  s.device_uuid = a.uuid;
  s.uid = job.uid;
  s.gid = job.gid;
  s.gpu_mem_bytes = a.gpu_mem_bytes;
  s.gpu_share_pct = a.gpu_share_pct;
  s.job_id = static_cast<uint64_t>(job.id);
  if (classes != nullptr)
    if (const ServiceClass* sc = ClassOf(job, *classes, default_qos))
      s.client_priority = sc->mps_client_priority;
  return s;
}

const ServiceClass* ClassOf(const JobRecord& job, const std::vector<ServiceClass>& classes,
                            const std::string& default_qos) {
  return FindServiceClass(classes, job.request.qos.empty() ? default_qos : job.request.qos);
}

std::string WaitDetail(const sched::Wait& wait, UserDirectory& users,
                       const std::string& holds_note) {
  std::string detail = wait.detail;
  if (wait.mps_uid)
    detail += "; uid " + std::to_string(*wait.mps_uid) + " is " + NameOrUid(users, *wait.mps_uid);
  if (wait.reason == Reason::kResources && !holds_note.empty()) detail += "; " + holds_note;
  return detail;
}

int PriorityOf(const JobRecord& r, const std::vector<ServiceClass>* classes) {
  const ServiceClass* sc = classes != nullptr ? FindServiceClass(*classes, r.request.qos) : nullptr;
  return r.request.priority + (sc != nullptr ? sc->priority : 0);
}

sched::Demand DemandOf(const JobRecord& r, const std::vector<ServiceClass>* classes) {
  sched::Demand d;
  d.isolated = RunsIsolated(r);
  d.id = r.id;
  d.uid = r.uid;
  d.priority = PriorityOf(r, classes);
  d.gpus = r.request.gpus;
  d.gpu_mem_bytes = r.request.gpu_mem_bytes;
  d.gpu_share_pct = r.request.gpu_share_pct;
  d.cpus = r.request.cpus;
  d.mem_bytes = r.request.mem_bytes;
  d.devices = r.request.devices;
  d.hold = r.hold;
  d.after = r.request.after;
  d.afterok = r.request.afterok;
  d.array_id = r.array.array_id;
  d.array_limit = r.array.limit;
  d.mig_profile = r.request.mig_profile;
  return d;
}

}  // namespace pinpoint::daemon
