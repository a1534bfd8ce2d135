// The bounds on a job's output in its job directory (docs/security.md, items 10 and "A user's
// output on the state disk"): what the job's supervisor checks once every
// LaunchSpec::output_check_ms while the job runs, and how a job's output is cut once it was ended
// for it (by its supervisor, or by pinpointd: output_space.h). `out_fd` and `err_fd` are the job
// directory's stdout and stderr, opened without following links in a directory only pinpointd's
// user can write (fstat and ftruncate on them: nothing the job can swap, no path walked).
//
// Output is measured by what it occupies on disk, its allocated blocks (st_blocks * 512), not by
// its size: blocks preallocated past its end (fallocate --keep-size) count, holes do not.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "launch/launcher.h"

namespace pinpoint::launch {

// The bytes a file occupies on its filesystem: its allocated blocks, never its size.
inline uint64_t OccupiedBytes(const struct stat& st) {
  return st.st_blocks > 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
}

// What stdout and stderr occupy together; 0 when either cannot be looked at.
uint64_t OutputOccupiedBytes(int out_fd, int err_fd);

// What a look at the job's output found: why the job is to be ended ("" while it may go on), and
// whether its output is to be cut to spec.max_output_bytes.
struct OutputVerdict {
  std::string why;
  bool cut = false;
};

// What the output occupies against spec.max_output_bytes (past it: ended and cut). A look that
// fails finds nothing. Free space on the filesystem is pinpointd's to judge (it sees every job:
// daemon/node/output_guard.h), never one job's supervisor's.
OutputVerdict WatchOutput(const LaunchSpec& spec, int out_fd, int err_fd);

// Cuts stdout and stderr to `keep_bytes` of content together (stdout first), the blocks past
// what is kept freed (preallocated ones included), and ends stderr with `note`, which is written
// within `keep_bytes` when it fits. The owner cannot remove the files (the job directory is
// pinpointd's), so this is how their space comes back. Errors: kIo naming the failed call.
Status CutOutputTo(int out_fd, int err_fd, uint64_t keep_bytes, const std::string& note);

// The supervisor's cut of a job it ended for spec.max_output_bytes: CutOutputTo that bound, with
// the line `pinpoint: output cut at 4GiB (max_output_bytes): the job was ended`.
void CutOutput(const LaunchSpec& spec, int out_fd, int err_fd);

// Frees the blocks allocated past the end of stdout and stderr (fallocate --keep-size), which
// hold no output: done when a job has ended, so that what it leaves takes what it shows.
void TrimOutput(int out_fd, int err_fd);

}  // namespace pinpoint::launch
