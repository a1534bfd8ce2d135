// How pinpointd suspends and resumes a job's CUDA processes (issue 56 item 4; docs/scheduling.md
// "Suspend"): the driver's checkpoint API, called by pinpoint-checkpoint (gpu/checkpoint_main.cc)
// in a process of its own, off the loop and with a deadline (daemon/setup/command_checkpointer.h).
// Tests use a fake (daemon/node/fake_checkpointer.h).
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

class Checkpointer {
 public:
  enum class Action { kSuspend, kResume };
  // A process by its pid and /proc start time (a reused pid is refused before any call).
  struct Target {
    int64_t pid = 0;
    uint64_t start_ticks = 0;
    bool operator==(const Target&) const = default;
  };
  struct Done {
    JobId job = 0;
    Action action = Action::kSuspend;
    bool ok = false;
    // A suspend's: the job's processes now checkpointed (those with CUDA of the ones named).
    std::vector<Target> processes = {};
    std::string error = {};  // why not, in one line
    int64_t took_ms = 0;
    // A run that failed left every process as it was (its report said so); false when it was
    // cut short (its deadline) or said nothing: the processes may be locked or checkpointed.
    bool clean = true;
  };

  virtual ~Checkpointer() = default;
  // Ok when this node can suspend; otherwise why not (kUnavailable: no pinpoint-checkpoint).
  virtual Status Available() const = 0;
  // Starts `action` on a job's processes: a suspend checkpoints those of them with CUDA, all or
  // none; a resume puts each back to running. At most one per job at a time. Errors: kIo when it
  // cannot be started, kFailedPrecondition when one runs for the job already.
  virtual Status Begin(JobId job, Action action, const std::vector<Target>& processes,
                       int64_t now_ms) = 0;
  // Those that ended since the last call; one past its deadline is killed and not ok.
  virtual std::vector<Done> Poll(int64_t now_ms) = 0;
  // Readable when Poll has something to see, for the main loop's poll set.
  virtual std::vector<int> WaitFds() const = 0;
};

}  // namespace pinpoint::daemon
