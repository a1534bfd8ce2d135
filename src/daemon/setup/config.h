// pinpointd's configuration: a JSON file (docs/admin.md). Every key is optional; the embedded
// defaults make a working single-node setup.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/env_select.h"
#include "daemon/jobs/lifecycle.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/service_class.h"
#include "pinpoint/status.h"
#include "sched/user_limits.h"

namespace pinpoint::daemon {

// The mode of a GPU whose MIG instances pinpoint makes and unmakes as the queue changes (issue 26,
// docs/scheduling.md "Dynamic MIG"): a gpu_modes value only, never a default_mode.
inline constexpr char kMigDynamicMode[] = "mig-dynamic";

// A gpu_modes entry, read: how the GPU is partitioned, apart from how its devices are shared.
struct GpuMode {
  // "mig-dynamic": pinpoint makes and unmakes the GPU's MIG instances (its devices are slots,
  // partition/partition.h), each shared as default_mode.
  bool mig_dynamic = false;
  // Otherwise a sharing mode's name: the GPU's (or the MIG instance's) devices are shared so.
  SharingMode sharing = SharingMode::kMps;

  static GpuMode MigDynamic() { return GpuMode{.mig_dynamic = true}; }
  static GpuMode Shared(SharingMode mode) { return GpuMode{.sharing = mode}; }
  // The config's word for it: "mig-dynamic", or the sharing mode's name.
  std::string Name() const;
  bool operator==(const GpuMode&) const = default;
};

// Where MPS control daemons run (config "mps").
enum class MpsMode {
  kAuto,     // "auto": on NVML nodes where the control binary is found; elsewhere the client
             // environment only
  kDaemons,  // "daemons": required; pinpointd does not start without them
  kEnvOnly,  // "env-only": never; the client environment only
};

struct Config {
  std::string state_dir = "/var/lib/pinpoint";  // store, job directories, MPS directories
  std::string socket_path = "/run/pinpoint/pinpointd.sock";
  std::string backend = "auto";      // auto | nvml | simulated:<preset> | simulated-file:<path>
  std::string default_mode = "mps";  // sharing mode of every device not named in gpu_modes
  // Sharing mode by GPU index ("0"), GPU UUID or MIG UUID; a GPU's entry applies to its MIG
  // instances unless they have their own. A GPU's entry may also be mig-dynamic
  // (inventory_builder.h says what is done with it).
  std::map<std::string, GpuMode> gpu_modes;
  // mig-dynamic (daemon/mig/mig_dynamic.h): an instance is destroyed for a waiting slice only once
  // it has been idle this long and exists this long (no thrashing).
  int64_t mig_min_idle_s = 60;
  // A slice waiting for a MIG instance that needs a reshape drains a placement: after this many
  // seconds of it the placement's busy instances take no new job (docs/scheduling.md).
  int64_t mig_drain_after_s = 60;
  int64_t mig_min_lifetime_s = 300;
  bool mig_requests = true;   // users may name a MIG profile (submit --mig)
  int mps_client_limit = 48;  // per device; NVIDIA's limit on Volta and later
  // Where slices go among the devices they fit: spread | pack | auto (docs/scheduling.md).
  std::string slice_placement = "auto";
  // Under slice_placement auto: empty GPUs slices take last (sched::Inventory::keep_empty_gpus);
  // kKeepEmptyAuto: one GPU in eight of the node's, none on a node of fewer.
  static constexpr int64_t kKeepEmptyAuto = -1;
  int64_t keep_empty_gpus = kKeepEmptyAuto;
  // Under slice_placement auto: for this long after a user's first slice on an MPS GPU starts,
  // their next slices take no other empty GPU (sched::Inventory::mps_affinity_ms). 0: none.
  int64_t mps_affinity_ms = 500;
  // The fair share's reclaim (NodeOptions::Pass::mps_reclaim_ms), in seconds. 0: never.
  int64_t mps_reclaim_s = 600;
  int host_cpus = 0;  // 0: all online CPUs but system_cpus
  // CPUs kept for the system and pinpointd (Slurm's CpuSpecList): no job runs on them, a job
  // that shares CPUs included. Empty: none.
  std::vector<int> system_cpus;
  // How a job gets its CPUs: "cpuset" (CPUs of its own while free ones are left, else a quota) or
  // "quota" (a cpu.max quota on shared CPUs, as before cpusets).
  std::string cpu_binding = "cpuset";
  uint64_t host_mem_bytes = 0;         // 0: MemTotal
  uint64_t gpu_mem_reserve_bytes = 0;  // kept back on every device, not allocatable
  int64_t cancel_grace_ms = 10000;     // SIGTERM, then SIGKILL after this long
  // How long a job runs on while no pinpointd runs on its state directory (nothing enforces its
  // time limit, memory or cancel meanwhile); then its supervisor ends it and the next pinpointd
  // says so. 0: it runs on until it ends.
  int64_t daemon_away_limit_s = 900;
  int64_t poll_interval_ms = 100;  // how often adopted jobs are checked for exit
  bool cgroups = true;             // apply host CPU/memory limits through cgroup v2
  std::string cgroup_root = "/sys/fs/cgroup/pinpoint";
  std::string shim_path;  // empty: pinpoint-shim next to pinpointd
  MpsMode mps = MpsMode::kAuto;
  // With mps: auto on a GPU node where MPS cannot be started: false refuses slices on mps
  // devices (whole GPUs still run); true runs them without enforced limits (docs/mps.md).
  bool allow_unenforced_slices = false;
  std::string mps_control = "nvidia-cuda-mps-control";  // path or name in PATH
  std::string mps_prestart_user;     // start every MPS device's daemon for this user at start
  std::string mps_dir;               // MPS pipe/log directories; empty: <state_dir>/mps. Keep it
                                     // short: MPS socket paths must fit 107 characters
  int64_t mps_idle_quit_ms = 60000;  // quit a device's idle control daemon after this; 0: never
  MpsFaultPolicy mps_fault_policy = MpsFaultPolicy::kRequeue;  // requeue | fail (docs/mps.md)
  int mps_fault_drain_after = 3;  // faults of one device within an hour that drain it
  // Watcher (docs/accounting.md): how often NVML is polled for per-job memory and energy.
  int64_t watch_interval_ms = 1000;
  // A slice is stopped (gpu-mem-exceeded) when its processes use more than its device memory
  // plus this many percent, on every poll for gpu_mem_grace_ms.
  int gpu_mem_tolerance_pct = 5;
  int64_t gpu_mem_grace_ms = 2000;
  int64_t usage_flush_ms = 15000;  // how often running jobs' usage is written to the store
  // A process of an ended job's user, in no job, still on the job's GPUs this many seconds after
  // the job ended is killed (docs/security.md); until then the GPUs stay taken.
  int64_t settle_deadline_s = 60;
  // Ended jobs older than this many days are purged with their directories; 0: kept forever.
  int64_t retention_days = 90;
  // Leases (docs/containers.md): a lease no container was attached to within this ends; the
  // CDI spec directory whose pinpoint.io-slice-L<id>.json files are removed when leases end.
  int64_t lease_attach_timeout_ms = 60000;
  std::string cdi_dir = "/var/run/cdi";
  // Prometheus endpoint (docs/metrics.md): HOST:PORT; empty turns it off.
  std::string metrics_listen = "127.0.0.1:9473";
  // Per-client bounds of the socket server (docs/security.md, api::ServerLimits).
  int max_connections = 1024;        // everyone's together; the last 32 are for root only
  int max_connections_per_uid = 64;  // one non-root user's, deferred waits included
  int64_t idle_timeout_ms = 60000;   // close a connection without progress this long; 0: never
  uint64_t max_reply_backlog_bytes = 4 << 20;  // unread replies before a client's requests wait
  // Priority (docs/scheduling.md): users may ask for at most max_user_priority; root and the
  // users named in priority_users (user names, or "@group" for a group's members) for any.
  int max_user_priority = 0;
  std::vector<std::string> priority_users;
  // Environment variables pinpointd never stores (docs/security.md "Environments"): shell globs
  // matched without regard to case. Default: common/env_select.h DefaultEnvDeny.
  std::vector<std::string> env_deny = DefaultEnvDeny();
  // Time limits (docs/admin.md): the limit of a job submitted without one, and the most a job
  // may ask for, in seconds; 0: none. Written as submit --time takes them ("2h", "1-00:00:00").
  int64_t default_time_limit_s = 0;
  int64_t max_time_limit_s = 0;
  // user_limits (docs/admin.md): "default" and entries by user name. An entry is complete: the
  // fields its user's object leaves out were filled from "default" when the file was read.
  sched::UserLimit default_user_limit;
  std::map<std::string, sched::UserLimit> user_limits;
  // Job arrays (`submit --array`, docs/cli.md): at most this many tasks in one, 1 to 10000.
  int max_array_tasks = kMaxArrayTasks;
  // Jobs not yet ended the node holds at most, in all and per user (0: no limit).
  int64_t max_jobs = 100000;
  int64_t max_jobs_per_user = 20000;
  // What one request's text may take, and one user's jobs not yet ended together (0: no limit).
  uint64_t max_request_bytes = 256 << 10;
  uint64_t max_user_request_bytes = uint64_t{1} << 30;
  // What one user's ended jobs may take in the store; past it their oldest are purged (0: no
  // bound).
  uint64_t max_user_stored_bytes = uint64_t{1} << 30;
  // The most one job's stdout and stderr in its job directory take together; past it the job is
  // ended and its output cut there (docs/security.md). 0: no bound.
  uint64_t max_output_bytes = uint64_t{4} << 30;
  // The most one user's running jobs' output in their job directories takes together; past it
  // their largest jobs are ended and cut (docs/security.md). 0: no bound. Root's are not bounded.
  uint64_t max_user_output_bytes = uint64_t{16} << 30;
  // Free space kept for the job store on the state directory's filesystem (at most a tenth of it):
  // while less is free, the running jobs holding the most output are ended and cut. 0: none.
  uint64_t state_reserve_bytes = uint64_t{64} << 20;
  // Service classes (config qos, docs/admin.md; docs/scheduling.md "Service classes"): a qos
  // table replaces these defaults whole. A job that names none runs in default_qos, one of them.
  std::vector<ServiceClass> qos = DefaultServiceClasses();
  std::string default_qos = kDefaultQos;
  // Slurm's GPU types (--gpus TYPE:N): "any" takes any GPU of the node whatever the type (a script
  // from another cluster runs unchanged); "match" refuses a type the node has no GPU of.
  std::string gpu_types = "any";
};

// Parses a configuration file's text. Unknown keys, wrong types and bad values are errors
// (kInvalidArgument, one line naming the key), so a typo never silently falls back to a default.
Result<Config> ParseConfig(const std::string& json_text);
// Every key a configuration file may have (docs/admin.md); any other is refused.
std::span<const std::string_view> ConfigSettings();
// Reads and parses a file. Errors: kNotFound, kIo, kInvalidArgument.
Result<Config> LoadConfig(const std::string& path);
// The embedded default configuration, as JSON text (pinpointd --print-default-config).
std::string DefaultConfigJson();

}  // namespace pinpoint::daemon
