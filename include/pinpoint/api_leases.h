// The pinpointd socket API, leases (docs/api.md "Leases", docs/containers.md): a slice held for
// processes pinpointd did not start. Part of api.h, which every client includes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/api_jobs.h"

namespace pinpoint {

// ---- Leases: a slice held for processes pinpointd did not start (docs/containers.md) ----
//
// A lease is a job record of kind kLease with no command: placed, limited, accounted, faulted
// and cancelled like a job, shown by queue, show and the metrics. Its life:
//   open_lease   placed at once or refused (it never queues); running, not yet attached
//   attach_lease root (a container runtime's hook) names a process of the container; pinpointd
//                reads that process's cgroup itself, and from then on every process in that
//                cgroup is the lease's: the watcher sums their device memory and stops the
//                whole cgroup when it goes over the slice
//   close_lease  the container ended (poststop hook) or its owner gives the slice back
// A lease also ends by itself when it is not attached within lease_attach_timeout_ms, when its
// attached cgroup empties or disappears, and at its time limit (from its opening; its container's
// processes are stopped as a close stops them, and it ends failed, reason time-limit). `update`
// changes its time limit alone, by a running job's rules. Ids are job ids; people see lease 42
// as "L42".

// A lease's resources: the resource part of a JobRequest. gpus >= 1; gpu_mem_bytes 0 = whole
// GPUs, else a slice of each (JobRequest's rules).
struct LeaseRequest {
  std::string name;  // free text, for people (at most kMaxNameBytes)
  int gpus = 1;
  uint64_t gpu_mem_bytes = 0;
  int gpu_share_pct = 0;
  int priority = 0;
  // Seconds from its opening; 0: the node's default_time_limit (or max_time_limit). Above
  // max_time_limit is refused (failed_precondition), root's too. At most kMaxTimeLimitS.
  int64_t time_limit_s = 0;
  std::string as_user;       // only root may set it: the lease (and its MPS server) is this user's
  std::vector<int> devices;  // empty: pinpoint chooses
  bool operator==(const LeaseRequest&) const = default;
};

// A bind mount the container needs: host_path appears at container_path.
struct LeaseMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
  bool operator==(const LeaseMount&) const = default;
};

// What a container must be given to use its lease (what `pinpoint cdi` writes into a CDI spec).
struct LeaseEdits {
  std::map<std::string, std::string> env;  // CUDA_VISIBLE_DEVICES, PINPOINT_JOB_ID, the MPS
                                           // variables for an MPS slice
  std::vector<std::string> device_nodes;   // host paths, same path inside (/dev/nvidia0, ...)
  std::vector<LeaseMount> mounts;          // the MPS pipe directory for an MPS slice
  bool operator==(const LeaseEdits&) const = default;
};

struct OpenLeaseReply {
  JobView lease;  // kind kLease, state running, with its allocations
  LeaseEdits edits;
};
struct OpenLeaseRequest {
  static constexpr char kOp[] = "open_lease";
  using Reply = OpenLeaseReply;
  LeaseRequest request;
};

struct AttachLeaseReply {
  JobView lease;  // lease_cgroup set
};
// Root only. `pid` is a process of the container (the OCI state's pid); pinpointd reads
// /proc/<pid>/cgroup and keeps the cgroup, never the pid. `container_uid`, when given (the
// bundle's process.user.uid), must be the lease's uid: a container of another user would not
// reach the lease's MPS server.
struct AttachLeaseRequest {
  static constexpr char kOp[] = "attach_lease";
  using Reply = AttachLeaseReply;
  JobId id = 0;
  int64_t pid = 0;
  std::optional<uint32_t> container_uid;
};

struct CloseLeaseReply {
  JobView lease;  // ended, or running with cancel_requested while its processes are stopped
};
// The lease's owner or root. Idempotent: closing an ended lease answers its record.
struct CloseLeaseRequest {
  static constexpr char kOp[] = "close_lease";
  using Reply = CloseLeaseReply;
  JobId id = 0;
};

}  // namespace pinpoint
