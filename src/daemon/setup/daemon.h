// The daemon's life: open the state directory, recover jobs, serve the socket, step the node.
#pragma once

#include <signal.h>

#include <memory>
#include <string>

#include "daemon/setup/config.h"
#include "gpu/gpu_backend.h"

namespace pinpoint::daemon {

// <state_dir>/private: pinpointd's own directory (0700), which no user can enter. It holds what no
// user may open, such as pinpointd.lock, whose flock says that a daemon runs on this state
// directory.
inline constexpr char kPrivateDirName[] = "private";

// <state_dir>/private/pinpointd.lock. A running pinpointd holds a flock on it (no second daemon
// starts) and an OFD lock (its jobs' supervisors ask whether a daemon runs: launch::LaunchSpec).
inline std::string DaemonLockPath(const std::string& state_dir) {
  return state_dir + "/" + kPrivateDirName + "/pinpointd.lock";
}

// The signals the main loop takes through its signalfd: SIGCHLD, SIGTERM, SIGINT, SIGHUP.
sigset_t DaemonSignals();

// Blocks DaemonSignals() in the calling thread and ignores SIGPIPE. Call it first in main, before
// any thread exists: threads inherit the mask, and a thread that leaves these signals unblocked
// (NVML starts its own in nvmlInit) would take a job's SIGCHLD, which the main loop then never
// sees, or die of SIGTERM instead of stopping cleanly. RunDaemon calls it too, for callers that
// start no thread before it.
void BlockDaemonSignals();

// Runs until SIGTERM or SIGINT. Returns the process exit code: 0 after a clean stop, 1 when it
// cannot start (the reason logged as one line). Stopping pinpointd never stops running jobs:
// they are re-adopted by the next start.
// `backend_note` is the one line saying which GPU backend was chosen and why. When ready_fd >= 0,
// "ready\n" is written to it (and it is closed) once the socket accepts requests.
int RunDaemon(const Config& config, std::unique_ptr<gpu::GpuBackend> backend,
              const std::string& backend_note, int ready_fd = -1);

}  // namespace pinpoint::daemon
