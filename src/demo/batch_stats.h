// What the demo says about a batch that ran: from the jobs' allocations and their start and end
// times (ms). Pure.
#pragma once

#include <map>
#include <vector>

#include "pinpoint/api.h"

namespace pinpoint::demo {

// The most jobs running at once on each device.
std::map<int, int> PeakPerDevice(const std::vector<JobView>& jobs);

// Seconds during which each device had at least one job, summed over devices: the GPU time
// the batch kept busy, the same measure whether jobs share a device (their times overlap and
// count once) or each holds whole devices. Jobs that never started (start_ms 0) or have not
// ended (end_ms < start_ms) count nothing.
double BusyGpuSeconds(const std::vector<JobView>& jobs);

}  // namespace pinpoint::demo
