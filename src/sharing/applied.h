// What a hold applies that no mode's own machinery does: the limits a backend without variables
// of its own names (sharing::Backend::Applies). Each returns one AppliedLimit
// (common/job_record.h).
#pragma once

#include "common/job_record.h"

namespace pinpoint::sharing {

struct Slice;

// gpu_mem held by the device itself: a whole GPU's memory, or a MIG instance's (hardware).
AppliedLimit DeviceMemory(const Slice& slice);
// gpu_mem held by pinpointd's watcher alone: it stops the job above slice.gpu_mem_bytes.
AppliedLimit WatcherMemory(const Slice& slice);
// gpu_share held by the device itself: every SM of a whole GPU, or of a MIG instance (hardware).
AppliedLimit DeviceSms(const Slice& slice);
// gpu_share not applied: the device's SMs are shared in time with whoever else runs there.
AppliedLimit NoSmCap();

}  // namespace pinpoint::sharing
