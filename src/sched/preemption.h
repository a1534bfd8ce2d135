// Preemption's choice of victims (issue 56): which running jobs, of those a waiting job may
// preempt, must leave for it to start. Pure: the node asks, and acts on the answer
// (daemon/node/preempt.cc; docs/scheduling.md "Preemption").
#pragma once

#include <functional>
#include <vector>

#include "sched/placement.h"

namespace pinpoint::sched {

// The most candidates one choice weighs: each costs up to two placements of the one job.
inline constexpr size_t kMaxPreemptionCandidates = 64;

// The fewest of `candidates` (running jobs of `snapshot`, in the order they should go first:
// lowest class, then youngest) whose leaving lets `demand` start, `demand` alone pending and
// every other rule of Schedule kept (user limits, MPS users, reservations of none) but the MPS
// affinity window (a moment's delay, not a lack of room). Taken in
// order until it starts, then each one it does not need handed back, the last taken first.
// Empty when it starts without any leaving (it waits for another reason: nothing to preempt), or
// when it cannot start even with all of them gone (the first kMaxPreemptionCandidates).
std::vector<JobId> PickVictims(const Snapshot& snapshot, const Demand& demand,
                               const std::vector<JobId>& candidates);

// The fair share's reclaim (docs/scheduling.md "Several users and MPS"): for `demand`, a waiting
// one-device slice of a user who holds fewer MPS GPUs than their share (the GPUs that serve one
// user's MPS clients over the users with slices on them or waiting; at least 1), the running
// jobs of the GPUs held by users above their share, for PickVictims: a GPU whose jobs may all go
// (`may_go`: their class allows it) and on which `demand` would fit once empty; the GPU with the
// fewest jobs first, then the one whose newest job is the youngest, then the lower index; on
// each, its youngest job first. At most kMaxPreemptionCandidates. Empty when `demand` is no such
// slice, its user holds their share, or no GPU qualifies.
std::vector<JobId> ReclaimCandidates(const Snapshot& snapshot, const Demand& demand,
                                     const std::function<bool(JobId)>& may_go);

}  // namespace pinpoint::sched
