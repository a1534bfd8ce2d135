// A job's enforcement list (docs/enforcement.md): for each resource, what the job asked for, what
// the system applied (JobRecord::readback, read back from the kernel and the job's environment,
// never copied from the request), what was observed while it ran, and the verdict. Pure: the
// list is derived from the record each time it is shown, so it never drifts from its facts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/job_record.h"
#include "pinpoint/api.h"
#include "pinpoint/job.h"

namespace pinpoint::daemon {

// The list for a job pinpointd started (devices, gpu_mem and gpu_share only for a job with
// GPUs); empty for a lease and for a job that never started.
std::vector<Enforcement> EnforcementOf(const JobRecord& job);

// How many entries say "disagrees": what pinpoint applied is not what the job asked for (the
// node's alarm: pinpoint's own failures).
size_t Disagreements(const std::vector<Enforcement>& list);
// How many entries say "overridden": a process of the job ran with other limits than it was given
// (the job's own doing, counted apart from pinpoint's failures).
size_t Overrides(const std::vector<Enforcement>& list);

// The longest a read-back value is kept (a variable a job set for itself can be long).
inline constexpr size_t kMaxReadbackBytes = 256;

// `text` cut to kMaxReadbackBytes.
std::string Bounded(std::string text);

}  // namespace pinpoint::daemon
