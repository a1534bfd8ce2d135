#include "daemon/jobs/lifecycle.h"

#include <string.h>

#include <algorithm>
#include <tuple>

#include "pinpoint/time_limit.h"

namespace pinpoint::daemon::lifecycle {

namespace {

using Kind = launch::ExitStatus::Kind;

// Rule 4: the end the program's status alone gives.
JobEnd ExitEnd(const launch::ExitStatus& exit) {
  JobEnd end;
  switch (exit.kind) {
    case Kind::kExited:
      end.exit_code = exit.exit_code;
      end.state = exit.exit_code == 0 ? JobState::kCompleted : JobState::kFailed;
      end.reason = exit.exit_code == 0 ? Reason::kExitedZero : Reason::kExitedNonZero;
      end.detail = "exit code " + std::to_string(exit.exit_code);
      break;
    case Kind::kSignaled:
      end.term_signal = exit.term_signal;
      end.state = JobState::kFailed;
      end.reason = Reason::kSignaled;
      end.detail = std::string("killed by signal ") + std::to_string(exit.term_signal) + " (" +
                   ::strsignal(exit.term_signal) + ")";
      break;
    case Kind::kLaunchFailed:
      end.state = JobState::kFailed;
      end.reason = Reason::kLaunchFailed;
      end.detail = exit.error;
      break;
    case Kind::kNoStatus:
    case Kind::kNeverLaunched:
    case Kind::kOrphaned:  // not an end; Node never decides one from it
      end.state = JobState::kFailed;
      end.reason = Reason::kLost;
      end.detail = exit.error.empty() ? "the job's supervisor vanished" : exit.error;
      break;
  }
  std::string why = SupervisorsReason(exit);
  if (!why.empty()) end.detail += ": " + why;
  if (exit.output_exceeded && end.state == JobState::kFailed) end.reason = Reason::kOutputExceeded;
  return end;
}

}  // namespace

std::string SupervisorsReason(const launch::ExitStatus& exit) {
  bool ran = exit.kind == Kind::kExited || exit.kind == Kind::kSignaled;
  return ran ? exit.error : "";
}

void Submitted(JobRecord& job, int64_t now_ms) {
  job.state = JobState::kPending;
  job.submit_ms = now_ms;
}

std::string Why(const JobRecord& job) {
  return job.detail.empty() ? ReasonName(job.reason) : job.detail;
}

void Waiting(JobRecord& job, Reason reason, std::string detail) {
  // A preempted job says so until it runs again ("preempted by job N"), then why it waits.
  if (job.reason == Reason::kPreempted && job.state == JobState::kPending &&
      reason != Reason::kHeld) {
    std::string why = detail.empty() ? ReasonName(reason) : detail;
    job.detail = job.detail.substr(0, job.detail.find("; ")) + "; back in the queue: " + why;
    return;
  }
  job.reason = reason;
  job.detail = std::move(detail);
}

void Started(JobRecord& job, std::vector<Allocation> allocations, int64_t now_ms) {
  job.allocations = std::move(allocations);
  job.state = JobState::kRunning;
  job.reason = Reason::kNone;
  job.detail.clear();
  job.start_ms = now_ms;
  job.pid = 0;
}

void Requeued(JobRecord& job, Reason reason, std::string detail) {
  job.state = JobState::kPending;
  job.reason = reason;
  job.detail = std::move(detail);
  job.allocations.clear();
  job.cpuset.clear();
  job.start_ms = 0;
  job.suspend = {};
  job.suspended_ms = 0;  // its next run's time limit is whole
  job.pid = 0;
  job.pid_start_ticks = 0;
  job.stop_reason = Reason::kNone;  // a stop belongs to the run it stopped
  job.stop_detail.clear();
  // The run pinpoint stopped is over; the job's next run is its own (a user's cancel is never
  // requeued: DecideEnd).
  job.cancel_requested = false;
  job.cancelled_by.clear();
}

void Cancel(JobRecord& job, const std::string& by, int64_t now_ms) {
  if (job.stop_reason == Reason::kPreempted) {  // the user's cancel wins over a requeue
    job.stop_reason = Reason::kNone;
    job.stop_detail.clear();
  }
  job.cancel_requested = true;
  job.cancelled_by = by;
  if (job.state != JobState::kPending) return;
  job.state = JobState::kCancelled;
  job.reason = Reason::kCancelled;
  job.detail = "cancelled by " + by + " while pending";
  job.end_ms = now_ms;
}

bool Stop(JobRecord& job, Reason stop_reason, std::string stop_detail) {
  if (job.cancel_requested || job.stop_reason != Reason::kNone) return false;
  job.stop_reason = stop_reason;
  job.stop_detail = std::move(stop_detail);
  job.cancel_requested = true;
  job.cancelled_by = kStoppedBy;
  return true;
}

std::optional<int64_t> TimeLimitDeadlineMs(const JobRecord& job) {
  if (job.state != JobState::kRunning || job.request.time_limit_s <= 0 || job.start_ms <= 0 ||
      job.suspend.phase != SuspendPhase::kNone)
    return std::nullopt;
  int64_t deadline = 0;
  if (__builtin_mul_overflow(job.request.time_limit_s, int64_t{1000}, &deadline) ||
      __builtin_add_overflow(deadline, job.start_ms, &deadline) ||
      __builtin_add_overflow(deadline, std::max<int64_t>(job.suspended_ms, 0), &deadline))
    return std::nullopt;  // beyond any clock
  return deadline;
}

int64_t EndSuspend(JobRecord& job, int64_t now_ms) {
  if (job.suspend.phase == SuspendPhase::kNone) return 0;
  int64_t took = std::max<int64_t>(now_ms - job.suspend.since_ms, 0);
  if (__builtin_add_overflow(std::max<int64_t>(job.suspended_ms, 0), took, &job.suspended_ms))
    job.suspended_ms = INT64_MAX;
  job.suspend = {};
  return took;
}

std::optional<int64_t> SignalDueMs(const JobRecord& job) {
  std::optional<int64_t> deadline = TimeLimitDeadlineMs(job);
  if (job.request.signal == 0 || !deadline) return std::nullopt;
  // signal_before_s is at most kMaxSignalBeforeS: no overflow.
  return std::max(job.start_ms, *deadline - job.request.signal_before_s * 1000);
}

std::string TimeLimitDetail(const JobRecord& job) {
  return "ran past its time limit of " + FormatTimeLimit(job.request.time_limit_s);
}

void NeverStarts(JobRecord& job, Reason reason, std::string detail, int64_t now_ms) {
  job.cancel_requested = true;
  job.cancelled_by = kStoppedBy;
  job.state = JobState::kCancelled;
  job.reason = reason;
  job.detail = std::move(detail);
  job.end_ms = now_ms;
}

void SupervisorLost(JobRecord& job) {
  if (job.stop_reason != Reason::kNone || job.cancel_requested) return;
  job.stop_reason = Reason::kLost;
  job.stop_detail = "its supervisor died; its job's processes were ended";
}

JobEnd DecideEnd(const JobRecord& job, const EndFacts& facts) {
  JobEnd end = ExitEnd(facts.exit);
  end.end_ms = facts.now_ms;
  end.fault_suspect = job.fault_suspect;
  bool completed = facts.exit.kind == Kind::kExited && facts.exit.exit_code == 0;
  if (completed) return end;
  if (facts.mps_fault && !job.cancel_requested) {
    if ((facts.policy == MpsFaultPolicy::kRequeue || job.request.requeue) && !job.fault_suspect) {
      JobEnd requeue;
      requeue.requeue = true;
      requeue.state = JobState::kPending;
      requeue.reason = Reason::kMpsFaultVictim;
      requeue.detail = "ended by a fatal MPS fault on its device; reruns alone to find the cause";
      requeue.fault_suspect = true;
      return requeue;
    }
    end.state = JobState::kFailed;
    end.reason = Reason::kGpuFault;
    end.detail =
        job.fault_suspect
            ? "caused a fatal MPS fault: it faulted again when run alone (" + end.detail + ")"
            : "ended by a fatal MPS fault on its device (" + end.detail + ")";
    return end;
  }
  if (facts.exit.kind == Kind::kNoStatus && job.request.requeue && !job.cancel_requested &&
      job.stop_reason == Reason::kNone) {
    JobEnd requeue;
    requeue.requeue = true;
    requeue.state = JobState::kPending;
    requeue.reason = Reason::kRequeued;
    requeue.detail = "lost with its node (" + end.detail + "); back in the queue (--requeue)";
    requeue.fault_suspect = job.fault_suspect;
    return requeue;
  }
  if (job.stop_reason == Reason::kPreempted && facts.preempt_mode != PreemptMode::kCancel) {
    JobEnd requeue;
    requeue.requeue = true;
    requeue.state = JobState::kPending;
    requeue.reason = Reason::kPreempted;
    requeue.detail = job.stop_detail + "; back in the queue";
    if (facts.preempt_mode == PreemptMode::kSuspend)
      requeue.detail +=
          " (its class says suspend, but it could not be suspended: its events say why)";
    requeue.fault_suspect = job.fault_suspect;
    return requeue;
  }
  if (job.stop_reason == Reason::kPreempted) {
    end.state = JobState::kCancelled;
    end.reason = Reason::kPreempted;
    end.detail = job.stop_detail + " (" + end.detail + ")";
  } else if (job.stop_reason != Reason::kNone) {
    end.state = JobState::kFailed;
    end.reason = job.stop_reason;
    end.detail = job.stop_detail + " (" + end.detail + ")";
  } else if (job.cancel_requested) {
    end.state = JobState::kCancelled;
    end.reason = Reason::kCancelled;
    end.detail = "cancelled by " + job.cancelled_by + " (" + end.detail + ")";
  }
  return end;
}

JobEnd DecideLeaseEnd(const JobRecord& lease, Reason cause, bool mps_fault, int64_t now_ms) {
  JobEnd end;
  end.end_ms = now_ms;
  end.fault_suspect = lease.fault_suspect;
  if (mps_fault && !lease.cancel_requested) {
    end.state = JobState::kFailed;
    end.reason = Reason::kGpuFault;
    end.detail = "ended by a fatal MPS fault on its device";
  } else if (lease.stop_reason != Reason::kNone) {
    end.state = JobState::kFailed;
    end.reason = lease.stop_reason;
    end.detail = lease.stop_detail + (lease.lease_cgroup.empty() ? " (no container was attached)"
                                                                 : " (its container was stopped)");
  } else if (lease.cancel_requested) {
    end.state = JobState::kCancelled;
    end.reason = Reason::kCancelled;
    end.detail = "cancelled by " + lease.cancelled_by;
  } else if (cause == Reason::kLaunchFailed) {
    end.state = JobState::kFailed;
    end.reason = cause;
    end.detail = "its MPS environment could not be prepared";
  } else {
    end.state = JobState::kCompleted;
    end.reason = cause;
    if (cause == Reason::kLeaseClosed)
      end.detail = "closed";
    else if (cause == Reason::kLeaseEmptied)
      end.detail = "its container's cgroup has no process left";
    else
      end.detail = "no container was attached in time";
  }
  return end;
}

void ApplyEnd(const JobEnd& end, JobRecord& job) {
  if (end.requeue) Requeued(job, end.reason, end.detail);
  std::tie(job.state, job.reason, job.detail, job.exit_code, job.term_signal, job.end_ms,
           job.fault_suspect) = std::tie(end.state, end.reason, end.detail, end.exit_code,
                                         end.term_signal, end.end_ms, end.fault_suspect);
}

}  // namespace pinpoint::daemon::lifecycle
