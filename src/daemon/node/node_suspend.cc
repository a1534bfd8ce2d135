// Node's suspend and resume (issue 56 item 4; docs/scheduling.md "Suspend"): who may, which jobs
// can be, and what a suspended job asks the scheduler for to resume. The suspend itself is the
// runner's (job_suspend.cc).
#include <algorithm>
#include <functional>

#include "common/log.h"
#include "daemon/jobs/sched_view.h"
#include "daemon/node/node.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

namespace {

std::string Job(JobId id) { return "job " + std::to_string(id); }

// Each of `ids` that exists, given to `act` when the caller is root (`verb`: "suspends").
std::vector<Status> ForRootEach(const api::Caller& caller, const std::vector<JobId>& ids,
                                JobTable& jobs, const char* verb,
                                const std::function<Status(JobRecord&)>& act) {
  std::vector<Status> out;
  for (JobId id : ids) {
    auto it = jobs.find(id);
    if (it == jobs.end())
      out.push_back(NotFound(Job(id) + " not found"));
    else if (!caller.IsRoot())
      out.push_back(PermissionDenied(std::string("only root ") + verb + " jobs (" + Job(id) + ")"));
    else
      out.push_back(act(it->second));
  }
  return out;
}

}  // namespace

uint64_t Node::DeviceBytesOf(const JobRecord& job) const {
  // What its slices may hold, not what the watcher last saw (a second old: a job that just filled
  // its memory read 0 B on an H100): the host must hold the worst case.
  uint64_t bytes = 0;
  for (const Allocation& a : job.allocations) {
    uint64_t whole =
        a.device_index >= 0 && static_cast<size_t>(a.device_index) < devices_.devices.size()
            ? devices_.devices[static_cast<size_t>(a.device_index)].mem_bytes
            : 0;
    bytes += a.gpu_mem_bytes > 0 ? a.gpu_mem_bytes : whole;
  }
  return bytes;
}

std::string Node::SuspendRefusal(const JobRecord& job) const {
  if (job.state != JobState::kRunning) return Job(job.id) + " is not running";
  if (job.kind == JobKind::kLease)
    return Job(job.id) + " is a lease: a container's processes are not suspended";
  if (job.suspend.phase != SuspendPhase::kNone)
    return Job(job.id) + " is " + SuspendPhaseName(job.suspend.phase) + " already";
  if (job.cancel_requested || job.stop_reason != Reason::kNone)
    return Job(job.id) + " is being stopped";
  if (job.allocations.empty()) return Job(job.id) + " holds no GPU: there is nothing to suspend";
  for (const Allocation& a : job.allocations)
    if (a.mode == SharingMode::kMps)
      return Job(job.id) +
             " runs as an MPS client, which the driver cannot checkpoint "
             "(CUDA_ERROR_NOT_SUPPORTED): it cannot be suspended";
  if (deps_.checkpointer == nullptr) return "this node cannot suspend jobs";
  if (Status can = deps_.checkpointer->Available(); !can.ok()) return can.message();
  // Its device memory goes to host memory: there must be room for it, by the node's account
  // (what jobs hold, and what suspended jobs took there) and by the kernel's.
  const uint64_t bytes = DeviceBytesOf(job);
  uint64_t held = 0;
  for (const auto& [id, other] : jobs_)
    if (other.state == JobState::kRunning)
      held += other.request.mem_bytes + other.suspend.host_bytes;
  const uint64_t total = devices_.host.mem_bytes;
  if (total > 0 && held + bytes > total)
    return "the node's host memory has no room for " + Job(job.id) + "'s " + FormatSize(bytes) +
           " of device memory (" + FormatSize(held < total ? total - held : 0) +
           " not held by jobs)";
  if (deps_.host_mem_available)
    if (std::optional<uint64_t> free = deps_.host_mem_available(); free && bytes > *free)
      return "the node's host memory has no room for " + Job(job.id) + "'s " + FormatSize(bytes) +
             " of device memory (" + FormatSize(*free) + " available)";
  return "";
}

sched::Demand Node::ResumeDemandOf(const JobRecord& job) const {
  sched::Demand d = DemandOf(job, &options_.admission.qos);
  d.cpus = 0;  // its host CPUs and memory it kept (its running entry holds them)
  d.mem_bytes = 0;
  d.hold = Hold::kNone;
  d.after.clear();
  d.afterok.clear();
  d.array_limit = 0;
  d.mig_profile.clear();
  d.isolated = false;
  d.gpus = static_cast<int>(job.allocations.size());
  d.devices.clear();
  for (const Allocation& a : job.allocations) d.devices.push_back(a.device_index);
  if (!job.allocations.empty()) {
    d.gpu_mem_bytes = job.allocations.front().gpu_mem_bytes;
    d.gpu_share_pct = job.allocations.front().gpu_share_pct;
  }
  return d;
}

std::vector<Status> Node::SuspendJobs(const api::Caller& caller, const std::vector<JobId>& ids) {
  return ForRootEach(caller, ids, jobs_, "suspends", [&](JobRecord& job) -> Status {
    if (std::string why = SuspendRefusal(job); !why.empty()) return FailedPrecondition(why);
    return runner_.Suspend(job, "root", /*resume=*/false, DeviceBytesOf(job));
  });
}

std::vector<Status> Node::ResumeJobs(const api::Caller& caller, const std::vector<JobId>& ids) {
  return ForRootEach(caller, ids, jobs_, "resumes", [&](JobRecord& job) -> Status {
    SuspendPhase phase = job.suspend.phase;
    if (job.state != JobState::kRunning ||
        (phase != SuspendPhase::kSuspended && phase != SuspendPhase::kSuspending))
      return FailedPrecondition(Job(job.id) + " is not suspended");
    if (!job.suspend.resume) {
      job.suspend.resume = true;
      Status s = jobs_.Persist(job, "resume-asked", "resumes on its GPU(s) once they have room");
      if (!s.ok()) {
        job.suspend.resume = false;
        return s;
      }
    }
    dirty_ = true;
    return Status::Ok();
  });
}

}  // namespace pinpoint::daemon
