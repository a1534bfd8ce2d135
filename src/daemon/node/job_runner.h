// JobRunner: the running half of the node, as ninja's Builder runs what its Plan decided. It
// starts what a scheduling pass placed (the starts recorded before any launch), polls and signals
// the running jobs, acts on what the sharing backends and the watcher report about them (faults,
// servers that stopped answering, budget breaches), and ends, stops and requeues them. Node keeps
// the ways in (submit, leases, control) and the pass; both work on the one JobTable.
//
// Every state change is written to the store before it is acted on (Node's rule). What changes
// the queue (a job ended, a device freed, a start not recorded) is noted, and TakeChanged tells
// the node's next pass to schedule again.
//
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/job_record.h"
#include "daemon/jobs/job_table.h"
#include "daemon/jobs/users.h"
#include "daemon/node/checkpointer.h"
#include "daemon/node/fault_recovery.h"
#include "daemon/node/node_options.h"
#include "daemon/node/occupant.h"
#include "daemon/node/output_guard.h"
#include "daemon/node/watch_feedback.h"
#include "launch/launcher.h"
#include "pinpoint/job.h"
#include "sched/placement.h"
#include "sharing/backends.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

// What the runner acts through; not owned, each must outlive it. `cgroups`, `containers` and
// `lease_specs` may be null (as in NodeDeps).
struct RunnerDeps {
  const NodeOptions* options = nullptr;
  // The node's devices (Node::devices_): FaultRecovery::Evaluate marks drains in them.
  sched::Inventory* inventory = nullptr;
  store::JobStore* store = nullptr;
  launch::Launcher* launcher = nullptr;
  launch::Cgroups* cgroups = nullptr;
  launch::ContainerCgroups* containers = nullptr;
  cdi::LeaseSpecs* lease_specs = nullptr;
  Clock* clock = nullptr;
  UserDirectory* users = nullptr;
  sharing::Backends* sharing = nullptr;
  JobTable* jobs = nullptr;
  WatchFeedback* watch = nullptr;
  FaultRecovery* faults = nullptr;
  launch::OutputSpace* output_space = nullptr;  // may be null (OutputGuard)
  // Suspends and resumes jobs' CUDA processes (job_suspend.cc); null: the node suspends nothing.
  Checkpointer* checkpointer = nullptr;
};

class JobRunner {
 public:
  explicit JobRunner(RunnerDeps deps);

  // Who runs `job`'s processes: its supervisor (a job) or its container (a lease).
  Occupant& OccupantOf(const JobRecord& job);
  // The container edits of a running lease started by this process (empty otherwise).
  LeaseEdits EditsOfLease(JobId id) const { return lease_occupant_.EditsOf(id); }

  // A running job found at the daemon's start whose occupant still lives, or whose supervisor
  // died while its processes live (`orphaned`): its slices are held again (a dead MPS daemon is
  // restarted), a cancel under way gets its grace again, an orphan is stopped, and a --signal
  // the job's events say was sent is not sent again.
  void Adopt(JobRecord& job, bool orphaned);

  // Marks each start running and records them all in one store transaction, durable before any
  // launch (a restarted daemon must know these jobs may be running); then prepares each one's
  // devices and starts its occupant, and records the supervisors' pids in a second transaction.
  // A start the store refuses leaves its job pending (tried again next pass); when the
  // transaction cannot commit, all of them. Returns the jobs recorded as started (a job whose
  // MPS server serves another user is requeued, one whose launch failed has ended).
  std::vector<JobId> Start(const std::vector<sched::Start>& starts);

  // One pass over the running jobs at now_ms: the watcher's news (breaches stop their jobs), the
  // output look when due (OutputGuard: jobs past an output bound are stopped), each
  // occupant polled (an orphan is stopped), time limits enforced, due SIGTERMs and SIGKILLs sent,
  // the sharing backends' events handled; then the ends found, written in one transaction.
  // `mark`, where given, is told each part's end (for the slow-pass line: where the time went).
  void Pass(int64_t now_ms, const std::function<void(const char*)>& mark = {});

  // The effects of a job's end as lifecycle::DecideEnd decides it: resources released, the end
  // (or the requeue of a fault's victim) recorded.
  void Finish(JobRecord& job, const launch::ExitStatus& status);
  // A lease's end for `cause` (closed, its processes gone, a fault): released and recorded.
  void EndLease(JobRecord& job, Reason cause);
  // Back to pending: resources released (unless `release_resources` is false: the job held
  // none yet), the reason and `why` recorded.
  void Requeue(JobRecord& job, const std::string& why, Reason reason,
               bool release_resources = true);
  // The safe stop of a running job: its backends let go of it (MPS terminate_client), then
  // SIGTERM, SIGKILL after the grace.
  void SafeStop(JobRecord& job);
  // pinpoint stops a running job itself (lifecycle::Stop with `stop_reason` and `detail`, the
  // event "stop"), then SafeStop. Nothing when it is already being stopped or cancelled.
  void StopJob(JobRecord& job, Reason stop_reason, std::string detail);
  // Preempts a running job for the waiting job `by` (docs/scheduling.md "Preemption"): recorded
  // at once (lifecycle::Stop with Reason::kPreempted, the event "preempt"), the job gets its
  // --signal (or SIGTERM) now, and is stopped (SafeStop) once `grace_ms` has passed; it is then
  // requeued or cancelled as its class says (lifecycle::DecideEnd). False when it is already being
  // stopped or cancelled.
  bool Preempt(JobRecord& job, JobId by, int64_t grace_ms);
  // Whether the job is being preempted (from Preempt until its end, or while a preemption's
  // suspend is being made).
  bool BeingPreempted(const JobRecord& job) const {
    return job.state == JobState::kRunning &&
           (job.stop_reason == Reason::kPreempted || suspend_for_.count(job.id) > 0);
  }

  // ---- suspend (job_suspend.cc; docs/scheduling.md "Suspend")
  // Suspends a running job that holds GPUs outside MPS: recorded kSuspending (JobRecord::suspend,
  // by `by`; `resume`: it resumes by itself once its GPUs have room), its cgroup's memory.max
  // raised by `host_bytes` (its device memory, soon in host memory), and pinpoint-checkpoint
  // started on its processes. Once they are checkpointed they are stopped (SIGSTOP) and its GPUs
  // are free for others (kSuspended); a suspend that fails leaves the job running as it was.
  // `for_job` (not 0): a preemption's, which preempts it by its class's requeue (`grace_ms`) if
  // the suspend fails. Errors (nothing changed): the checkpointer's, the store's.
  Status Suspend(JobRecord& job, const std::string& by, bool resume, uint64_t host_bytes,
                 JobId for_job = 0, int64_t grace_ms = 0);
  // Resumes a suspended job whose GPUs a pass gave back to it (kResuming): SIGCONT, then
  // pinpoint-checkpoint restores its processes on the same GPUs. One that cannot be restored is
  // stopped (lost).
  void Resume(JobRecord& job);
  // The checkpointer's descriptors, for the main loop.
  std::vector<int> WaitFds() const {
    return deps_.checkpointer != nullptr ? deps_.checkpointer->WaitFds() : std::vector<int>{};
  }
  // Preemptions begun since the daemon started (the metrics' preemptions_total).
  int64_t preemptions_total() const { return preemptions_total_; }
  // Ends the pending jobs a pass found can never start (lifecycle::NeverStarts); one whose end
  // the store refuses stays pending.
  void EndNeverStarting(const std::vector<sched::Wait>& never);

  // Whether the queue changed (a job ended, a device freed, a start not recorded) since the last
  // call: the pass must schedule again.
  bool TakeChanged() { return std::exchange(changed_, false); }
  // Whether the last Pass left ends for the next (their records past
  // options->pass.pass_record_bytes).
  bool EndsLeft() const { return ends_left_; }
  // The jobs launched since the daemon started (the metrics' starts_total).
  int64_t starts_total() const { return starts_total_; }

 private:
  std::vector<JobId> RecordStarts(const std::vector<sched::Start>& starts);
  // Prepares a started job's devices and starts its occupant. Returns whether a supervisor now
  // runs it: false when it was requeued, failed to launch (and ended), or is a lease.
  bool Launch(JobRecord& job);
  void RecordPids(const std::vector<JobId>& launched);
  Result<std::map<std::string, std::string>> JobEnvironment(const JobRecord& job);
  // What the job's holds apply, resource by resource (its devices, and what each allocation's
  // backend says), with what its environment `env` gives each variable named.
  std::vector<AppliedLimit> LimitsOf(const JobRecord& job,
                                     const std::map<std::string, std::string>& env) const;
  // Acts on what the watcher found since the last pass (WatchFeedback): budget breaches stop
  // their jobs, Xids go to FaultRecovery, settled slots let the queue move.
  void ApplyWatch();
  // Stops the running jobs OutputGuard finds past an output bound (Reason::kOutputExceeded).
  void BoundOutput(int64_t now_ms);
  // A sharing backend's news: fatal faults (FaultRecovery), servers ready, quit or unresponsive.
  // uid's server that stopped answering was killed: that user's running jobs it served are stopped.
  void HandleSharingEvents();
  // The SIGTERM a stop still owes `job`, and its SIGKILL once the grace has passed.
  void SendDueSignals(JobRecord& job, int64_t now_ms);
  // submit --signal: sent once, when lifecycle::SignalDueMs says, unless the job is being
  // stopped; recorded as the job's event "signal".
  void SendWarning(JobRecord& job, int64_t now_ms);
  // The end of a running job's occupant: Finish for a job's exit, EndLease for a lease's cause.
  void End(JobRecord& job, const OccupantEnd& end);
  // Records a job's end (JobTable::PersistEnd) and forgets its cancel and orphan bookkeeping.
  void PersistEnd(JobRecord& job);
  void PersistRequeue(const JobRecord& job);
  void ReleaseResources(JobRecord& job);
  // A running job whose supervisor died while its processes live: it keeps its resources and is
  // stopped (SafeStop); it ends as failed/lost once they are all gone.
  void HandleOrphan(JobRecord& job);
  void Changed() { changed_ = true; }
  // The checkpointer's runs that ended: suspends made (the job stopped, its GPUs let go) or
  // failed (it runs on; a preemption's falls back to a requeue), resumes made or failed.
  void CheckpointsDone(int64_t now_ms);
  void Suspended(JobRecord& job, const Checkpointer::Done& done);
  void Resumed(JobRecord& job, const Checkpointer::Done& done);
  // A suspend or resume that did not end (found after a restart, or cut short by its deadline):
  // each process put back to running (kResuming, then Resumed), the job runs on.
  void UndoSuspend(JobRecord& job);
  // Resume and UndoSuspend's common part: kResuming, SIGCONT, then pinpoint-checkpoint resume.
  void BeginResume(JobRecord& job);
  // A suspend's checkpoint, once its processes are all listed (kSuspending): run, or failed.
  void BeginCheckpoint(JobRecord& job, int64_t now_ms);
  // The suspends whose processes were not all found at once (a node without cgroups reads its
  // processes a budget's worth per pass): listed again each pass, for at most kListingMs.
  void ListSuspends(int64_t now_ms);
  // A suspend's stop or continue to every process of the job: a stop sent again each pass for a
  // minute (SendDueSignals), a continue while they are not all found yet.
  void SignalEveryProcess(JobRecord& job, int signal);

  RunnerDeps deps_;
  bool changed_ = false;    // since the last TakeChanged
  bool ends_left_ = false;  // the last Pass stopped collecting ends at its budget
  // Ended jobs whose output cut is being made off the loop (OutputGuard::Ended): their end is
  // recorded at the first pass after it is made, so that a recorded end finds its output cut.
  std::map<JobId, OccupantEnd> cut_pending_;
  ShimOccupant shim_;
  OutputGuard output_;
  LeaseOccupant lease_occupant_;
  std::map<JobId, int64_t> kill_at_ms_;     // running jobs being stopped: SIGKILL deadline
  std::set<JobId> term_pending_;            // being stopped before they started: SIGTERM is due
  std::set<JobId> orphans_;                 // running jobs whose supervisor died (HandleOrphan)
  std::set<JobId> warned_;                  // running jobs whose --signal was sent (SendWarning)
  std::map<JobId, int64_t> preempt_at_ms_;  // jobs being preempted: when their grace ends
  // Jobs being suspended for a preemption: the preemptor and the victim's grace for a requeue.
  std::map<JobId, std::pair<JobId, int64_t>> suspend_for_;
  std::set<JobId> suspend_listing_;  // being suspended, their processes not all found yet
  // A suspend's SIGSTOP sent again each pass, or its SIGCONT not known to have reached all: the
  // signal, since when.
  std::map<JobId, std::pair<int, int64_t>> signal_every_;
  int64_t starts_total_ = 0;
  int64_t preemptions_total_ = 0;
};

}  // namespace pinpoint::daemon
