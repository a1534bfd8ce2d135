// The job model shared by the daemon and its clients: what a job asks for and what became of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pinpoint/sharing_mode.h"
#include "pinpoint/status.h"

namespace pinpoint {

using JobId = int64_t;

// What a record is: a job pinpointd runs, or a lease on a slice for processes it did not start
// (a container's; docs/containers.md). A lease's request has no argv, cwd or env.
enum class JobKind { kJob, kLease };
const char* JobKindName(JobKind kind);  // "job", "lease"
std::optional<JobKind> JobKindFromName(const std::string& name);

// What a job asks for. The one request syntax:
//   gpus=N, gpu_mem_bytes=0          N whole GPUs, exclusive
//   gpus=1, gpu_mem_bytes=M [share]  a slice of one GPU: M bytes of device memory, the CUDA
//                                    context included, and optionally an SM share in percent
//   gpus=N, gpu_mem_bytes=M [share]  one such slice on each of N distinct devices
//   gpus=0                           no GPU at all (CPU-only job)
// Any of these with devices=[i, ...] (one index per GPU, as `pinpoint gpus` lists them): on
// exactly those devices, as when a batch system has chosen them (docs/cluster.md).
// gpu_share_pct=0 means "no SM cap": the slice reserves no share and is not capped.
inline constexpr size_t kMaxGpuTypeBytes = 64;
// Whether the GPU model `model` ("NVIDIA A100-SXM4-80GB") is what a Slurm GPU type `type` names
// ("a100", "A100_80GB", "nvidia_a100-sxm4-80gb"): each of the type's words (split at anything but
// letters and digits, case aside) begins a word of the model's name, followed by letters only.
bool GpuModelMatches(const std::string& type, const std::string& model);

struct JobRequest {
  std::string name;                        // free text, for people; may be empty
  std::vector<std::string> argv;           // program and arguments; argv[0] searched in PATH
  std::string cwd;                         // absolute working directory
  std::map<std::string, std::string> env;  // environment the job starts from
  int gpus = 0;
  uint64_t gpu_mem_bytes = 0;
  int gpu_share_pct = 0;
  int cpus = 1;              // host CPUs (cgroup cpu.max); >= 1
  uint64_t mem_bytes = 0;    // host memory (cgroup memory.max); 0 = no limit, not reserved
  int priority = 0;          // higher runs first; ties go to the earlier submission
  std::string as_user;       // only root may set it: run the job as this user
  std::vector<int> devices;  // empty: pinpoint chooses; else these device indices, one per GPU
  // submit --mig PROFILE ("1g.10gb"): one GPU, a MIG instance of this profile (docs/scheduling.md
  // "Dynamic MIG"); with gpu_mem_bytes 0 the daemon makes it the instance's whole memory before
  // storing. Letters, digits, '.' and '+', at most kMaxMigProfileBytes; "": any device.
  std::string mig_profile;
  // Where the job's stdout and stderr go (submit -o/-e): empty = the job directory, read with
  // `pinpoint logs`. A path, relative to cwd or absolute, with %j or %J (job id), %u (user name),
  // %x (job name), %A (array id), %a (array task index), %N (node name) and %% replaced
  // (OutputPathFor); opened by the job's own process after it has become the job's user, never
  // through a link in its last component. Output set and error empty: stderr goes to the output
  // file too.
  std::string output_path;
  std::string error_path;
  // Seconds the job may run (submit --time); 0 = none given. The daemon fills in its configured
  // default (default_time_limit) before storing, so a stored job shows the limit it runs under.
  // A running job past it is stopped as a cancel stops it and ends with reason::kTimeLimit.
  int64_t time_limit_s = 0;
  // Jobs this one waits for (submit --after / --afterok): it starts only once every job in
  // `after` has ended, however, and every job in `afterok` has completed (exit 0). When one in
  // `afterok` ends any other way the job is cancelled (reason::kDependencyNeverSatisfied).
  // At most kMaxDependencies ids in both together; each names a job of the submitter's (any job
  // for root) that existed at submit.
  std::vector<JobId> after = {};
  std::vector<JobId> afterok = {};
  // The submitter's umask (0 to 0777), taken by the CLI at submit as Slurm does: the job runs with
  // it, and its stdout and stderr are created with it, so whether others may read them is the
  // user's choice. -1 (a client that sends none): 077, files only the user reads.
  int umask = -1;
  // submit --signal=[B:]SIG[@SECONDS], as Slurm's: `signal` (1 to kMaxSignal; 0: none) is sent
  // once, `signal_before_s` seconds (0 to kMaxSignalBeforeS) before the job's time limit, so a
  // training can checkpoint: to the job's process group, or with `signal_leader_only` (B:) to
  // its first process alone. A job with a signal needs a time limit (its own or the node's).
  int signal = 0;
  int64_t signal_before_s = 0;
  bool signal_leader_only = false;
  // submit --requeue, as Slurm's: the job goes back to the queue, instead of failing, when it is
  // lost with its node (its processes and supervisor gone without an exit status, found at the
  // daemon's start) or ended by an MPS fault it did not cause, where the node's
  // mps_fault_policy would fail it. Never after a cancel, a stop or an exit.
  bool requeue = false;
  // Slurm's task layout on the job's one node (submit -n/--ntasks, --gpus-per-task; docs/cli.md
  // "Slurm's environment and srun"): how many tasks a plain `srun` in the job starts (1 to
  // kMaxTasks), and how many of the job's GPUs each gets (0: each sees all of them). With
  // gpus_per_task, gpus is ntasks x gpus_per_task. They reserve nothing of their own: cpus and
  // gpus are the job's whole.
  int ntasks = 1;
  int gpus_per_task = 0;
  // Where and on which host the job was submitted (SLURM_SUBMIT_DIR, SLURM_SUBMIT_HOST): what the
  // client says, for the job's own use; the daemon checks neither ("" when not sent).
  std::string submit_dir;
  std::string submit_host;
  // The job's service class (submit --qos, Slurm's QOS; docs/scheduling.md "Service classes"): a
  // name the node's config defines (qos). "" asks for the node's default class, which the daemon
  // fills in before storing, so a stored job names the class it runs in. Letters, digits, '_',
  // '-' and '.', at most kMaxQosBytes.
  std::string qos;
  // Slurm's GPU type (--gpus TYPE:N, --gres gpu:TYPE:N, --gpus-per-task TYPE:N): a model the node
  // must have (GpuModelMatches), else the submit is refused; any GPU of the node then, as on one
  // Slurm node. Letters, digits, '_', '-' and '.', at most kMaxGpuTypeBytes; "": any.
  std::string gpu_type;

  bool IsSlice() const { return gpus > 0 && gpu_mem_bytes > 0; }
  bool IsWholeGpu() const { return gpus > 0 && gpu_mem_bytes == 0; }
  bool operator==(const JobRequest&) const = default;
};

// The bytes of a request's text, what a job costs the daemon in memory and the store beyond its
// fixed fields: argv, environment names and values, cwd, name, as_user, the -o/-e paths and the
// submit directory and host.
uint64_t RequestBytes(const JobRequest& r);

// Bounds on a request's text (docs/api.md "submit"); the whole message is at most
// kMaxMessageBytes as well.
inline constexpr size_t kMaxArgs = 4096;            // argv entries
inline constexpr size_t kMaxArgBytes = 128 * 1024;  // one argv entry or environment value
inline constexpr size_t kMaxPathBytes = 4095;       // cwd
inline constexpr size_t kMaxEnvEntries = 4096;
inline constexpr size_t kMaxEnvNameBytes = 1024;
inline constexpr size_t kMaxNameBytes = 256;         // name, as_user
inline constexpr size_t kMaxDependencies = 64;       // after and afterok together
inline constexpr int kMaxSignal = 64;                // SIGRTMAX on Linux
inline constexpr int64_t kMaxSignalBeforeS = 65535;  // Slurm's bound for --signal's @SECONDS
inline constexpr int kMaxTasks = 65536;              // ntasks (as many as cpus can be)

// Checks a request for values no node could ever run (not node-specific fit): empty argv,
// relative cwd, gpus < 0 or > 1024, share outside 0..100, share without gpu_mem, cpus < 1,
// devices not one distinct non-negative index per GPU... and for bytes that mean something
// else: a NUL in argv, cwd or an environment value (the job would get less than pinpoint
// shows); a control character or invalid UTF-8 in name or as_user (one line for people); an
// environment name that is empty or not printable ASCII without '='; a time limit outside
// 0..kMaxTimeLimitS (pinpoint/time_limit.h); a dependency that is not a positive id, or more than
// kMaxDependencies of them; a signal outside 1..kMaxSignal or sent more than kMaxSignalBeforeS
// before the limit (or a time or B: without a signal); ntasks outside 1..kMaxTasks, or
// gpus_per_task that is negative or does not make gpus (ntasks x gpus_per_task); a submit_dir
// that is not absolute or a submit_host that is not display text. Counts and lengths are bounded
// by the constants above.
// Errors: kInvalidArgument naming the first bad field (argv[2], env[NAME], name, cwd ...).
inline constexpr size_t kMaxMigProfileBytes = 32;
inline constexpr size_t kMaxQosBytes = 64;
Status ValidateRequest(const JobRequest& request);
// A service class name's spelling (JobRequest::qos, config qos): "" or letters, digits, '_', '-'
// and '.', at most kMaxQosBytes. Whether a node has the class is its admission's question.
// Errors: kInvalidArgument.
Status ValidateQosName(const std::string& qos);

// A job that is one task of a job array (`submit --array`, array_spec.h). Each task is an
// ordinary job with its own id; the tasks of one array have consecutive ids, in index order, and
// the array's id is its first task's job id (Slurm's ArrayJobID).
struct ArrayTask {
  JobId array_id = 0;  // 0: the job is not in an array
  int index = 0;       // this task's index (%a, PINPOINT_ARRAY_TASK_ID)
  int count = 0;       // tasks in the array
  int min_index = 0;   // the array's lowest and highest index
  int max_index = 0;
  int limit = 0;  // %K: at most this many of its tasks running at once; 0: no limit
  // Set only on an array's rest (daemon/jobs/array_rest.h): the one record that stands for every
  // task of the array not yet taken out as a job of its own (as Slurm keeps a pending array).
  // `pending` is those tasks' indices in ParseArraySpec's syntax (`1-100`, `0-12:4`); the rest's
  // id is its first pending task's, `index` that task's index.
  std::string pending = {};
  bool operator==(const ArrayTask&) const = default;
};

// The file an output pattern names for job `id` of `user`: %j and %J (Slurm's job.step; a job
// has no step), %u, %x, %A (the array's id, or `id` for a job not in an array), %a (the task
// index, 0 for a job not in an array), %N (`node`, the node's name) and %% replaced, and a
// relative path joined to `cwd`. The pattern was checked by ValidateRequest (no other %).
std::string OutputPathFor(const std::string& pattern, JobId id, const std::string& user,
                          const std::string& name, const std::string& cwd,
                          const ArrayTask& array = {}, const std::string& node = "");

enum class JobState { kPending, kRunning, kCompleted, kFailed, kCancelled };

const char* JobStateName(JobState state);  // "pending", "running", ...
std::optional<JobState> JobStateFromName(const std::string& name);
inline bool IsFinal(JobState s) { return s != JobState::kPending && s != JobState::kRunning; }

// Whether a pending job is held back from scheduling (`pinpoint hold`, `submit --hold`): by its
// owner (a user hold: the owner or root releases it) or by root (an admin hold, as Slurm's:
// only root releases it).
enum class Hold { kNone, kUser, kRoot };
const char* HoldName(Hold hold);  // "none", "user", "root"
std::optional<Hold> HoldFromName(const std::string& name);

// Why a job is in its final state (and, while pending, why it waits). The daemon keeps a
// Reason; the words below are how the API (JobView::reason, docs/api.md) and people see it, and
// only codecs turn one into the other (ReasonName, ReasonFromName; the store keeps its own table).
enum class Reason {
  kNone,  // "": a new job, or one the scheduler has not looked at yet
  // Ends.
  kExitedZero,
  kExitedNonZero,
  kSignaled,
  kCancelled,
  kLaunchFailed,
  kLost,
  kGpuFault,
  kGpuMemExceeded,
  kTimeLimit,
  kMpsUnresponsive,
  kDependencyNeverSatisfied,
  kLeaseClosed,
  kLeaseEmptied,
  kLeaseNotAttached,
  kLeaseNotPlaced,
  // Waits (pending, and requeued).
  kHeld,
  kDependency,
  kUserLimit,
  kArrayLimit,
  kResources,
  kHostResources,
  kReservation,
  kMpsUser,
  kMpsFaultVictim,
  kRequeued,
  kOutputExceeded,  // an end, added after the waits
  kPreempted,       // requeued or cancelled to make room for a job of a class that preempts it
  // A new reason goes here, kLastReason names it, and both tables (job.cc, the API's; the
  // store's, store/record_codec.cc) give it its word.
};
inline constexpr Reason kLastReason = Reason::kPreempted;
const char* ReasonName(Reason reason);  // the word below; "" for kNone
std::optional<Reason> ReasonFromName(std::string_view name);

namespace reason {
inline constexpr char kExitedZero[] = "exit-0";
inline constexpr char kExitedNonZero[] = "exit-nonzero";
inline constexpr char kSignaled[] = "signaled";
inline constexpr char kCancelled[] = "cancelled";
inline constexpr char kLaunchFailed[] = "launch-failed";
inline constexpr char kLost[] = "lost";  // vanished while pinpointd was down, no exit status
inline constexpr char kGpuFault[] = "gpu-fault";  // caused a fatal MPS fault (or policy: fail)
inline constexpr char kMpsFaultVictim[] = "mps-fault-victim";  // requeued after a neighbour's fault
inline constexpr char kGpuMemExceeded[] =
    "gpu-mem-exceeded";                  // stopped: device memory over its budget
inline constexpr char kHeld[] = "held";  // pending: held by its owner or by root (JobRecord::hold)
inline constexpr char kLeaseClosed[] = "lease-closed";  // a lease closed by its owner or hook
inline constexpr char kLeaseEmptied[] =
    "lease-emptied";  // its container's cgroup emptied or vanished
inline constexpr char kLeaseNotAttached[] = "lease-not-attached";  // no container attached in time
inline constexpr char kLeaseNotPlaced[] = "lease-not-placed";      // open_lease found no room
inline constexpr char kTimeLimit[] = "time-limit";  // stopped: ran past JobRequest::time_limit_s
// Stopped: its user's MPS control daemon on its device stopped answering and was killed.
inline constexpr char kMpsUnresponsive[] = "mps-unresponsive";
inline constexpr char kDependency[] = "dependency";  // pending: a job it depends on has not ended
// Cancelled while pending: a job in its `afterok` ended without completing, so it never starts.
inline constexpr char kDependencyNeverSatisfied[] = "dependency-never-satisfied";
inline constexpr char kUserLimit[] = "user-limit";  // pending: its user is at a user_limits cap
inline constexpr char kArrayLimit[] =
    "array-limit";  // pending: its array runs its %K tasks already
// Pending: not enough free devices (memory, share, clients) right now; not enough host CPUs or
// memory; what it needs is held back for an earlier job (sched/placement.h).
inline constexpr char kResources[] = "resources";
inline constexpr char kHostResources[] = "host-resources";
inline constexpr char kReservation[] = "reservation";
// Pending: the devices that could take it serve another user's MPS clients, or their MPS control
// daemon is starting or quitting.
inline constexpr char kMpsUser[] = "mps-user";
inline constexpr char kRequeued[] = "requeued";  // never launched before the daemon stopped
// Stopped: its output in its job directory passed max_output_bytes, its user's running jobs'
// output passed max_user_output_bytes, or it held the most when the state disk ran short of the
// store's reserve (state_reserve_bytes); its output was cut (docs/security.md).
inline constexpr char kOutputExceeded[] = "output-exceeded";
// Requeued (or cancelled, by its class's preempt mode) to make room for a job of a class that may
// preempt its class (docs/scheduling.md "Preemption"); the detail names that job.
inline constexpr char kPreempted[] = "preempted";
}  // namespace reason

// One device a running job holds: the allocatable device's index and UUID, and the slice.
struct Allocation {
  int device_index = -1;
  std::string uuid;            // GPU-... or MIG-...; what CUDA_VISIBLE_DEVICES names
  uint64_t gpu_mem_bytes = 0;  // 0 = the whole device
  int gpu_share_pct = 0;
  // How it holds the device (alone: kExclusive), decided by the device's backend at placement.
  SharingMode mode = SharingMode::kExclusive;
  bool operator==(const Allocation&) const = default;
};

// What a job used, as the watcher measured it (docs/accounting.md). Device memory is the sum
// over all of the job's processes on one GPU, CUDA contexts included; the peak is the highest
// such sum on any of its GPUs. Energy is the job's part of its GPUs' energy counters.
struct JobUsage {
  int64_t samples = 0;             // watcher polls that saw the job running; 0 = no data
  uint64_t gpu_mem_now_bytes = 0;  // at the last poll (0 once the job has ended)
  uint64_t gpu_mem_peak_bytes = 0;
  uint64_t energy_mj = 0;  // millijoules
  int util_pct_mean = -1;  // GPU utilisation while the job held whole GPUs; -1 unknown
  bool final = false;      // the job has ended and its last interval is accounted
  bool operator==(const JobUsage&) const = default;
};

// JSON forms of a job's parts, documented in docs/api.md (the API codec, api_codec.h, builds on
// them). FromJson errors: kInvalidArgument naming the field.
nlohmann::json ToJson(const JobRequest& r);
Result<JobRequest> RequestFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const Allocation& a);
Result<Allocation> AllocationFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const JobUsage& u);
Result<JobUsage> UsageFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const ArrayTask& a);
Result<ArrayTask> ArrayTaskFromJson(const nlohmann::json& j);

}  // namespace pinpoint
