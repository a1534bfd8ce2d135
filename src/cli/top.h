// `pinpoint top`: a live view of the node's GPUs and the jobs on them, refreshed in place.
// The frame is pure text built from a "gpus" reply (FormatTop); RunTop is the loop around it.
#pragma once

#include <ostream>
#include <string>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

// One frame: a line per physical GPU (memory, utilisation, power) and a line per job on each
// device (device memory used against its slice, share, energy so far). Strings from the reply
// are escaped (format.h). With `cols` and `rows` (a terminal's window; 0: no bound) it fits them:
// narrower bars and no bar per job below 92 columns, every line cut at the edge; past `rows`
// lines, job rows are left out (each from the device showing the most, so every device keeps its
// share) and a last line says how many were hidden; such a frame ends without a newline (a
// newline after the window's last line would scroll its first away).
std::string FormatTop(const GpusReply& reply, int64_t now_ms, int cols = 0, int rows = 0);

// "[#####.....]" for used/total in `width` cells.
std::string Bar(double used, double total, int width);

struct TopArgs {
  double interval_s = 1.0;
  int count = 0;  // frames; 0: until interrupted
};

// Frames from the daemon at `socket`, one each interval, `a.count` of them (0: until
// interrupted), redrawn in place on a terminal; with json_output one "gpus" reply a line.
// `q` read from `keys` quits after the frame shown (0 returned); keys is stdin by default, read a
// key at a time without echo while it is a terminal (put back as it was on every way out, SIGINT
// and SIGTERM included: then 130 or 143 is returned), and -1 reads none. Errors: the client's.
Result<int> RunTop(const std::string& socket, bool json_output, const TopArgs& a, std::ostream& out,
                   int keys = 0);

}  // namespace pinpoint::cli
