// The pinpointd socket API as typed messages, the job ops: for each op (docs/api.md) a request
// and a reply struct, and the public view of a job that replies carry (the node's ops are in
// api_node.h, leases in api_leases.h; api.h includes all three). pinpoint::Client (client.h)
// sends the requests and returns the replies; pinpointd's Service serves them. Their JSON forms
// are in api_codec.h, the one place that knows field names and spellings.
//
// A reply struct is the op's fields of an "ok": true reply. An "ok": false reply is a Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/array_spec.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint {

// Largest message either side accepts, in bytes (the newline excluded).
inline constexpr size_t kMaxMessageBytes = 1 << 20;

// One request costs pinpointd a bounded time (a few ms), so that no user's request holds up
// another's (docs/security.md "Locks, descriptors and budgets"): a request names at most
// kMaxIdsPerRequest jobs (kCancelMaxIds for one that rewrites each job's record), and a listing's
// reply holds at most kQueuePageMax. Client (client.h) splits longer lists and pages longer
// listings itself.
inline constexpr size_t kMaxIdsPerRequest = 256;
inline constexpr int kQueuePageMax = 256;

// The "queue" op returns one page of jobs: this many when the request gives no limit (or 0). A
// request may ask for up to kQueueMaxLimit; the reply holds at most kQueuePageMax of them, and
// says in "limit" the page size it used.
inline constexpr int kQueueDefaultLimit = 100;
inline constexpr int kQueueMaxLimit = 10000;
inline constexpr int kQueueMaxOffset = 1'000'000'000;
// What a "queue" request may select on at most: names, and job or array ids.
inline constexpr size_t kQueueMaxNames = 64;
inline constexpr size_t kQueueMaxIds = 64;
// A "cancel", "hold" or "release" names at most this many jobs: each one named is a record
// rewritten, four times the cost of a wait's lookup.
inline constexpr size_t kCancelMaxIds = 64;
// A "wait" names at most this many jobs ("ids"). The ids of the waits pinpointd holds unanswered
// are bounded too: at most kWaitMaxHeldIdsPerUid for one non-root uid, kWaitMaxHeldIds in all; a
// wait past a bound is refused with kUnavailable (one with a single "id" counts 1).
inline constexpr size_t kWaitMaxIds = kMaxIdsPerRequest;
inline constexpr size_t kWaitMaxHeldIdsPerUid = 20000;
inline constexpr size_t kWaitMaxHeldIds = 200000;

// ---- What a client sees of a job ----

// How much of a job's environment a reply carries (docs/api.md, "Who may do what").
enum class EnvShown {
  kFull,     // to the job's owner and root: request.env as submitted
  kHidden,   // to anyone else (show, wait): request.env is empty and the wire says env_hidden
  kOmitted,  // in listings (queue), for everyone: the wire has no request.env at all
};

// One resource of a job's enforcement list (docs/enforcement.md): what the job asked for, what
// the system applied (read back at its start, never copied from the request), what was observed
// while it ran, and the verdict. Text for people; `resource` and `verdict` are fixed words.
struct Enforcement {
  std::string resource;  // "devices" | "gpu_mem" | "gpu_share" | "cpus" | "mem" | "time"
  std::string asked = {};
  std::string applied = {};
  std::string observed = {};
  // "held" | "exceeded" | "disagrees" (pinpoint applied something else than was asked) |
  // "overridden" (a process of the job ran with something else than it was given) | "not seen" |
  // "not read" | "not measurable"
  std::string verdict = {};
  bool operator==(const Enforcement&) const = default;
};

// A job as replies carry it ("JobRecord" in docs/api.md). The daemon builds it from its own record
// (JobRecord in common/job_record.h, which holds more); everything the wire has always carried is
// here, the supervision fields included, so that replies stay what they were.
struct JobView {
  JobId id = 0;
  JobKind kind = JobKind::kJob;  // the wire has "kind" only for leases
  JobRequest request;            // as submitted, env as `env_shown` says
  EnvShown env_shown = EnvShown::kFull;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;  // "uid N" when the uid has no name
  JobState state = JobState::kPending;
  std::string reason;     // why it is pending, or why it ended (reason::k...)
  std::string detail;     // one line for people
  int64_t submit_ms = 0;  // Unix epoch milliseconds; 0 = not yet
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<int> exit_code;         // set when the program exited
  std::optional<int> term_signal;       // set when it was killed by a signal
  std::vector<Allocation> allocations;  // the devices it holds or held
  JobUsage usage;
  // How the daemon supervises and stops it, as the wire has always shown (docs/api.md).
  int64_t pid = 0;               // its supervisor (pinpoint-shim); 0 = not launched
  uint64_t pid_start_ticks = 0;  // the supervisor's /proc start time
  bool cancel_requested = false;
  std::string cancelled_by;
  bool fault_suspect = false;  // an MPS fault ended it once; it reruns alone
  std::string stop_reason;     // set when pinpoint stops it (reason::kGpuMemExceeded)
  std::string stop_detail;
  Hold hold = Hold::kNone;  // a pending job held back (`pinpoint hold`); on the wire only when held
  std::string lease_cgroup;  // a lease's attached cgroup (JobRecord::lease_cgroup)
  std::vector<int> cpuset =
      {};           // the host CPUs it runs on (JobRecord::cpuset); on the wire only when set
  ArrayTask array;  // a job array's task: its array and index; on the wire only then
  // A running job's suspend (docs/scheduling.md "Suspend"): "suspending", "suspended" or
  // "resuming", and one line for people (who asked, since when, what it holds in host memory,
  // whether it resumes by itself); on the wire only while not "".
  std::string suspend = {};
  std::string suspend_detail = {};
  // The time its ended suspends took (JobRecord::suspended_ms): its time limit does not count it.
  // On the wire only when not 0.
  int64_t suspended_ms = 0;
  // One entry per resource, for a job pinpointd started (none for a lease or a pending job).
  std::vector<Enforcement> enforcement = {};
};

// One line of a job's history (docs/api.md, "show").
struct JobEventView {
  int64_t time_ms = 0;
  std::string kind;  // "submit", "start", "cancel-request", "requeue", "end", ...
  std::string detail;
};

// ---- The ops. Each request names its op and its reply type. ----

struct VersionReply {
  std::string version;              // pinpointd's
  std::string backend;              // "nvml", "simulated:<preset>", "simulated:config"
  std::string driver;               // the NVIDIA driver's version, or "simulated"
  int schema = 0;                   // the job store's schema version
  std::optional<int> metrics_port;  // the Prometheus endpoint's; nullopt when it is off
};
struct VersionRequest {
  static constexpr char kOp[] = "version";
  using Reply = VersionReply;
};

// The tasks a submit with `array` stored: jobs first_job_id .. last_job_id, one per index in
// index order; the array's id is its first task's job id.
struct SubmittedArrayView {
  JobId id = 0;
  int count = 0;
  JobId first_job_id = 0;
  JobId last_job_id = 0;
  bool operator==(const SubmittedArrayView&) const = default;
};

// The job as stored (pending), or with `wait` as it ended. With `array`: the array's first task.
struct SubmitReply {
  JobView job;
  std::optional<SubmittedArrayView> array = std::nullopt;  // set when the request had `array`
};
// A field of a submit that a job script's directive gave (its `#SBATCH` or `#PINPOINT` lines,
// docs/cli.md "Coming from Slurm: job scripts"), not the command line: text from a file the job's
// user can write. The daemon judges such a field with the rights of the user the job runs as,
// never with more than the caller's (docs/security.md "A job script's directives"):
//   kAsUser     request.as_user (CheckSubmitAs)     kPriority  request.priority (CheckPriority)
//   kHold       the submit's hold (a user hold)     kAfter, kAfterOk  the dependencies' jobs
//   kArray      the array (its count, against the user's max_jobs_per_user and bytes)
//   kName, kOutput, kError, kEnv, kCwd  the request's text (the user's max_user_request_bytes)
//   kTimeLimit  request.time_limit_s (max_time_limit bounds every caller today)
//   kQos        request.qos (CheckQos: who may use the service class)
enum class ScriptField {
  kAsUser,
  kPriority,
  kHold,
  kAfter,
  kAfterOk,
  kArray,
  kName,
  kOutput,
  kError,
  kEnv,
  kCwd,
  kTimeLimit,
  kQos,
};
// Each field that came from a script, with where: "job.sh:3" (the script as its submitter typed
// it, and the directive's line). On the wire as "from_script": {"priority": "job.sh:3", ...}; a
// place is 1 to kMaxScriptPlaceBytes bytes, one line for people (FirstUnprintable finds nothing).
using ScriptOrigins = std::map<ScriptField, std::string>;
inline constexpr size_t kMaxScriptPlaceBytes = 4200;  // a path (kMaxPathBytes) and ":LINE"

struct SubmitRequest {
  static constexpr char kOp[] = "submit";
  using Reply = SubmitReply;
  JobRequest request;
  bool wait = false;  // reply when the job has ended
  // Makes a retry after a lost reply return the first job (docs/api.md): 1 to 128 printable
  // ASCII characters. nullopt: none.
  std::optional<std::string> idempotency_key;
  bool hold = false;  // store it held by its submitter (Hold::kUser): it starts after "release"
  // A job array (array_spec.h): one job per index, all stored at once; `wait` does not go with
  // it. On the wire as FormatArraySpec's text.
  std::optional<ArraySpec> array = std::nullopt;
  // The fields a job script gave (ScriptOrigins), judged with its user's rights; empty: none.
  ScriptOrigins from_script = {};
};

// "id": the job in a final state, in `job`. "ids": every job named, in the order named, in
// `jobs`, all in a final state, answered once the last of them has ended; their records carry no
// environment (env_shown kOmitted, as in listings: thousands of them stay small).
struct WaitReply {
  JobView job;
  std::vector<JobView> jobs = {};
};
struct WaitRequest {
  static constexpr char kOp[] = "wait";
  using Reply = WaitReply;
  JobId id = 0;  // one job; 0 when `ids` names them
  std::vector<JobId> ids =
      {};  // or several: 1 to kWaitMaxIds positive ids (a repeat is answered twice)
};

// When a pending job would start ("queue" with "start"; sched/start_estimate.h): start_ms, or
// `why` there is no estimate ("held", "waits for a job without a time limit to end", ...).
struct StartView {
  JobId id = 0;
  std::optional<int64_t> start_ms;  // Unix epoch ms
  std::string why;
};

// One page of a listing.
struct QueueReply {
  std::vector<JobView> jobs;  // ascending ids; env_shown kOmitted
  std::string backend;
  int64_t total = 0;  // jobs that match in all
  int offset = 0;
  int limit = 0;     // the page size used
  int64_t more = 0;  // jobs beyond this page (rows: an array's rest counts one)
  // The same counted in jobs: an array's rest counts each task it stands for (what people read).
  int64_t more_tasks = 0;
  std::vector<StartView> starts = {};  // with "start": one per pending job of the page, in order
};
struct QueueRequest {
  static constexpr char kOp[] = "queue";
  using Reply = QueueReply;
  bool all = false;                 // also ended jobs (newest first), not only active ones
  std::optional<std::string> user;  // only this user's jobs (a user name)
  int limit = 0;                    // 1 to kQueueMaxLimit; 0: kQueueDefaultLimit
  int offset = 0;                   // jobs to skip, 0 to kQueueMaxOffset
  // Only jobs that ended in [ended_after_ms, ended_before_ms) (Unix epoch ms; either bound may be
  // left out): either one makes the listing one of ended jobs, newest first, whatever `all` says.
  std::optional<int64_t> ended_after_ms = std::nullopt;
  std::optional<int64_t> ended_before_ms = std::nullopt;
  // Selections (Slurm's squeue --name, --states, --jobs), each given must match: a job whose name
  // is one of `names` (at most kQueueMaxNames; only among active jobs: not with `all` or an end
  // range), whose state is one of `states`, whose id, or its array's id, is one of `ids` (at most
  // kQueueMaxIds).
  std::vector<std::string> names = {};
  std::vector<JobState> states = {};
  std::vector<JobId> ids = {};
  // The reply's `starts`: when each pending job of the page would start, from the time limits of
  // what runs and waits (Slurm's squeue --start). Only among active jobs.
  bool start = false;
  // Each job's enforcement list (JobView::enforcement), which a listing leaves out unless asked:
  // `pinpoint report` counts its verdicts.
  bool enforcement = false;
};

struct ShowReply {
  JobView job;
  std::vector<JobEventView> events;  // in the order they were written
};
struct ShowRequest {
  static constexpr char kOp[] = "show";
  using Reply = ShowReply;
  JobId id = 0;
};

// One job's outcome: ok, or why it was not cancelled (kNotFound, kPermissionDenied,
// kFailedPrecondition for a job that already ended, kIo).
struct CancelResult {
  JobId id = 0;
  Status status;
  // "cancel" of a job array's id (its first task's): the unfinished tasks the cancel reached;
  // 0 for a plain job.
  int array_tasks = 0;
};
struct CancelReply {
  std::vector<CancelResult> results;  // one per id of `ids`, then one per id of `arrays`, in order
};
struct CancelRequest {
  static constexpr char kOp[] = "cancel";
  using Reply = CancelReply;
  std::vector<JobId> ids;  // jobs, each only itself (a job array's first task included)
  // Job arrays by their id (the first task's job id): each cancels every task of its array that
  // has not ended. An id that names no array's first task cancels that job, as in `ids`.
  // `ids` and `arrays` hold 1 to kCancelMaxIds positive ids together.
  std::vector<JobId> arrays = {};
};

// "hold" and "release": each job's outcome as for "cancel". hold: kNotFound, kPermissionDenied
// (another user's job), kFailedPrecondition (a job that is running or ended: only a pending job
// can be held), kIo. release: the same, and kPermissionDenied for a job root held, unless the
// caller is root; releasing a job that is not held is Ok. Root's hold is an admin hold
// (Hold::kRoot), a user's a user hold (Hold::kUser); root's hold replaces a user's.
// `arrays`, as cancel's: each array id holds (releases) every pending task of its array, one
// result for the array with `array_tasks` the tasks it reached (its running tasks are passed
// over; none pending is kFailedPrecondition); an id that names no array's first task is a job.
struct HoldReply {
  std::vector<CancelResult> results;  // one per id of `ids`, then one per id of `arrays`, in order
};
struct HoldRequest {
  static constexpr char kOp[] = "hold";
  using Reply = HoldReply;
  std::vector<JobId> ids;  // with `arrays`, 1 to kCancelMaxIds positive ids
  std::vector<JobId> arrays = {};
};
struct ReleaseReply {
  std::vector<CancelResult> results;  // one per id of `ids`, then one per id of `arrays`, in order
};
struct ReleaseRequest {
  static constexpr char kOp[] = "release";
  using Reply = ReleaseReply;
  std::vector<JobId> ids;  // with `arrays`, 1 to kCancelMaxIds positive ids
  std::vector<JobId> arrays = {};
};

// "suspend" and "resume" (root only; docs/scheduling.md "Suspend"): each job's outcome as for
// "hold". suspend: kNotFound, kPermissionDenied (not root), kFailedPrecondition (not running, a
// lease, suspended already, being stopped, no GPU, an MPS client, no room in host memory for its
// device memory), kUnavailable (the node cannot suspend); ok once the suspend has begun (the job's
// `suspend` says when it is made). resume: the job resumes on the same GPUs once they have room;
// kFailedPrecondition when it is not suspended. An id of `arrays` names a job as `ids` does (a job
// array's id: its first task alone); results follow `ids`, then `arrays`.
struct SuspendReply {
  std::vector<CancelResult> results;  // one per id of `ids`, then of `arrays`, in order
};
struct SuspendRequest {
  static constexpr char kOp[] = "suspend";
  using Reply = SuspendReply;
  std::vector<JobId> ids;  // 1 to kCancelMaxIds positive ids
  std::vector<JobId> arrays = {};
};
struct ResumeReply {
  std::vector<CancelResult> results;  // one per id of `ids`, then of `arrays`, in order
};
struct ResumeRequest {
  static constexpr char kOp[] = "resume";
  using Reply = ResumeReply;
  std::vector<JobId> ids;  // 1 to kCancelMaxIds positive ids
  std::vector<JobId> arrays = {};
};

// "update_array": changes the %K limit of job arrays while they wait (Slurm's `scontrol update
// ArrayTaskThrottle`): each array of `arrays` gets `limit` (0: none) on every task that has not
// ended, one result per array as hold's (`array_tasks`: the tasks changed). The array's owner or
// root. Errors per array: as hold's; kFailedPrecondition when every task has ended.
struct UpdateArrayReply {
  std::vector<CancelResult> results;  // one per id of `arrays`, in order
};
struct UpdateArrayRequest {
  static constexpr char kOp[] = "update_array";
  using Reply = UpdateArrayReply;
  std::vector<JobId> arrays;  // 1 to kCancelMaxIds positive ids
  int limit = 0;              // 0 to kMaxArrayTasks
};

// What "update" changes in a job (docs/cli.md "update", Slurm's `scontrol update`): each field
// given replaces the job's; at least one is given. A pending job takes every field, within the
// rules of a submit; a running job only time_limit_s (which only root may raise) and array_limit.
struct JobEdit {
  std::optional<int64_t> time_limit_s;    // 0: the node's default_time_limit, as at submit
  std::optional<uint64_t> gpu_mem_bytes;  // a slice's memory (the job asks for a slice)
  std::optional<int> gpu_share_pct;       // 0 to 100; needs a slice
  std::optional<int> priority;
  std::optional<std::string> name;
  std::optional<int> array_limit;     // a task's %K (0: none); only a job array's task
  std::optional<int> gpus;            // whole GPUs, or with a slice the number of slices; 0: none
  std::optional<int> cpus;            // host CPUs, at least 1
  std::optional<uint64_t> mem_bytes;  // host memory; 0: no limit
  // A MIG instance of this profile (submit --mig; without gpu_mem_bytes the slice becomes the
  // profile's whole memory); "": any device again.
  std::optional<std::string> mig_profile;
  // Its service class (submit --qos), judged as at submit with the caller's rights.
  std::optional<std::string> qos;
  bool empty() const {
    return !time_limit_s && !gpu_mem_bytes && !gpu_share_pct && !priority && !name &&
           !array_limit && !gpus && !cpus && !mem_bytes && !mig_profile && !qos;
  }
};
// "update": changes jobs that have not started (and a running job's time limit) without losing
// their place in the queue; one result per id, and per array of `arrays`, as hold's. The
// refusals per field and state are in docs/api.md "update" (policy: daemon/jobs/job_edit.h).
struct UpdateReply {
  std::vector<CancelResult> results;  // one per id of `ids`, then one per id of `arrays`, in order
};
struct UpdateRequest {
  static constexpr char kOp[] = "update";
  using Reply = UpdateReply;
  std::vector<JobId> ids;  // with `arrays`, 1 to kCancelMaxIds positive ids
  std::vector<JobId> arrays = {};
  JobEdit edit = {};
};

}  // namespace pinpoint
