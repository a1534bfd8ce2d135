// What a site sets for a node (from the config, daemon/setup/config.h): the options Node, Admission
// and the node's other parts read. Plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/cpu_list.h"
#include "common/env_select.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/output_bound.h"
#include "daemon/jobs/priority.h"
#include "daemon/node/slurm_env.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/job.h"
#include "pinpoint/service_class.h"
#include "sched/inventory.h"
#include "sched/user_limits.h"

namespace pinpoint::daemon {

// Defaults of NodeOptions::Admission::max_jobs and max_jobs_per_user (config max_jobs,
// max_jobs_per_user).
inline constexpr size_t kDefaultMaxJobs = 100000;
inline constexpr size_t kDefaultMaxJobsPerUser = 20000;
// Defaults of NodeOptions::Admission::max_request_bytes and max_user_request_bytes.
inline constexpr uint64_t kDefaultMaxRequestBytes = 256 << 10;
inline constexpr uint64_t kDefaultMaxUserRequestBytes = uint64_t{1} << 30;
// The records one pass starts, and those it ends, take at most about this many bytes each
// (RecordBytes, the environment included: a start writes it to the job's spec.json; at least one
// job either way): 64 tasks of a 250 KB environment start over 32 passes, between which the
// loop answers requests, instead of in one pass of seconds; 250 jobs of a small request start in
// one. The share left over is the next pass's, which follows at once (Node::MoreDue).
inline constexpr uint64_t kPassRecordBytes = uint64_t{512} << 10;
// How long an opened lease waits, pending, for the MPS control daemon of its device to start
// (Node::OpenLease) before it is given up.
inline constexpr int64_t kLeaseStartTimeoutMs = 30000;

// Grouped by who reads each part; Node hands each part the groups it needs.
struct NodeOptions {
  // The devices at start: Node takes them as its own live state (Node::devices), leaving this
  // empty; what changes them after is Node's, never a part's copy of the options.
  sched::Inventory inventory;

  // What the node is and where its files are. Read by the views (node and gpus replies), the
  // occupants (job directories, device nodes, Slurm variables) and Admission (root's uid).
  struct Identity {
    std::string state_dir;     // absolute; job directories go to <state_dir>/jobs/<id>
    std::string backend_kind;  // "nvml" | "simulated:<preset>": for people
    bool simulated = false;    // the GPUs are a simulation (gpu::GpuBackend::source())
    // On a simulated node: its name, set in its jobs' environments as PINPOINT_SIMULATED_NODE
    // (gpu/declared_usage.h); "" elsewhere.
    std::string simulated_node;
    std::string driver_version;
    uint32_t daemon_uid = 0;  // jobs of other users need a root daemon
    // Where GPU device nodes are (a simulated node's stand-ins are elsewhere), for leases
    // (docs/containers.md).
    std::string device_dir = "/dev";
    // What a job's Slurm variables name: the node, and where pinpoint's srun is (slurm_env.h).
    SlurmFacts slurm;
  } identity;

  // What a request may ask and how much one user may make the node hold. Read by Admission
  // (admission.h) and Node's ways in (submit, update, hold, leases).
  struct Admission {
    bool mig_requests = true;  // config mig_requests: users may name a MIG profile (submit --mig)
    PriorityPolicy priority;   // who may ask for which priority
    // Environment variable names never stored (shell globs, any case): config "env_deny".
    std::vector<std::string> env_deny = DefaultEnvDeny();
    // Time limits (config default_time_limit, max_time_limit), seconds; 0: none. A job submitted
    // without a limit gets the default, or without a default the max; one above the max is
    // refused.
    int64_t default_time_limit_s = 0;
    int64_t max_time_limit_s = 0;
    // Job arrays (docs/api.md "submit"): at most this many tasks in one (config max_array_tasks).
    int max_array_tasks = kMaxArrayTasks;
    // Jobs not yet ended (pending, held or running; leases included) the node holds at most, in
    // all (config max_jobs) and per user (max_jobs_per_user; root's submissions are not counted
    // against it); 0: no limit. A submit past either is refused (kUnavailable): it bounds what one
    // user can make the daemon hold in memory and on disk.
    size_t max_jobs = kDefaultMaxJobs;
    size_t max_jobs_per_user = kDefaultMaxJobsPerUser;
    // Budgets in bytes (config max_request_bytes, max_user_request_bytes; 0: none): what one
    // request's text may take (RequestBytes: a larger one is refused), and what the requests of
    // one non-root user's jobs not yet ended may take together (CheckRequestBytes).
    uint64_t max_request_bytes = kDefaultMaxRequestBytes;
    uint64_t max_user_request_bytes = kDefaultMaxUserRequestBytes;
    // Service classes (config qos, default_qos; docs/scheduling.md "Service classes"): a job that
    // names none is stored in default_qos, which is one of qos. Read by Admission, the pass's
    // priorities and the holds' MPS client priority (SliceOf).
    std::vector<ServiceClass> qos = DefaultServiceClasses();
    std::string default_qos = kDefaultQos;
    // Refuse a Slurm GPU type (JobRequest::gpu_type) the node has no GPU of (config gpu_types
    // "match"); false ("any"): any GPU of the node takes it.
    bool gpu_types_match = false;
  } admission;

  // What a scheduling pass weighs and how much of it one pass does. Read by Node's pass and the
  // JobRunner's ends.
  struct Pass {
    // Per-user caps (config user_limits): the default, and complete entries by user name, matched
    // to uids through the user directory at each scheduling pass (a name no user has is ignored).
    sched::UserLimit default_user_limit;
    std::map<std::string, sched::UserLimit> user_limits;
    uint64_t pass_record_bytes = kPassRecordBytes;  // see kPassRecordBytes (tests set it lower)
    // The fair share's reclaim (config mps_reclaim_s; docs/scheduling.md "Several users and
    // MPS"): how long a slice of a user below their share waits for an MPS GPU before the
    // youngest jobs of a GPU of a user above theirs are preempted for it. 0: never.
    int64_t mps_reclaim_ms = 600'000;
  } pass;

  // How a job or lease runs and stops. Read by the JobRunner, the occupants (launch::LaunchSpec)
  // and the OutputGuard.
  struct Launch {
    int64_t cancel_grace_ms = 10000;
    // The lock pinpointd holds on the state directory (DaemonLockPath) and config
    // daemon_away_limit_s in ms, for each job's supervisor (launch::LaunchSpec); "" or 0:
    // unwatched.
    std::string daemon_lock;
    int64_t daemon_away_ms = 0;
    // How long an opened lease waits for its container to be attached (docs/containers.md).
    int64_t lease_attach_timeout_ms = 60000;
    // The host CPUs a starting job may get for its own (config cpu_binding "cpuset";
    // docs/scheduling.md "Host CPUs and memory"); no CPU: every job shares them under its cpu.max
    // quota.
    CpuTopology cpu_topology;
    // The CPUs a job without CPUs of its own runs on (config system_cpus: every online CPU but
    // those); empty: every CPU of the node.
    std::vector<int> shared_cpus;
    // Jobs' output on the state directory's disk (config max_output_bytes, max_user_output_bytes,
    // state_reserve_bytes; 0: none): the shim ends a job past the first
    // (launch::LaunchSpec::max_output_bytes), pinpointd ends jobs by all three
    // (daemon/jobs/output_bound.h), looking once every output_check_ms (OutputGuard).
    OutputLimits output;
    int64_t output_check_ms = 1000;
  } launch;

  // What the watcher's feedback and faults do. Read by Node's watch and fault handling.
  struct Watch {
    // What becomes of the jobs an MPS fault ended (lifecycle::DecideEnd).
    MpsFaultPolicy mps_fault_policy = MpsFaultPolicy::kRequeue;
    int mps_fault_drain_after = 3;   // faults of one device within an hour that drain it
    int64_t usage_flush_ms = 15000;  // how often running jobs' usage is written to the store
  } watch;
};

}  // namespace pinpoint::daemon
