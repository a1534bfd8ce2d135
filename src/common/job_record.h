// The daemon's own record of a job (what pinpointd keeps in memory and the store keeps,
// store/record_codec.h): the public job forms of pinpoint/job.h and the bookkeeping clients never
// see. Replies carry JobView (pinpoint/api.h), which the daemon builds from it
// (daemon/service/job_view.h). Not part of the client library's headers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/job.h"

namespace pinpoint {

// A job array's task as the daemon keeps it: the public ArrayTask and, on an array's rest only,
// `indices`, every index of the array (ParseArraySpec's syntax), which maps a task's id to its
// index and never leaves the daemon.
struct ArrayRecord : ArrayTask {
  std::string indices = {};
  bool operator==(const ArrayRecord&) const = default;
};

// How strong a limit that a job's hold applies is (docs/enforcement.md): enforced by the hardware
// (a MIG instance's or a whole device's own memory), by the driver from what the job's processes
// run with (an MPS client's pinned memory limit, CUDA_VISIBLE_DEVICES: a process can change what
// it runs with), by pinpointd's watcher (it stops the job above its budget), or not at all.
enum class LimitStrength { kNone, kHardware, kDriver, kWatcher };

// One resource's limit as a job's hold applies it, said by the backend of the hold's sharing mode
// (sharing::Backend::Applies) and by the node for its devices, kept from the job's start. The
// proof (daemon/jobs/enforcement.h) compares `expected` with what the job's processes were read
// running with, and knows no mode.
struct AppliedLimit {
  std::string resource = {};  // "devices" | "gpu_mem" | "gpu_share" | "gpu_priority"
  // The environment variable whose value a process runs with applies the limit, read back from
  // /proc/<pid>/environ; "" when none does (the limit is the hardware's or the watcher's).
  std::string variable = {};
  // With a variable: its value as pinpoint gives it ("" : the variable is not set). Without: the
  // limit in words ("80 GiB").
  std::string expected = {};
  LimitStrength strength = LimitStrength::kNone;
  std::string what = {};          // for people: what applies it ("MPS pinned device memory limit")
  std::string unobservable = {};  // why its use cannot be observed; "" when it can
  // With a variable: the value the job's environment was given at its start ("" : not set).
  std::string given = {};
  bool operator==(const AppliedLimit&) const = default;
};

// What pinpointd read back from the system about a job it started: the facts of its enforcement
// list (docs/enforcement.md), never copied from the request. "" and -1: not read.
struct Readback {
  // The job's cgroup, read right after pinpointd made it: cpuset.cpus.effective (where the job
  // has CPUs of its own), cpu.max, memory.max as the kernel shows them.
  std::string cpuset = {};
  std::string cpu_max = {};
  std::string memory_max = {};
  std::string host_unread = {};  // why its host limits could not be read back
  // What its hold applies, resource by resource, as said at its start (AppliedLimit).
  std::vector<AppliedLimit> limits = {};
  // What its processes ran with, of the variables `limits` name (/proc/<pid>/environ, bounded):
  // the first process read (its first process, or its first on a GPU), and each distinct value any
  // of its processes on a GPU ran with, over the job's life ("" for a process without it; at most
  // kMaxValuesSeen a variable), with how many of those were read.
  bool env_read = false;
  std::map<std::string, std::string> env = {};
  int gpu_env_reads = 0;
  std::map<std::string, std::vector<std::string>> gpu_env = {};
  std::vector<int> gpus_seen = {};  // the physical GPUs NVML saw its processes on, ascending
  // The job's cgroup as the job ended: its CPU time and its memory's high-water mark.
  int64_t cpu_usec = -1;
  int64_t mem_peak_bytes = -1;
  static constexpr size_t kMaxValuesSeen = 4;
  bool operator==(const Readback&) const = default;
};

// Where a job's suspend stands (docs/scheduling.md "Suspend"): kSuspending while
// pinpoint-checkpoint moves its device memory to host memory (its GPUs still held), kSuspended once
// it has and its processes are stopped (its GPUs free for others), kResuming while it is put back
// on the same GPUs (held again).
enum class SuspendPhase { kNone, kSuspending, kSuspended, kResuming };
// "none", "suspending", "suspended", "resuming".
inline const char* SuspendPhaseName(SuspendPhase phase) {
  switch (phase) {
    case SuspendPhase::kSuspending:
      return "suspending";
    case SuspendPhase::kSuspended:
      return "suspended";
    case SuspendPhase::kResuming:
      return "resuming";
    case SuspendPhase::kNone:
      break;
  }
  return "none";
}

struct SuspendRecord {
  SuspendPhase phase = SuspendPhase::kNone;
  int64_t since_ms = 0;  // when the suspend was asked
  std::string by = {};   // who asked: "root", or "job N" (a preemption)
  // Resumes once its GPUs have room (root's resume, or at once for a preemption's suspend).
  bool resume = false;
  // Its processes (pid and /proc start time): while suspending, those asked to be checkpointed;
  // once suspended, those that were (what a resume restores).
  std::vector<int64_t> pids = {};
  std::vector<uint64_t> pid_starts = {};
  // The device memory its processes held, now in host memory: admission counts it.
  uint64_t host_bytes = 0;
  bool operator==(const SuspendRecord&) const = default;
};

// The daemon's record of a job, bookkeeping included: what it keeps in memory and the store keeps
// (store/record_codec.h). Replies carry JobView (api.h), which the daemon builds from it.
struct JobRecord {
  JobId id = 0;
  JobKind kind = JobKind::kJob;
  JobRequest request;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
  JobState state = JobState::kPending;
  Reason reason = Reason::kNone;  // final reason, or the pending reason
  std::string detail;            // one line of detail for people (e.g. "exec failed: No such file")
  int64_t submit_ms = 0;         // Unix epoch milliseconds
  int64_t start_ms = 0;          // 0 = not started
  int64_t end_ms = 0;            // 0 = not ended
  std::optional<int> exit_code;  // set when the program exited
  std::optional<int> term_signal;  // set when it was killed by a signal
  std::vector<Allocation> allocations;
  int64_t pid = 0;               // the job's supervisor (shim) pid; the job itself is in its own
                                 // process group, recorded in the job directory's job.pid
  uint64_t pid_start_ticks = 0;  // /proc start time of pid, to tell a reused pid apart
  bool cancel_requested = false;
  std::string cancelled_by;
  // Ended by an MPS fault on its device once already: its next run is alone on a device, so a
  // second fault identifies it as the cause.
  bool fault_suspect = false;
  // Set when pinpoint itself stops the job (e.g. Reason::kGpuMemExceeded): the final reason it
  // gets unless it completes first, and one line saying why. kNone: not stopped by pinpoint.
  Reason stop_reason = Reason::kNone;
  std::string stop_detail;
  JobUsage usage;
  Hold hold = Hold::kNone;  // a pending job that is held is never started (sched::Demand::hold)
  // A lease's container cgroup once attached, "<hierarchy>:<path>" as /proc/<pid>/cgroup names
  // it ("0::/machine/libpod-1.scope", "pids:/libpod_parent/libpod-1"); empty before.
  std::string lease_cgroup;
  ArrayRecord array;  // the job's array and index when it is an array's task
  // The host CPUs it runs on (ascending ids; docs/scheduling.md "Host CPUs and memory"), chosen
  // when it starts; empty: it shares the host's CPUs under a cpu.max quota.
  std::vector<int> cpuset;
  Readback readback;      // what its enforcement list shows (docs/enforcement.md)
  SuspendRecord suspend;  // a running job's suspend (pinpoint suspend, or a preemption's)
  // The time its suspends took, each from when it was asked to when the job was resumed: its time
  // limit does not count it (lifecycle::TimeLimitDeadlineMs), as Slurm's does not.
  int64_t suspended_ms = 0;
  // Every field equal: what a store round trip must give back.
  bool operator==(const JobRecord&) const = default;
};

}  // namespace pinpoint
