// How much of the state directory's disk running jobs' output may take (docs/security.md, "A
// user's output on the state disk"): from what pinpointd last measured of each running job's
// output (its allocated blocks, launch/output_watch.h) and the disk's space, which jobs to end
// and how much of each one's output to keep. Pure, as the scheduler: no I/O, no clock.
//
// The rules, in this order (a job ended by one is not taken again by a later one, and what its
// cut frees counts for the later ones):
//  1. A job: past `job_bytes` (max_output_bytes) it is ended, its output cut to the bound.
//  2. A user other than root: past `user_bytes` (max_user_output_bytes) for their running jobs
//     together, their largest jobs are ended (ties: the later job first), each cut by what the
//     user is still over, until the user is within the bound.
//  3. The store's reserve (ReserveInForce): while less is free, the user whose running jobs hold
//     the most output (those this rule ended included: who took the space), at least
//     ReserveFloor, has their largest job not ended yet ended and its output cut by
//     what is missing plus the reserve once more (so that one cut gives the disk room, and the
//     next line another job prints is not the next shortfall). A user holding less than the
//     floor (a job that printed a line) is never ended by this rule: when running jobs did not
//     fill the disk, none of them pays for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launch/output_space.h"
#include "pinpoint/job.h"

namespace pinpoint::daemon {

// One running job's output, as last measured: what its stdout and stderr in its job directory
// occupy on disk.
struct OutputHolder {
  JobId id = 0;
  uint32_t uid = 0;
  uint64_t bytes = 0;
};

// The settings (config max_output_bytes, max_user_output_bytes, state_reserve_bytes); 0: none.
struct OutputLimits {
  uint64_t job_bytes = 0;
  uint64_t user_bytes = 0;
  uint64_t reserve_bytes = 0;
};

// A running job to end for its output: the setting it passed, why (its record's detail), and how
// much of its output to keep once it has ended (launch::OutputSpace::Cut).
struct OutputEnd {
  JobId id = 0;
  uint64_t keep_bytes = 0;
  std::string setting;  // "max_output_bytes", "max_user_output_bytes" or "state_reserve_bytes"
  std::string detail;
};

// The reserve in force on a filesystem of `total_bytes`: `reserve_bytes`, at most a tenth of it
// (a small filesystem is not "full" from the start).
uint64_t ReserveInForce(uint64_t reserve_bytes, uint64_t total_bytes);
// The least a user's running jobs hold for rule 3 to end one of them: a sixteenth of `reserve`.
inline uint64_t ReserveFloor(uint64_t reserve) { return reserve / 16; }

// The jobs to end by the rules above, in the order found. `holders` are the running jobs, each
// once; `space` is the state directory's filesystem (nullopt: unknown, rule 3 is not applied).
std::vector<OutputEnd> DecideOutputEnds(const std::vector<OutputHolder>& holders,
                                        const OutputLimits& limits,
                                        std::optional<launch::DiskSpace> space);

}  // namespace pinpoint::daemon
