// Node: the daemon's core, and the index of its parts (docs/design.md "The node, in parts").
// It turns requests into store writes, runs the pure scheduler and acts on its plan through the
// launcher and the sharing backends. Where each concept lives:
//   JobTable (job_table.h)        the active jobs and their store writes
//   Admission (admission.h)       the checks of every way in: submit, array, lease
//   sched::Schedule / PlaceOne    a pass over the queue; one lease placed alone
//   node_submit.cc, node_lease.cc the ways in; node_cancel.cc, node_hold.cc control;
//   JobRunner (job_runner.h)      the running half: starts what a pass placed, polls, stops,
//                                 ends and requeues running jobs; acts on what the watcher and
//                                 the sharing backends report about them
//   Occupant (occupant.h)         who runs a job's processes: its supervisor, or a lease's
//                                 container
//   node_query.cc, node_view.cc   answers
//   ArrayTasks (daemon/arrays/array_tasks.h)  the job arrays among the jobs: any task,
//                                 unfinished tasks, state
//   daemon/jobs/array_rest.h, daemon/arrays/array_take_out.h  a waiting array as one record;
//                                 tasks taken out of it
//   Dependencies (dependencies.h) --after/--afterok: a submit's check, a pass's states
//   FaultRecovery (fault_recovery.h)  MPS faults by device: recovery, resets, drains
//   MigDynamic (daemon/mig/mig_dynamic.h)  GPUs in mig-dynamic mode: their layout planned after
//                                 a pass, changed off the loop (NodeDeps::mig)
//   WatchFeedback (watch_feedback.h) the watcher's side: watched jobs, usage, settling slots
//   sharing::Backends             what each sharing mode does (exclusive, timeslice, MPS):
//                                 the rules the scheduler places by, each job's hold on a device
//
// Data flows one way: a request is validated and stored (durable before the caller gets its id),
// Step() polls running jobs, schedules and launches. Every state change is written to the store
// before it is acted on, so a daemon killed at any point restarts without losing or doubling a
// job (Recover()).
//
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/caller.h"
#include "cdi/spec.h"
#include "common/clock.h"
#include "common/env_select.h"
#include "common/job_record.h"
#include "daemon/arrays/array_take_out.h"
#include "daemon/arrays/array_tasks.h"
#include "daemon/jobs/job_room.h"
#include "daemon/jobs/job_table.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/priority.h"
#include "daemon/jobs/users.h"
#include "daemon/mig/mig_dynamic.h"
#include "daemon/node/admission.h"
#include "daemon/node/dependencies.h"
#include "daemon/node/fault_recovery.h"
#include "daemon/node/job_runner.h"
#include "daemon/node/node_options.h"
#include "daemon/node/occupant.h"
#include "daemon/node/recent_failures.h"
#include "daemon/node/watch_feedback.h"
#include "gpu/gpu_backend.h"
#include "launch/cgroup.h"
#include "launch/container_cgroups.h"
#include "launch/launcher.h"
#include "metrics/metrics.h"
#include "pinpoint/api.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/job.h"
#include "pinpoint/rewrite_budget.h"
#include "sched/inventory.h"
#include "sched/placement.h"
#include "sched/start_estimate.h"
#include "sharing/backends.h"
#include "store/job_store.h"
#include "watch/watcher.h"

namespace pinpoint::daemon {

// Everything the node acts through. Not owned; must outlive the Node. store, launcher, clock and
// sharing are required; the others may be null as each says.
struct NodeDeps {
  store::JobStore* store = nullptr;
  launch::Launcher* launcher = nullptr;
  launch::Cgroups* cgroups = nullptr;
  // Polls the GPUs on its own thread; the node tells it which jobs run and acts on what it finds
  // (usage, budget breaches). Null: no accounting and no device-memory enforcement.
  watch::Watcher* watcher = nullptr;
  Clock* clock = nullptr;
  // Who the users are (names in replies and details, groups of a job, as_user). Null: the
  // system's, each answer kept for a minute (CachingUserDirectory).
  UserDirectory* users = nullptr;
  // The cgroups of containers holding leases. Null: attach_lease is refused (unavailable).
  launch::ContainerCgroups* containers = nullptr;
  // The CDI specs `pinpoint cdi` writes (config cdi_dir): an ended lease's is removed. Null: none.
  cdi::LeaseSpecs* lease_specs = nullptr;
  // The sharing modes' backends: each device's rules and each allocation's backend (MPS among
  // them). The daemon's are registered in daemon/setup/sharing_setup.cc (MakeBackends).
  sharing::Backends* sharing = nullptr;
  // The GPUs in mig-dynamic mode (mig_dynamic.h), resumed over options.inventory (the Node then
  // lends it the devices it owns). Null: none.
  MigDynamic* mig = nullptr;
  // The state directory's disk as the jobs' output takes it (launch/output_space.h): the output
  // of running jobs is measured and bounded through it (OutputGuard). Null: not at all, beyond
  // each job's supervisor's max_output_bytes.
  launch::OutputSpace* output_space = nullptr;
  // Suspends and resumes jobs (pinpoint suspend, a class's preempt_mode suspend;
  // daemon/setup/command_checkpointer.h). Null: the node suspends nothing.
  Checkpointer* checkpointer = nullptr;
  // The host memory the kernel has free now (/proc/meminfo MemAvailable): a suspend whose device
  // memory would not fit is refused. Null: not looked at.
  std::function<std::optional<uint64_t>()> host_mem_available = nullptr;
};

// A range of end times for Node::List (Unix epoch ms; a bound left out is open).
struct EndRange {
  std::optional<int64_t> after_ms = std::nullopt;
  std::optional<int64_t> before_ms = std::nullopt;
};

// What a listing selects besides its user and end range (docs/api.md "queue"): each one given
// must match. `names` selects among active jobs only (Node::List refuses it with `all`).
struct ListQuery {
  std::vector<std::string> names = {};  // the job's name is one of these
  std::vector<JobState> states = {};    // its state is one of these
  std::vector<JobId> ids = {};          // its id, or its array's id, is one of these
  // Page::starts for the page's pending jobs (sched/start_estimate.h), played over the first
  // kStartEstimateJobs pending jobs in the scheduler's order, at most once every
  // kStartEstimateReuseMs (a job submitted since says so).
  bool estimate_starts = false;
};
inline constexpr size_t kStartEstimateJobs = 256;
// The most tasks of one array's rest (array_rest.h) a scheduling pass considers.
inline constexpr size_t kArrayTasksPerPass = 64;
inline constexpr int kStartEstimatePasses = 512;
inline constexpr int64_t kStartEstimateReuseMs = 5000;

class Node {
 public:
  Node(NodeOptions options, NodeDeps deps);

  // Loads active jobs from the store after a start or restart: running jobs whose supervisor
  // still lives are adopted, ones that ended meanwhile get their final state, ones that vanished
  // without a status end as failed/lost, and ones that were never launched are queued again.
  Status Recover();

  // Validates, checks the request can ever fit this node, and stores the job as pending.
  // With an idempotency key (docs/api.md, "submit"): when the caller's uid already submitted a
  // job with this key, returns that job (in whatever state it is now) and stores nothing.
  // Errors: kInvalidArgument (bad request or key), kPermissionDenied (as_user, a priority above
  // what options.admission.priority allows the caller, or a non-root daemon asked to run another
  // user's job), kFailedPrecondition (never fits: the reason; an afterok that can never be met
  // (Dependencies::Check); or the key was used for a different request), kIo.
  // Environment variables that match options.admission.env_deny are dropped before the job is
  // compared or stored (their names, never values, go to the job's events). `hold`: stored held
  // (Hold::kUser, or Hold::kRoot when the caller is root). `from_script`: the fields the job's
  // script gave (SubmitRequest::from_script), judged with the rights of the user the job runs as
  // (daemon/jobs/script_rights.h): their errors name the script's line, and its hold is a user
  // hold.
  Result<JobRecord> Submit(const api::Caller& caller, JobRequest request,
                           const std::optional<std::string>& idempotency_key = std::nullopt,
                           bool hold = false, const ScriptOrigins& from_script = {});

  // A job array (node_submit.cc, docs/api.md "submit"): `request` admitted once as Submit admits
  // it, then stored as one record, the array's rest (array_rest.h), with a consecutive id
  // reserved for each task in index order (JobStore::InsertArray); the first task's id is the
  // array's. Each task becomes a record of its own when it starts (TakeOutTasks).
  // With an idempotency key the caller's uid already used for this array: that array as it is
  // now, and nothing is stored. `hold` holds every task; `from_script` as Submit's. Returns the
  // first task and the count.
  // Errors: Submit's; kInvalidArgument for more tasks than options.admission.max_array_tasks, or an
  // array whose stored records would pass kMaxArrayBytes (the request times the tasks); the key
  // used for anything but this array is kFailedPrecondition.
  struct SubmittedArray {
    JobRecord first;
    int count = 0;
  };
  Result<SubmittedArray> SubmitArray(
      const api::Caller& caller, JobRequest request, const ArraySpec& spec,
      const std::optional<std::string>& idempotency_key = std::nullopt, bool hold = false,
      const ScriptOrigins& from_script = {});
  // The job arrays among the node's jobs: unfinished tasks, what a request still has to change.
  const ArrayTasks& arrays() const { return arrays_; }
  // Changes jobs as `edit` says (update, update_array; node_hold.cc): the policy is job_edit.h's,
  // the changed job passes a submit's rules (Admission::CheckEdit), and keeps its id, submit time
  // and place. One Status per id as HoldJobs's, with ApplyEdit's and CheckEdit's refusals; ids
  // past `max_rewrite_bytes` NotReached(). Event "update" names who and what.
  std::vector<Status> UpdateJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                 JobEdit edit, uint64_t max_rewrite_bytes = kRewriteBytesPerRequest,
                                 bool rests_whole = false);

  // Hold and release pending jobs (daemon/jobs/hold.h has the policy). One Status per id, in order:
  // kNotFound, kPermissionDenied (another user's job; releasing root's hold as a user),
  // kFailedPrecondition (running or ended), kIo (not recorded: nothing changed), or ok.
  // Each request rewrites at most kRewriteBytesPerRequest of records (pinpoint/rewrite_budget.h):
  // ids past it are answered NotReached().
  // `max_rewrite_bytes` 0: no bound.
  //
  // Job arrays: an id these calls name is a task, one of its array's rest (array_rest.h) taken
  // out as a job of its own first; with `rests_whole` (the requests on a whole array,
  // array_work.h) the id of a rest stands for every task it holds.
  std::vector<Status> HoldJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                               uint64_t max_rewrite_bytes = kRewriteBytesPerRequest,
                               bool rests_whole = false);
  std::vector<Status> ReleaseJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                  uint64_t max_rewrite_bytes = kRewriteBytesPerRequest,
                                  bool rests_whole = false);

  // Suspend and resume running jobs (node_suspend.cc; docs/scheduling.md "Suspend"), root only.
  // One Status per id, in order. SuspendJobs: kNotFound, kPermissionDenied (not root),
  // kFailedPrecondition (not running, a lease, suspended already, being stopped, no GPU, an MPS
  // client, no room in host memory for its device memory), kUnavailable (the node cannot
  // suspend), kIo; ok once the suspend has begun (`show` says when it is made). ResumeJobs: the
  // job resumes on the same GPUs once they have room; kFailedPrecondition when it is not
  // suspended.
  std::vector<Status> SuspendJobs(const api::Caller& caller, const std::vector<JobId>& ids);
  std::vector<Status> ResumeJobs(const api::Caller& caller, const std::vector<JobId>& ids);

  // Cancels each job: pending ones end at once; running ones get SIGTERM (after MPS
  // terminate_client for their processes) and SIGKILL after the grace period. One Status per id, in
  // order: kNotFound, kPermissionDenied, kFailedPrecondition (already ended), kIo (the store
  // failed: that job's cancel, or when the batch cannot commit every one of the call's, is not
  // recorded and nothing changed), or ok. Cost: one store batch (one fsync) in all.
  // `max_rewrite_bytes` (0: none) bounds the bytes of records the call rewrites, at least one job:
  // ids past it are answered NotReached() (pinpoint/rewrite_budget.h).
  std::vector<Status> Cancel(const api::Caller& caller, const std::vector<JobId>& ids,
                             uint64_t max_rewrite_bytes = 0, bool rests_whole = false);

  // Leases (docs/api.md "open_lease"). OpenLease admits the request as Submit does, stores the
  // lease and places it at once. Errors: Submit's, and kUnavailable when it does not fit now
  // (the lease is then stored as cancelled, reason lease-not-placed).
  struct OpenedLease {
    JobRecord lease;
    LeaseEdits edits;
  };
  // A lease placed whose device's MPS control daemon is still starting is returned pending: it
  // starts at a later pass once the daemon runs (EditsOfLease then has its edits), or ends as
  // cancelled (lease-not-placed) kLeaseStartTimeoutMs after its opening.
  Result<OpenedLease> OpenLease(const api::Caller& caller, const LeaseRequest& request);
  // The container edits of a running lease started by this process (empty otherwise).
  LeaseEdits EditsOfLease(JobId id) const { return runner_.EditsOfLease(id); }
  // Root only: the lease's processes are those of `pid`'s cgroup from now on. Errors:
  // kPermissionDenied (not root; container_uid is not the lease's uid), kNotFound (no such lease
  // or process), kFailedPrecondition (ended, attached elsewhere, a refused cgroup),
  // kUnavailable (no ContainerCgroups), kIo.
  Result<JobRecord> AttachLease(const api::Caller& caller, JobId id, int64_t pid,
                                std::optional<uint32_t> container_uid);
  // The owner or root: ends the lease now when it has no process left, else stops them as a
  // cancel does. An ended lease is returned as it is. Errors: kNotFound, kPermissionDenied, kIo.
  Result<JobRecord> CloseLease(const api::Caller& caller, JobId id);

  // Errors: kNotFound. Without `with_env` its request.env is empty (ArrayTasks::Job).
  Result<JobRecord> Get(JobId id, bool with_env = true) const;
  // The user named `name`, from the node's (cached) user directory. Errors: kNotFound.
  Result<UserInfo> UserByName(const std::string& name) const { return users_->ByName(name); }
  // One page of a listing (docs/api.md "queue"): active jobs (pending and running, with pending
  // reasons) paged from the oldest, or with `all` every job paged from the newest. Skips `offset`
  // jobs, keeps at most `limit` (> 0), returns them in ascending id order with the count of all
  // that match. Cost: O(active jobs) without `all`; with it, two indexed store queries.
  struct Page {
    std::vector<JobRecord> jobs;  // without their environments (request.env empty)
    int64_t total = 0;
    // The jobs after the page, an array's rest counting each task it stands for.
    int64_t tasks_after = 0;
    std::vector<sched::StartEstimate> starts = {};  // ListQuery::estimate_starts: the pending jobs'
  };
  // With a bound in `ended` the listing is of ended jobs whose end_ms lies in [after, before),
  // from the store, whatever `all` says (one indexed count and one query, as with `all`).
  // `filter` selects further: in memory for active jobs, in the store's query otherwise (an
  // array's id there is the range of its tasks' ids). Errors: kInvalidArgument (offset, limit;
  // names with `all` or an end range), the store's.
  Result<Page> List(bool all, std::optional<uint32_t> uid, int offset, int limit,
                    const EndRange& ended = {}, const ListQuery& filter = {}) const;
  Result<std::vector<store::JobEvent>> Events(JobId id) const;
  // A piece of a job's stdout or stderr (docs/api.md "logs"): its last max_bytes (and of them
  // the last tail_lines lines), or from from_offset on at most max_bytes, cut before a UTF-8
  // character that is not complete yet. The job's own directory is read without following a
  // link, never more than max_bytes. `follow` is the caller's to act on (Service holds it).
  // Errors: kNotFound, kPermissionDenied, kIo (e.g. the file is a link).
  Result<LogsReply> Logs(const api::Caller& caller, const LogsRequest& request) const;
  // Devices, their slices and jobs, host resources, with the watcher's last readings
  // (docs/api.md "gpus").
  GpusReply GpusView() const;
  // The node for the Prometheus endpoint.
  metrics::Snapshot MetricsView() const;
  // Changes whenever a job changes state or the watcher has polled: a new MetricsView is due.
  int64_t generation() const;
  // Descriptors for the main loop's poll set: readable when a sharing backend has news for Step
  // (an MPS daemon's start, command or quit in flight). Valid until the next Step.
  std::vector<int> WaitFds() const {
    std::vector<int> fds = sharing_->WaitFds();
    for (int fd : runner_.WaitFds()) fds.push_back(fd);  // a suspend or resume done
    if (deps_.mig != nullptr && deps_.mig->WaitFd() >= 0)
      fds.push_back(deps_.mig->WaitFd());  // a reconfiguration done
    return fds;
  }

  // One pass: reaps and polls running jobs, escalates cancels past their grace, then, if anything
  // changed, schedules and launches. Returns the ids of jobs that reached a final state.
  std::vector<JobId> Step();
  // Whether the last Step left work for the next at once: starts or ends past its budget
  // (NodeOptions::Pass::pass_record_bytes), or ended jobs' processes past the launcher's budget for
  // a pass (launch::Launcher::MoreDue). The main loop then steps again without waiting.
  bool MoreDue() const { return starts_left_ || runner_.EndsLeft() || deps_.launcher->MoreDue(); }

  // What the site set (its inventory moved into devices()).
  const NodeOptions& options() const { return options_; }
  // The node's devices as they are now.
  const sched::Inventory& devices() const { return devices_; }
  size_t active_count() const { return jobs_.size(); }

 private:
  // The steps of List. ListStored: a page of the store's jobs (--all, or by end times).
  // TasksOfOlderRests: the tasks that the selected array rests older than `oldest` stand for
  // beyond their own rows. ListActive: the page of active jobs and recent launch failures, into
  // `page` (its total and tasks_after included). AddStartEstimates: each pending job's estimated
  // start on `page`, from a play at most every kStartEstimateReuseMs.
  Result<Page> ListStored(std::optional<uint32_t> uid, int offset, int limit, const EndRange& ended,
                          const ListQuery& select) const;
  int64_t TasksOfOlderRests(JobId oldest, std::optional<uint32_t> uid,
                            const ListQuery& select) const;
  Status ListActive(std::optional<uint32_t> uid, int offset, int limit, const ListQuery& select,
                    int64_t now_ms, Page& page) const;
  void AddStartEstimates(int64_t now_ms, Page& page) const;

  // The active job `id` if the caller may act on it. Errors: kNotFound, kPermissionDenied,
  // kFailedPrecondition (it ended).
  Result<JobRecord*> ControlledJob(const api::Caller& caller, JobId id);
  // Rewrites each job `change` changes (true; false: already so, ok), with event `event` and
  // `detail` after "by USER", in one store batch; refusals (ControlledJob's, change's errors) per
  // id; ids past `max_rewrite_bytes` (0: none) NotReached(). `change` gets the job to change and
  // the job as it was; it may change the request (the table's bytes follow).
  using JobChange = std::function<Result<bool>(JobRecord& job, const JobRecord& before)>;
  std::vector<Status> RewriteJobs(const api::Caller& caller, const std::vector<JobId>& ids,
                                  const char* event, uint64_t max_rewrite_bytes, bool rests_whole,
                                  const JobChange& change, const std::string& detail = "");
  // One scheduling pass over the pending jobs: their waits, and the starts the runner makes.
  void Schedule();
  // Preemption (preempt.cc): for the jobs `plan` leaves waiting for room, in its order, whose class
  // may preempt: the running jobs of the classes it preempts that must leave for it to start
  // (sched::PickVictims), each preempted by its class's mode and grace (JobRunner::Preempt).
  void PreemptFor(const sched::Snapshot& snap, const sched::Plan& plan);
  // The fair share's reclaim (preempt.cc), after PreemptFor and within what is left of its
  // preemptors a pass (`asked` used): for a slice of a user below their share of the MPS GPUs
  // waiting options_.pass.mps_reclaim_ms for one, the jobs of a GPU of a user above theirs
  // (sched::ReclaimCandidates), each preempted by its class's mode and grace; at most one room
  // made at a time for one user.
  void ReclaimFor(const sched::Snapshot& snap, const sched::Plan& plan, int asked);
  // A starving MIG slice (preempt.cc), after PreemptFor within its preemptors a pass: once the
  // placement drained for it has held (MigDynamic::HoldingFor, mig_drain_after_s), the jobs on
  // that placement's instances whose class may be preempted are preempted for it.
  void PreemptForMigDrain(const sched::Snapshot& snap, int& asked);
  // The class of running job `id` when it may be preempted now (not a lease, not being
  // preempted, not suspended, its class's mode not off); null otherwise.
  const ServiceClass* PreemptibleClass(JobId id) const;
  // Preempts each of `victims` for `for_job` by its class's mode: suspended (JobRunner::Suspend,
  // resuming by itself) when the mode is suspend and the job can be (SuspendRefusal), otherwise
  // by its grace (JobRunner::Preempt); those it did. `no_suspend`, when not empty, is why a
  // suspend would not make the room (a MIG placement to reshape): each is requeued, and says so.
  std::vector<JobId> PreemptAll(const std::vector<JobId>& victims, JobId for_job,
                                const std::string& no_suspend = "");
  // The devices of the suspended jobs: a mig-dynamic GPU keeps their instances, never destroyed
  // nor held by a drain, for their resume (sched::mig::Instance::kept).
  std::set<int> KeptDevices() const;
  // Why running job `job` cannot be suspended now (node_suspend.cc), or "" when it can: not
  // running, a lease, suspended already, being stopped, no GPU, an MPS client, no suspending
  // on this node, or no room in host memory for its device memory (DeviceBytesOf).
  std::string SuspendRefusal(const JobRecord& job) const;
  // The device memory a suspend of `job` may move to host memory: what its slices may use (a
  // whole GPU's memory for a whole GPU).
  uint64_t DeviceBytesOf(const JobRecord& job) const;
  // What a suspended job that resumes asks the scheduler for (SchedSnapshot): its own GPUs, with
  // the slices it held; its host CPUs and memory it kept.
  sched::Demand ResumeDemandOf(const JobRecord& job) const;
  // An ended job's enforcement entries that disagree: a warning each, and the metric's count.
  void CountDisagreements(const JobRecord& job);
  // The scheduler's view of the node now: inventory (drained devices marked, recent business),
  // running and settling jobs, user limits; with `with_pending`, the pending jobs that may start
  // in a pass (held ones get their wait reason here).
  sched::Snapshot SchedSnapshot(bool with_pending);
  // Marks drained in `inventory` the devices that take no new job now: those recovering from an
  // MPS fault, and those held by a process that could not be killed (WatchFeedback::Drained).
  void MarkUnavailable(sched::Inventory& inventory) const;
  // Leases opened while their MPS control daemon was starting that have not started
  // kLeaseStartTimeoutMs after their opening end as cancelled (lease-not-placed).
  void ExpireStartingLeases(int64_t now_ms);

  NodeOptions options_;  // what the site set; its inventory is moved into devices_
  // The node's devices as they are now, owned here: taken from options.inventory at
  // construction, each one's rules set then from its sharing mode. Changed only by Node's parts:
  // FaultRecovery's drains (through JobRunner), and the MIG part's slots when Node lends them
  // (MigDynamic::Poll and Plan). Everything else reads them.
  sched::Inventory devices_;
  NodeDeps deps_;
  sharing::Backends* sharing_;  // deps_.sharing
  SystemUserDirectory system_users_;
  CachingUserDirectory cached_system_users_{&system_users_, deps_.clock};
  UserDirectory* users_;  // deps_.users or cached_system_users_
  Admission admission_{&options_, &devices_, users_};
  JobTable jobs_{deps_.store, deps_.clock};  // pending and running, ended until reported
  ArrayTasks arrays_{&jobs_, deps_.store};
  Dependencies dependencies_{&jobs_, &arrays_};  // a submit's check, a pass's states
  bool dirty_ = true;                            // something changed since the last schedule
  std::optional<int64_t> recheck_at_ms_;         // the last plan's Plan::recheck_at_ms
  bool starts_left_ = false;                     // the last Schedule placed starts past its budget
  int64_t slow_pass_logged_ms_ = INT64_MIN / 2;  // the last "a pass took" line (steady clock ms)
  // MPS faults: the devices recovering from one and the jobs it hit, drains and why.
  FaultRecovery faults_{options_.watch.mps_fault_drain_after, deps_.store};
  // The watcher's side: watched jobs, usage, and the slots of ended jobs whose processes may
  // still be on their GPUs (a device goes to another job only once they have left it).
  WatchFeedback watch_{deps_.watcher, deps_.store, deps_.cgroups, &devices_,
                       options_.watch.usage_flush_ms};
  // The running half: starts, polls, stops, ends and requeues.
  // Waiting jobs whose room is being made: the jobs preempted for them.
  std::map<JobId, std::vector<JobId>> making_room_;
  // Slices waiting for an MPS GPU: since when (steady across passes, not a restart); those of
  // making_room_ that were made room for by the fair share's reclaim.
  std::map<JobId, int64_t> reclaim_since_;
  std::set<JobId> reclaiming_;
  JobRunner runner_{RunnerDeps{.options = &options_,
                               .inventory = &devices_,
                               .store = deps_.store,
                               .launcher = deps_.launcher,
                               .cgroups = deps_.cgroups,
                               .containers = deps_.containers,
                               .lease_specs = deps_.lease_specs,
                               .clock = deps_.clock,
                               .users = users_,
                               .sharing = sharing_,
                               .jobs = &jobs_,
                               .watch = &watch_,
                               .faults = &faults_,
                               .output_space = deps_.output_space,
                               .checkpointer = deps_.checkpointer}};
  std::map<std::pair<JobState, Reason>, int64_t> ended_total_;
  // Ended jobs' enforcement entries that said "disagrees", by resource (docs/enforcement.md).
  std::map<std::string, int64_t> disagreements_total_;
  std::map<std::string, int64_t> overrides_total_;  // "overridden" verdicts, by resource
  // The jobs that failed to launch of late, each user's (since this pinpointd started), for the
  // active listing (List): enough to select them without reading the store.
  RecentFailures recent_failures_;
  // What the last scheduling pass held back for its first blocked job: a lease placed between
  // passes (OpenLease, sched::PlaceOne) never takes it.
  std::optional<sched::Reservation> reservation_;
  // The last start estimates (List with estimate_starts), reused for kStartEstimateReuseMs: the
  // loop plays at most once in that time, whatever the requests and changes in between.
  struct StartEstimates {
    bool played = false;
    int64_t at_ms = 0;
    std::map<JobId, sched::StartEstimate> by_id;
  };
  mutable StartEstimates start_estimates_;
  // Leases opened while their MPS control daemon was starting (a pending lease is one, restarts
  // included): given up kLeaseStartTimeoutMs after their opening.
  std::set<JobId> starting_leases_;
};

}  // namespace pinpoint::daemon
