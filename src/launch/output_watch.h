// The bounds on a job's output in its job directory (docs/security.md, item 10): what the job's
// supervisor checks once every LaunchSpec::output_check_ms while the job runs, and how it cuts the
// output of a job it ended for it. Called by pinpoint-shim only; `out_fd` and `err_fd` are the
// job directory's stdout and stderr, which the shim holds open (fstat and ftruncate on them:
// nothing the job can swap, no path walked).
#pragma once

#include <cstdint>
#include <string>

#include "launch/launcher.h"

namespace pinpoint::launch {

// What a look at the job's output found: why the job is to be ended ("" while it may go on), and
// whether its output is to be cut to spec.max_output_bytes.
struct OutputVerdict {
  std::string why;
  bool cut = false;
};

// The output's size against spec.max_output_bytes (past it: cut); and, when it has grown since
// *last_bytes (updated), the free space of its filesystem against spec.reserve_bytes (at most a
// tenth of the filesystem; under it: ended, not cut). A look that fails finds nothing.
OutputVerdict WatchOutput(const LaunchSpec& spec, int out_fd, int err_fd, uint64_t* last_bytes);

// Cuts stdout and stderr to spec.max_output_bytes together (stdout first) and ends stderr with a
// line that says so: the owner cannot remove the files (the job directory is pinpointd's).
void CutOutput(const LaunchSpec& spec, int out_fd, int err_fd);

}  // namespace pinpoint::launch
