// `pinpoint top`: a live view of the node's GPUs and the jobs on them, refreshed in place.
// The frame is pure text built from a "gpus" reply; the loop around it lives in cli.cc.
#pragma once

#include <string>

#include "pinpoint/api.h"

namespace pinpoint::cli {

// One frame: a line per physical GPU (memory, utilisation, power) and a line per job on each
// device (device memory used against its slice, share, energy so far). Strings from the reply
// are escaped (format.h).
std::string FormatTop(const GpusReply& reply, int64_t now_ms);

// "[#####.....]" for used/total in `width` cells.
std::string Bar(double used, double total, int width);

}  // namespace pinpoint::cli
