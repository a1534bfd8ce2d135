// The daemon's life: open the state directory, recover jobs, serve the socket, step the node.
#pragma once

#include <memory>

#include "daemon/config.h"
#include "gpu/gpu_backend.h"

namespace pinpoint::daemon {

// Runs until SIGTERM or SIGINT. Returns the process exit code: 0 after a clean stop, 1 when it
// cannot start (the reason logged as one line). Stopping pinpointd never stops running jobs:
// they are re-adopted by the next start.
// `backend_note` is the one line saying which GPU backend was chosen and why. When ready_fd >= 0,
// "ready\n" is written to it (and it is closed) once the socket accepts requests.
int RunDaemon(const Config& config, std::unique_ptr<gpu::GpuBackend> backend,
              const std::string& backend_note, int ready_fd = -1);

}  // namespace pinpoint::daemon
