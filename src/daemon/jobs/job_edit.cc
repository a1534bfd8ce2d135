#include "daemon/jobs/job_edit.h"

#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/occupancy.h"
#include "pinpoint/time_limit.h"

namespace pinpoint::daemon {

namespace {

// The fields a job takes only while pending.
bool PendingFieldsDiffer(const JobRequest& r, const JobEdit& e) {
  return (e.time_limit_s && *e.time_limit_s != r.time_limit_s) ||
         (e.gpu_mem_bytes && *e.gpu_mem_bytes != r.gpu_mem_bytes) ||
         (e.gpu_share_pct && *e.gpu_share_pct != r.gpu_share_pct) ||
         (e.priority && *e.priority != r.priority) || (e.name && *e.name != r.name) ||
         (e.gpus && *e.gpus != r.gpus) || (e.cpus && *e.cpus != r.cpus) ||
         (e.mem_bytes && *e.mem_bytes != r.mem_bytes) ||
         (e.mig_profile && *e.mig_profile != r.mig_profile) || (e.qos && *e.qos != r.qos);
}

std::string Job(const JobRecord& job) { return "job " + std::to_string(job.id); }

// "2h", or "none" for a job without a limit.
std::string Limit(int64_t seconds) { return seconds == 0 ? "none" : FormatTimeLimit(seconds); }

// Whether `job` takes only a running job's edits: it runs, or it is a lease (placed, never
// queued: a pending lease is starting).
bool AsRunning(const JobRecord& job) {
  return job.state != JobState::kPending || !OccupancyOf(job.kind).editable;
}

}  // namespace

bool EditChanges(const JobRecord& job, const JobEdit& edit) {
  if (IsFinal(job.state) || job.cancel_requested) return false;
  if (!OccupancyOf(job.kind).editable)
    return edit.time_limit_s && *edit.time_limit_s != job.request.time_limit_s;
  if (edit.array_limit && job.array.array_id != 0 && *edit.array_limit != job.array.limit)
    return true;
  return job.state == JobState::kPending && PendingFieldsDiffer(job.request, edit);
}

Result<bool> ApplyEdit(JobRecord& job, const JobEdit& edit, bool root) {
  bool lease = !OccupancyOf(job.kind).editable;
  if (lease &&
      (edit.gpu_mem_bytes || edit.gpu_share_pct || edit.priority || edit.name || edit.gpus ||
       edit.cpus || edit.mem_bytes || edit.mig_profile || edit.array_limit || edit.qos))
    return FailedPrecondition(Job(job) +
                              " is a lease: only its time limit can change (for the rest, close "
                              "it and open another)");
  if (IsFinal(job.state))
    return FailedPrecondition(Job(job) + " already ended (" + JobStateName(job.state) + ")");
  if (job.cancel_requested) return FailedPrecondition(Job(job) + " is being cancelled");
  if (edit.array_limit && job.array.array_id == 0)
    return InvalidArgument(Job(job) + " is no task of a job array");
  JobRequest& r = job.request;
  if (AsRunning(job)) {
    if (edit.gpu_mem_bytes || edit.gpu_share_pct || edit.priority || edit.name || edit.gpus ||
        edit.cpus || edit.mem_bytes || edit.mig_profile || edit.qos)
      return FailedPrecondition(
          Job(job) + " is " + JobStateName(job.state) +
          ": only its time limit can change now (the rest is fixed once it starts)");
    // A user may shorten a running job, never lengthen it: the node's time was planned on it.
    bool longer =
        edit.time_limit_s && *edit.time_limit_s != r.time_limit_s &&
        (*edit.time_limit_s == 0 || (r.time_limit_s != 0 && *edit.time_limit_s > r.time_limit_s));
    if (longer && !root)
      return PermissionDenied(Job(job) + (lease ? " is a lease" : " is running") +
                              ": only root may raise its time limit (" + Limit(r.time_limit_s) +
                              " now; it may be lowered)");
  }
  bool pending_change = !AsRunning(job) && PendingFieldsDiffer(r, edit);
  bool time_change = edit.time_limit_s && *edit.time_limit_s != r.time_limit_s;
  bool limit_change = edit.array_limit && *edit.array_limit != job.array.limit;
  if (!pending_change && !time_change && !limit_change) return false;
  if (edit.time_limit_s) r.time_limit_s = *edit.time_limit_s;
  if (edit.gpu_mem_bytes) r.gpu_mem_bytes = *edit.gpu_mem_bytes;
  if (edit.gpu_share_pct) r.gpu_share_pct = *edit.gpu_share_pct;
  if (edit.priority) r.priority = *edit.priority;
  if (edit.name) r.name = *edit.name;
  if (edit.gpus) r.gpus = *edit.gpus;
  if (edit.cpus) r.cpus = *edit.cpus;
  if (edit.mem_bytes) r.mem_bytes = *edit.mem_bytes;
  if (edit.mig_profile) r.mig_profile = *edit.mig_profile;
  if (edit.qos) r.qos = *edit.qos;
  if (edit.array_limit) job.array.limit = *edit.array_limit;
  // The next pass says why it waits (a held job still waits "held").
  if (!AsRunning(job) && job.hold == Hold::kNone) lifecycle::Waiting(job, Reason::kNone, "");
  return true;
}

}  // namespace pinpoint::daemon
