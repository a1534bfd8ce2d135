// Preemption's choice of victims (issue 56): which running jobs, of those a waiting job may
// preempt, must leave for it to start. Pure: the node asks, and acts on the answer
// (daemon/node/preempt.cc; docs/scheduling.md "Preemption").
#pragma once

#include <vector>

#include "sched/placement.h"

namespace pinpoint::sched {

// The most candidates one choice weighs: each costs up to two placements of the one job.
inline constexpr size_t kMaxPreemptionCandidates = 64;

// The fewest of `candidates` (running jobs of `snapshot`, in the order they should go first:
// lowest class, then youngest) whose leaving lets `demand` start, `demand` alone pending and
// every other rule of Schedule kept (user limits, MPS users, reservations of none). Taken in
// order until it starts, then each one it does not need handed back, the last taken first.
// Empty when it starts without any leaving (it waits for another reason: nothing to preempt), or
// when it cannot start even with all of them gone (the first kMaxPreemptionCandidates).
std::vector<JobId> PickVictims(const Snapshot& snapshot, const Demand& demand,
                               const std::vector<JobId>& candidates);

}  // namespace pinpoint::sched
