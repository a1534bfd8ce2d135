// The driver's checkpoint API (issue 56 item 4; docs/scheduling.md "Suspend"): it moves a CUDA
// process's device memory to host memory and lets go of its GPU, and restores it later. libcuda
// exports it from driver 570 (cuCheckpointProcess{Lock,Checkpoint,Restore,Unlock,GetState}); it is
// loaded at run time, so a node without it suspends nothing and says why. Each call names the
// target by pid and may take seconds (40 GiB: 22.9 s to checkpoint, 8.3 s to restore on an H100),
// so pinpointd never makes them: it runs pinpoint-checkpoint (checkpoint_main.cc) with a deadline.
// An MPS client cannot be checkpointed (lock answers 801, CUDA_ERROR_NOT_SUPPORTED).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::gpu {

// CUprocessState, and kUnknown for a value the driver adds later.
enum class CudaProcessState { kRunning, kLocked, kCheckpointed, kFailed, kUnknown };
std::string_view CudaProcessStateName(CudaProcessState state);

// The five calls, on processes named by pid. Each error names the call, the pid and the driver's
// code: kFailedPrecondition for a process the call refuses (not a CUDA process, in the wrong
// state, an MPS client: 801), kUnavailable otherwise (a lock that timed out: 909).
class CheckpointDriver {
 public:
  virtual ~CheckpointDriver() = default;
  // Blocks the process's further CUDA calls once its work in flight is done; `timeout_ms` 0
  // waits as long as it takes. A lock that times out leaves it running.
  virtual Status Lock(int pid, uint32_t timeout_ms) = 0;
  // A locked process's device memory to host memory; its GPU is let go.
  virtual Status Checkpoint(int pid) = 0;
  // A checkpointed process's device memory back onto the same GPUs (locked again).
  virtual Status Restore(int pid) = 0;
  virtual Status Unlock(int pid) = 0;
  virtual Result<CudaProcessState> State(int pid) = 0;
};

// libcuda (`path`: "libcuda.so.1" by the loader's search) with cuInit(0) done and the five entry
// points found. kUnavailable naming what is missing: the library (no driver), cuInit (no GPU), or
// an entry point (a driver before 570).
Result<std::unique_ptr<CheckpointDriver>> LoadCheckpointDriver(
    const std::string& path = "libcuda.so.1");

// What happened to one process: the state it was left in and how long each call took (ms; -1:
// not made).
struct ProcessStep {
  int pid = 0;
  CudaProcessState state = CudaProcessState::kUnknown;
  int64_t lock_ms = -1, checkpoint_ms = -1, restore_ms = -1, unlock_ms = -1;
  std::string error;  // the call that failed for this process, and why
};
struct CheckpointReport {
  bool ok = false;
  std::vector<ProcessStep> steps;  // one per pid, in the order given
  std::string error;               // the first failure, for one line
};

// Suspends every process of `pids` or none (a job is never half-suspended): each is locked, then
// each checkpointed. At the first failure the ones checkpointed are restored and every one locked
// is unlocked, last first, and the report says which process and call failed. `now_ms` is the
// clock the steps are timed with.
CheckpointReport SuspendAll(CheckpointDriver& driver, const std::vector<int>& pids,
                            uint32_t lock_timeout_ms, const std::function<int64_t()>& now_ms);
// Of `pids`, those the driver answers for (GetState): the CUDA processes; a process without CUDA,
// or gone, is left out.
std::vector<int> CudaProcesses(CheckpointDriver& driver, const std::vector<int>& pids);
// Puts every process of `pids` back to running from whatever state it is in: a checkpointed one
// restored then unlocked, a locked one unlocked, a running one left as it is (so that a suspend
// cut short, by a deadline or a restart, is undone by the same call). A process that fails is
// reported and the others go on (a restore has no undo); ok only when all of them run again.
CheckpointReport ResumeAll(CheckpointDriver& driver, const std::vector<int>& pids,
                           const std::function<int64_t()>& now_ms);
// The report as one line of JSON: {"ok":..,"error":..,"processes":[{"pid":..,"state":..,
// "lock_ms":..,"checkpoint_ms":..,"restore_ms":..,"unlock_ms":..,"error":..}]}.
std::string ReportJson(const CheckpointReport& report);

}  // namespace pinpoint::gpu
