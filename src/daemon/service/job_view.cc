#include "daemon/service/job_view.h"

#include "daemon/jobs/enforcement.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

JobView ToView(const JobRecord& record, EnvShown env_shown, bool enforcement) {
  JobView v;
  v.id = record.id;
  v.request = record.request;
  if (env_shown != EnvShown::kFull) v.request.env.clear();
  v.env_shown = env_shown;
  v.uid = record.uid;
  v.gid = record.gid;
  v.user = record.user;
  v.state = record.state;
  v.reason = ReasonName(record.reason);
  v.detail = record.detail;
  v.submit_ms = record.submit_ms;
  v.start_ms = record.start_ms;
  v.end_ms = record.end_ms;
  v.exit_code = record.exit_code;
  v.term_signal = record.term_signal;
  v.allocations = record.allocations;
  v.usage = record.usage;
  v.pid = record.pid;
  v.pid_start_ticks = record.pid_start_ticks;
  v.cancel_requested = record.cancel_requested;
  v.cancelled_by = record.cancelled_by;
  v.fault_suspect = record.fault_suspect;
  v.stop_reason = ReasonName(record.stop_reason);
  v.stop_detail = record.stop_detail;
  v.hold = record.hold;
  v.kind = record.kind;
  v.lease_cgroup = record.lease_cgroup;
  if (record.suspend.phase != SuspendPhase::kNone && record.state == JobState::kRunning) {
    const SuspendRecord& sr = record.suspend;
    v.suspend = SuspendPhaseName(sr.phase);
    v.suspend_detail = "asked by " + sr.by + "; " + FormatSize(sr.host_bytes) +
                       " of device memory in host memory; " +
                       (sr.resume ? "resumes on its GPU(s) once they have room"
                                  : "resumes when root resumes it (pinpoint resume)");
  }
  v.suspended_ms = record.suspended_ms;
  v.cpuset = record.cpuset;
  v.array = record.array;
  if (enforcement) v.enforcement = EnforcementOf(record);
  return v;
}

JobView ViewFor(const api::Caller& caller, const JobRecord& record) {
  return ToView(record,
                api::MayControlJob(caller, record.uid) ? EnvShown::kFull : EnvShown::kHidden);
}

}  // namespace pinpoint::daemon
