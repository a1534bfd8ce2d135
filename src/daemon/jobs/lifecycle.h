// Lifecycle: the rules of a job's life, decided in one place. Every change of a job's state,
// reason and detail is one of the transitions below; Node (node.h) only acts on them: it
// releases resources, persists, resets MPS devices and signals processes.
//
//   pending ──Started──▶ running ──DecideEnd──▶ completed | failed | cancelled
//      ▲  └──Cancel──▶ cancelled      │
//      └────────Requeued / DecideEnd ─┘  (never launched, MPS device taken, MPS fault victim)
//
// Pure: no I/O, no clock (times are passed in), no state of its own. The drain rule for devices
// that keep faulting is FaultTracker's (fault_tracker.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/job_record.h"
#include "launch/launcher.h"
#include "pinpoint/job.h"
#include "pinpoint/service_class.h"

namespace pinpoint::daemon {

// What happens to the jobs an MPS fault ended (config mps_fault_policy, docs/mps.md).
enum class MpsFaultPolicy {
  kRequeue,  // each is requeued once as a suspect and reruns alone; one that faults again fails
  kFail,     // each fails with gpu-fault at once
};

namespace lifecycle {

// Who pinpoint names as the canceller of the jobs it stops itself.
inline constexpr char kStoppedBy[] = "pinpoint";

// A new job: pending since now_ms, no reason yet.
void Submitted(JobRecord& job, int64_t now_ms);

// A pending job the scheduler did not start in this pass, and why (sched::Wait). One requeued by a
// preemption keeps its reason (preempted) and the job that preempted it, and says why it waits.
void Waiting(JobRecord& job, Reason reason, std::string detail);
// Why a job waits or ended, for one line: its detail, or its reason's name where it has none.
std::string Why(const JobRecord& job);

// pending -> running on `allocations` since now_ms; no supervisor pid yet.
void Started(JobRecord& job, std::vector<Allocation> allocations, int64_t now_ms);

// running -> pending again (its program never ran, or may run again): the allocations, the start
// time, the supervisor's pid and any stop or cancel by pinpoint (a preemption's) are cleared.
void Requeued(JobRecord& job, Reason reason, std::string detail);

// A cancel by `by` (a user name) of a job that has not ended; one being preempted is cancelled
// instead (never requeued). A pending job ends at once
// (cancelled, "cancelled by <by> while pending", end_ms = now_ms); a running job only records the
// request: Node stops it, and DecideEnd gives its end.
void Cancel(JobRecord& job, const std::string& by, int64_t now_ms);

// pinpoint stops a running job itself (for example Reason::kGpuMemExceeded, detail saying why):
// its end is `stop_reason` unless it completes first (DecideEnd rule 2), and it counts as
// cancelled by pinpoint. Returns false and changes nothing when the job is already being stopped
// or cancelled: the first stop wins.
bool Stop(JobRecord& job, Reason stop_reason, std::string stop_detail);

// When a running job's or lease's time limit (request.time_limit_s, from its start, the time it
// spent suspended not counted: suspended_ms) is reached, in Unix epoch ms; nullopt for one that is
// not running, has no limit, or is in a suspend now (its time stands still until it is resumed).
// Node stops it at this moment through Stop(Reason::kTimeLimit).
std::optional<int64_t> TimeLimitDeadlineMs(const JobRecord& job);

// A suspend that ends (resumed, undone, failed, or the job ended): its time, from when it was
// asked, joins suspended_ms (saturating), and the job's suspend is cleared. Returns that time (0
// and nothing done without one).
int64_t EndSuspend(JobRecord& job, int64_t now_ms);

// When a running job's --signal is due (request.signal_before_s before TimeLimitDeadlineMs, at
// its start at the earliest), in Unix epoch ms; nullopt without a signal or a deadline.
std::optional<int64_t> SignalDueMs(const JobRecord& job);

// The detail of a time-limit stop: "ran past its time limit of 1:00:00".
std::string TimeLimitDetail(const JobRecord& job);

// A pending job that can never start (a dependency it needs to complete did not: `reason` is
// Reason::kDependencyNeverSatisfied): cancelled by pinpoint now, with `detail`, end_ms = now_ms.
void NeverStarts(JobRecord& job, Reason reason, std::string detail, int64_t now_ms);

// The supervisor of a running job died while the job's processes live. Unless the job is already
// being stopped or cancelled, its end will be failed/lost once they are gone (DecideEnd rule 2).
// It is not a cancel: an MPS fault still decides its end (rule 1).
void SupervisorLost(JobRecord& job);

// What DecideEnd needs besides the job's record.
struct EndFacts {
  launch::ExitStatus exit;  // how the program ended (never kOrphaned: that is not an end)
  bool mps_fault = false;   // an MPS fault on one of its devices hit it while it ran
  MpsFaultPolicy policy = MpsFaultPolicy::kRequeue;
  int64_t now_ms = 0;
  // What its class gives a preempted job (its stop_reason is Reason::kPreempted).
  PreemptMode preempt_mode = PreemptMode::kRequeue;
};

// How a running job ended, as DecideEnd decided it.
struct JobEnd {
  // True: pending again (Requeued's fields apply), a fault suspect after a fault; the event is
  // "requeue".
  // False: `state` is final; the event is "end".
  bool requeue = false;
  JobState state = JobState::kFailed;
  Reason reason = Reason::kNone;
  std::string detail;  // the event's detail too
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  int64_t end_ms = 0;  // 0 when requeued
  bool fault_suspect = false;
};

// Decides a running job's end from its record and `facts`. The first rule that applies wins:
//  1. fault: facts.mps_fault, the program did not exit with 0 and the job was not cancelled
//     (cancel_requested; Stop sets it, SupervisorLost does not). Policy kRequeue (or the job's
//     request.requeue) and not yet a suspect: requeued as a suspect, reason mps-fault-victim.
//     Otherwise failed, gpu-fault ("caused a fatal MPS fault ..." for a suspect, "ended by a
//     fatal MPS fault ..." otherwise).
//  1b. lost with its node: no status, request.requeue, neither cancelled nor stopped (a
//     supervisor that died under a running daemon is a stop: SupervisorLost): requeued, reason
//     requeued, detail "lost with its node (<how it ended>); back in the queue (--requeue)".
//  1c. preempted: stop_reason is Reason::kPreempted and the program did not exit with 0:
//     requeued (reason preempted, its stop_detail "; back in the queue"), or, where
//     facts.preempt_mode is kCancel, cancelled (reason preempted). kSuspend requeues too (a job of
//     that class that could be suspended was: this one could not, and the detail says so).
//  2. stop: stop_reason is set and the program did not exit with 0: failed, reason stop_reason,
//     detail "<stop_detail> (<how it ended>)".
//  3. cancel: cancel_requested and the program did not exit with 0: cancelled, detail
//     "cancelled by <cancelled_by> (<how it ended>)".
//  4. exit: exit 0 completed (exit-0); another code failed (exit-nonzero); a signal failed
//     (signaled); a launch failure failed (launch-failed, the error); no status failed (lost,
//     the error or "the job's supervisor vanished").
// exit_code and term_signal are what the program's status says (none for a requeue).
JobEnd DecideEnd(const JobRecord& job, const EndFacts& facts);

// Why the job's supervisor ended a program that ran (pinpointd was away longer than
// daemon_away_limit_s: launch::LaunchSpec), or "" when the program ended by itself.
std::string SupervisorsReason(const launch::ExitStatus& exit);

// Decides a lease's end (docs/api.md "close_lease"). `cause` is why it ends now:
// Reason::kLeaseClosed, kLeaseEmptied, kLeaseNotAttached, or kLaunchFailed (its MPS environment
// could not be prepared). A lease never requeues (a container cannot be rerun), so the first rule
// that applies wins: an MPS fault that hit it (not cancelled) fails it (gpu-fault); a stop
// (stop_reason) fails it with that reason; a cancel makes it cancelled; kLaunchFailed fails it;
// otherwise it completed with `cause` as its reason.
JobEnd DecideLeaseEnd(const JobRecord& lease, Reason cause, bool mps_fault, int64_t now_ms);

// Writes `end` into the job: state, reason, detail, exit_code, term_signal, end_ms and
// fault_suspect, and for a requeue what Requeued clears.
void ApplyEnd(const JobEnd& end, JobRecord& job);

}  // namespace lifecycle
}  // namespace pinpoint::daemon
