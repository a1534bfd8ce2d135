#include "daemon/jobs/lifecycle.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace pinpoint::daemon::lifecycle {
namespace {

using Kind = launch::ExitStatus::Kind;

constexpr int64_t kNow = 1'700'000'000'000;

launch::ExitStatus Exited(int code) { return {Kind::kExited, code, 0, ""}; }
launch::ExitStatus Killed(int signal) { return {Kind::kSignaled, 0, signal, ""}; }
launch::ExitStatus LaunchFailed() {
  return {Kind::kLaunchFailed, 0, 0, "exec failed: No such file"};
}
launch::ExitStatus NoStatus(std::string error = "") {
  return {Kind::kNoStatus, 0, 0, std::move(error)};
}

// The record facts DecideEnd reads.
struct Record {
  bool cancelled = false;      // cancel_requested by "alice"
  const char* stop = nullptr;  // stop_reason (its word), with stop_detail "over budget"
  bool suspect = false;        // fault_suspect
  bool requeue = false;        // request.requeue (submit --requeue)
};

JobRecord RunningJob(const Record& r) {
  JobRecord job;
  job.state = JobState::kRunning;
  job.start_ms = kNow - 1000;
  job.cancel_requested = r.cancelled;
  if (r.cancelled) job.cancelled_by = "alice";
  if (r.stop != nullptr) {
    job.stop_reason = ReasonFromName(r.stop).value();
    job.stop_detail = "over budget";
  }
  job.fault_suspect = r.suspect;
  job.request.requeue = r.requeue;
  return job;
}

struct EndCase {
  const char* name;
  Record record;
  launch::ExitStatus exit;
  bool fault;
  MpsFaultPolicy policy;
  // Expected.
  bool requeue;
  JobState state;
  const char* reason;  // its word
  const char* detail;
  bool suspect_after;
};

constexpr auto kRequeue = MpsFaultPolicy::kRequeue;
constexpr auto kFail = MpsFaultPolicy::kFail;
const char* const kKilled15 = "killed by signal 15 (Terminated)";

TEST(LifecycleTest, DecideEndTable) {
  const EndCase cases[] = {
      // Rule 4, exit: the program's status alone.
      {"exit 0",
       {},
       Exited(0),
       false,
       kRequeue,
       false,
       JobState::kCompleted,
       "exit-0",
       "exit code 0",
       false},
      {"exit 3",
       {},
       Exited(3),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "exit-nonzero",
       "exit code 3",
       false},
      {"signal",
       {},
       Killed(SIGTERM),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "signaled",
       kKilled15,
       false},
      {"signal from its supervisor, which says why",
       {},
       {Kind::kSignaled, 0, SIGTERM, "no pinpointd ran"},
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "signaled",
       "killed by signal 15 (Terminated): no pinpointd ran",
       false},
      {"its supervisor ended it for its output",
       {},
       {Kind::kSignaled, 0, SIGTERM, "its output passed 4GiB (max_output_bytes)", true},
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "output-exceeded",
       "killed by signal 15 (Terminated): its output passed 4GiB (max_output_bytes)",
       false},
      {"launch failure",
       {},
       LaunchFailed(),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "launch-failed",
       "exec failed: No such file",
       false},
      {"no status: lost",
       {},
       NoStatus(),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "lost",
       "the job's supervisor vanished",
       false},
      {"no status with the launcher's word",
       {},
       NoStatus("no exit.json"),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "lost",
       "no exit.json",
       false},
      // Rule 3, cancel: over every failure, never over a completion.
      {"cancel, killed",
       {.cancelled = true},
       Killed(SIGTERM),
       false,
       kRequeue,
       false,
       JobState::kCancelled,
       "cancelled",
       "cancelled by alice (killed by signal 15 (Terminated))",
       false},
      {"cancel, exit 1",
       {.cancelled = true},
       Exited(1),
       false,
       kRequeue,
       false,
       JobState::kCancelled,
       "cancelled",
       "cancelled by alice (exit code 1)",
       false},
      {"cancel, lost",
       {.cancelled = true},
       NoStatus(),
       false,
       kRequeue,
       false,
       JobState::kCancelled,
       "cancelled",
       "cancelled by alice (the job's supervisor vanished)",
       false},
      {"cancel, but exit 0",
       {.cancelled = true},
       Exited(0),
       false,
       kRequeue,
       false,
       JobState::kCompleted,
       "exit-0",
       "exit code 0",
       false},
      // Rule 2, stop: over cancel (a stop is a cancel too) and exit, never over a completion.
      {"stop, killed",
       {.cancelled = true, .stop = "gpu-mem-exceeded"},
       Killed(SIGTERM),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "gpu-mem-exceeded",
       "over budget (killed by signal 15 (Terminated))",
       false},
      {"stop without cancel (supervisor lost)",
       {.stop = "lost"},
       NoStatus(),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "lost",
       "over budget (the job's supervisor vanished)",
       false},
      {"stop, but exit 0",
       {.cancelled = true, .stop = "gpu-mem-exceeded"},
       Exited(0),
       false,
       kRequeue,
       false,
       JobState::kCompleted,
       "exit-0",
       "exit code 0",
       false},
      // Rule 1, fault: over stop and exit; not over a cancel or a completion.
      {"fault, first time: requeued as a suspect",
       {},
       Exited(1),
       true,
       kRequeue,
       true,
       JobState::kPending,
       "mps-fault-victim",
       "ended by a fatal MPS fault on its device; reruns alone to find the cause",
       true},
      {"fault, killed: requeued",
       {},
       Killed(SIGTERM),
       true,
       kRequeue,
       true,
       JobState::kPending,
       "mps-fault-victim",
       "ended by a fatal MPS fault on its device; reruns alone to find the cause",
       true},
      {"fault again as a suspect: the culprit",
       {.suspect = true},
       Exited(1),
       true,
       kRequeue,
       false,
       JobState::kFailed,
       "gpu-fault",
       "caused a fatal MPS fault: it faulted again when run alone (exit code 1)",
       true},
      {"fault, policy fail",
       {},
       Exited(1),
       true,
       kFail,
       false,
       JobState::kFailed,
       "gpu-fault",
       "ended by a fatal MPS fault on its device (exit code 1)",
       false},
      {"fault, policy fail, suspect",
       {.suspect = true},
       Exited(1),
       true,
       kFail,
       false,
       JobState::kFailed,
       "gpu-fault",
       "caused a fatal MPS fault: it faulted again when run alone (exit code 1)",
       true},
      {"fault over a lost supervisor",
       {.stop = "lost"},
       NoStatus(),
       true,
       kRequeue,
       true,
       JobState::kPending,
       "mps-fault-victim",
       "ended by a fatal MPS fault on its device; reruns alone to find the cause",
       true},
      {"fault, but cancelled",
       {.cancelled = true},
       Killed(SIGTERM),
       true,
       kRequeue,
       false,
       JobState::kCancelled,
       "cancelled",
       "cancelled by alice (killed by signal 15 (Terminated))",
       false},
      {"fault, but stopped",
       {.cancelled = true, .stop = "gpu-mem-exceeded"},
       Exited(1),
       true,
       kRequeue,
       false,
       JobState::kFailed,
       "gpu-mem-exceeded",
       "over budget (exit code 1)",
       false},
      {"fault, but exit 0: it was a victim that finished",
       {.suspect = true},
       Exited(0),
       true,
       kRequeue,
       false,
       JobState::kCompleted,
       "exit-0",
       "exit code 0",
       true},
      // --requeue: a fault's victim even where the policy fails them, and a job lost with its node.
      {"fault, policy fail, --requeue: requeued as a suspect",
       {.requeue = true},
       Exited(1),
       true,
       kFail,
       true,
       JobState::kPending,
       "mps-fault-victim",
       "ended by a fatal MPS fault on its device; reruns alone to find the cause",
       true},
      {"fault again as a suspect, --requeue: the culprit still",
       {.suspect = true, .requeue = true},
       Exited(1),
       true,
       kFail,
       false,
       JobState::kFailed,
       "gpu-fault",
       "caused a fatal MPS fault: it faulted again when run alone (exit code 1)",
       true},
      {"lost, --requeue: back in the queue",
       {.requeue = true},
       NoStatus(),
       false,
       kRequeue,
       true,
       JobState::kPending,
       "requeued",
       "lost with its node (the job's supervisor vanished); back in the queue (--requeue)",
       false},
      {"lost, --requeue, a suspect stays one",
       {.suspect = true, .requeue = true},
       NoStatus(),
       false,
       kRequeue,
       true,
       JobState::kPending,
       "requeued",
       "lost with its node (the job's supervisor vanished); back in the queue (--requeue)",
       true},
      {"lost, --requeue, but cancelled",
       {.cancelled = true, .requeue = true},
       NoStatus(),
       false,
       kRequeue,
       false,
       JobState::kCancelled,
       "cancelled",
       "cancelled by alice (the job's supervisor vanished)",
       false},
      {"lost supervisor under a running daemon, --requeue: a stop",
       {.stop = "lost", .requeue = true},
       NoStatus(),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "lost",
       "over budget (the job's supervisor vanished)",
       false},
      {"exit 1, --requeue: failed",
       {.requeue = true},
       Exited(1),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "exit-nonzero",
       "exit code 1",
       false},
      {"killed, --requeue: failed",
       {.requeue = true},
       Killed(SIGKILL),
       false,
       kRequeue,
       false,
       JobState::kFailed,
       "signaled",
       "killed by signal 9 (Killed)",
       false},
  };
  for (const auto& c : cases) {
    JobRecord job = RunningJob(c.record);
    JobEnd end = DecideEnd(job, {c.exit, c.fault, c.policy, kNow});
    EXPECT_EQ(end.requeue, c.requeue) << c.name;
    EXPECT_EQ(end.state, c.state) << c.name;
    EXPECT_STREQ(ReasonName(end.reason), c.reason) << c.name;
    EXPECT_EQ(end.detail, c.detail) << c.name;
    EXPECT_EQ(end.fault_suspect, c.suspect_after) << c.name;
    EXPECT_EQ(end.end_ms, c.requeue ? 0 : kNow) << c.name;
    if (c.requeue) {
      EXPECT_FALSE(end.exit_code.has_value()) << c.name;
      EXPECT_FALSE(end.term_signal.has_value()) << c.name;
      continue;
    }
    EXPECT_EQ(end.exit_code,
              c.exit.kind == Kind::kExited ? std::optional<int>(c.exit.exit_code) : std::nullopt)
        << c.name;
    EXPECT_EQ(end.term_signal, c.exit.kind == Kind::kSignaled
                                   ? std::optional<int>(c.exit.term_signal)
                                   : std::nullopt)
        << c.name;
  }
}

TEST(LifecycleTest, ApplyEndWritesAFinalEnd) {
  JobRecord job = RunningJob({});
  job.allocations.push_back({});
  job.pid = 42;
  ApplyEnd(DecideEnd(job, {Exited(3), false, kRequeue, kNow}), job);
  EXPECT_EQ(job.state, JobState::kFailed);
  EXPECT_EQ(job.reason, Reason::kExitedNonZero);
  EXPECT_EQ(job.exit_code, 3);
  EXPECT_EQ(job.end_ms, kNow);
  EXPECT_EQ(job.allocations.size(), 1u) << "an ended job shows where it ran";
  EXPECT_EQ(job.pid, 42);
}

TEST(LifecycleTest, ApplyEndOfARequeueClearsTheRun) {
  JobRecord job = RunningJob({});
  job.allocations.push_back({});
  job.pid = 42;
  job.pid_start_ticks = 7;
  job.exit_code = 1;  // left from nothing: a requeue has no exit
  ApplyEnd(DecideEnd(job, {Exited(1), true, kRequeue, kNow}), job);
  EXPECT_EQ(job.state, JobState::kPending);
  EXPECT_EQ(job.reason, Reason::kMpsFaultVictim);
  EXPECT_TRUE(job.fault_suspect);
  EXPECT_TRUE(job.allocations.empty());
  EXPECT_EQ(job.start_ms, 0);
  EXPECT_EQ(job.end_ms, 0);
  EXPECT_EQ(job.pid, 0);
  EXPECT_EQ(job.pid_start_ticks, 0u);
  EXPECT_FALSE(job.exit_code.has_value());
}

TEST(LifecycleTest, StartAndRequeue) {
  JobRecord job;
  Submitted(job, kNow);
  EXPECT_EQ(job.state, JobState::kPending);
  EXPECT_EQ(job.submit_ms, kNow);
  Waiting(job, Reason::kResources, "needs 1 GPU");
  EXPECT_EQ(job.reason, Reason::kResources);
  Allocation a;
  a.device_index = 1;
  Started(job, {a}, kNow + 5);
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.reason, Reason::kNone);
  EXPECT_EQ(job.detail, "");
  EXPECT_EQ(job.start_ms, kNow + 5);
  ASSERT_EQ(job.allocations.size(), 1u);
  job.pid = 99;
  Requeued(job, Reason::kMpsUser, "MPS on device 1 serves uid 7");
  EXPECT_EQ(job.state, JobState::kPending);
  EXPECT_EQ(job.reason, Reason::kMpsUser);
  EXPECT_EQ(job.detail, "MPS on device 1 serves uid 7");
  EXPECT_TRUE(job.allocations.empty());
  EXPECT_EQ(job.start_ms, 0);
  EXPECT_EQ(job.pid, 0);
}

TEST(LifecycleTest, CancelEndsAPendingJobAndMarksARunningOne) {
  JobRecord pending;
  Cancel(pending, "bob", kNow);
  EXPECT_EQ(pending.state, JobState::kCancelled);
  EXPECT_EQ(pending.reason, Reason::kCancelled);
  EXPECT_EQ(pending.detail, "cancelled by bob while pending");
  EXPECT_EQ(pending.end_ms, kNow);
  JobRecord running = RunningJob({});
  Cancel(running, "bob", kNow);
  EXPECT_EQ(running.state, JobState::kRunning) << "ends when its processes do";
  EXPECT_TRUE(running.cancel_requested);
  EXPECT_EQ(running.cancelled_by, "bob");
  EXPECT_EQ(running.end_ms, 0);
}

TEST(LifecycleTest, TheFirstStopWins) {
  JobRecord job = RunningJob({});
  EXPECT_TRUE(Stop(job, Reason::kGpuMemExceeded, "used 9 GiB"));
  EXPECT_TRUE(job.cancel_requested);
  EXPECT_EQ(job.cancelled_by, kStoppedBy);
  EXPECT_FALSE(Stop(job, Reason::kTimeLimit, "later"));
  EXPECT_EQ(job.stop_reason, Reason::kGpuMemExceeded);
  EXPECT_EQ(job.stop_detail, "used 9 GiB");
  SupervisorLost(job);
  EXPECT_EQ(job.stop_reason, Reason::kGpuMemExceeded)
      << "a lost supervisor does not override a stop";

  JobRecord cancelled = RunningJob({.cancelled = true});
  EXPECT_FALSE(Stop(cancelled, Reason::kGpuMemExceeded, "used 9 GiB"))
      << "a user's cancel came first";
  SupervisorLost(cancelled);
  EXPECT_EQ(cancelled.stop_reason, Reason::kNone);
}

TEST(LifecycleTest, SupervisorLostIsAStopButNotACancel) {
  JobRecord job = RunningJob({});
  SupervisorLost(job);
  EXPECT_EQ(job.stop_reason, Reason::kLost);
  EXPECT_EQ(job.stop_detail, "its supervisor died; its job's processes were ended");
  EXPECT_FALSE(job.cancel_requested);
  JobEnd end = DecideEnd(job, {NoStatus(), false, kRequeue, kNow});
  EXPECT_EQ(end.reason, Reason::kLost);
  EXPECT_EQ(end.detail,
            "its supervisor died; its job's processes were ended (the job's supervisor vanished)");
}

// A stop belongs to the run it stopped: a job an MPS fault sends back to the queue reruns
// without it (it would otherwise end its next run as "lost", whatever that run does).
TEST(LifecycleTest, ARequeuedRunLeavesItsStopBehind) {
  JobRecord job = RunningJob({});
  SupervisorLost(job);
  ApplyEnd(DecideEnd(job, {Exited(1), true, kRequeue, kNow}), job);
  ASSERT_EQ(job.state, JobState::kPending);
  EXPECT_EQ(job.stop_reason, Reason::kNone);
  EXPECT_EQ(job.stop_detail, "");
  ApplyEnd(DecideEnd(job, {Exited(0), false, kRequeue, kNow + 1}), job);
  EXPECT_EQ(job.state, JobState::kCompleted) << ReasonName(job.reason);
}

// The time a run spent suspended is that run's: the job's next run has its whole time limit, and
// each way a suspend ends adds its time once.
TEST(LifecycleTest, ASuspendsTimeIsItsRunsAlone) {
  JobRecord job = RunningJob({});
  job.request.time_limit_s = 60;
  job.suspend.phase = SuspendPhase::kSuspended;
  job.suspend.since_ms = kNow;
  EXPECT_FALSE(TimeLimitDeadlineMs(job).has_value()) << "its time stands still";
  EXPECT_EQ(EndSuspend(job, kNow + 5000), 5000);
  EXPECT_EQ(job.suspended_ms, 5000);
  EXPECT_EQ(job.suspend.phase, SuspendPhase::kNone);
  EXPECT_EQ(EndSuspend(job, kNow + 9000), 0);
  EXPECT_EQ(job.suspended_ms, 5000) << "no suspend, nothing added";
  EXPECT_EQ(TimeLimitDeadlineMs(job), job.start_ms + 65'000);
  job.suspended_ms = INT64_MAX - 1;
  job.suspend = {SuspendPhase::kResuming, kNow};
  EndSuspend(job, kNow + 5000);
  EXPECT_EQ(job.suspended_ms, INT64_MAX) << "saturates";
  EXPECT_FALSE(TimeLimitDeadlineMs(job).has_value()) << "beyond any clock";
  Requeued(job, Reason::kPreempted, "preempted by job 9");
  EXPECT_EQ(job.suspended_ms, 0);
}

}  // namespace
}  // namespace pinpoint::daemon::lifecycle

namespace pinpoint::daemon {
namespace {

TEST(LifecycleWhyTest, TheDetailOrElseTheReasonsName) {
  JobRecord job;
  job.reason = Reason::kMpsUser;
  EXPECT_EQ(lifecycle::Why(job), "mps-user");
  job.detail = "GPU 0 MPS server belongs to uid 1001";
  EXPECT_EQ(lifecycle::Why(job), "GPU 0 MPS server belongs to uid 1001");
}

}  // namespace
}  // namespace pinpoint::daemon
