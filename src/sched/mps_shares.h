// Internal to sched/: how the empty GPUs are shared out between users during one Schedule pass,
// where MPS serves one user per GPU (slice_placement auto; placement.h). A user who takes an
// empty GPU keeps it from every other user until all of their jobs there end.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "sched/node_state.h"
#include "sched/placement.h"

namespace pinpoint::sched {

// A one-device slice the scheduler places (the fair share's rules are about these).
bool SharedSlice(const Demand& d);

// What a one-device slice of a user may do with an empty GPU now.
//   kAny      take one as any device (spread)
//   kLast     take one only when no other device takes it (waiting jobs need the empty GPUs)
//   kNever    not take one: the empty GPUs are for other users below their share
//   kWindow   not take one yet: its user's affinity window is open (wait for it to close)
enum class EmptyGpuUse { kAny, kLast, kNever, kWindow };

class MpsShares {
 public:
  // `pending` the demands the pass may start (held ones and unmet dependencies left out).
  MpsShares(const Snapshot& snapshot, const NodeState& state,
            const std::vector<const Demand*>& pending);

  // What `demand` (a slice the scheduler places) may do with an empty GPU; `whole_need` the empty
  // GPUs whole-GPU jobs waiting (or the site) keep.
  EmptyGpuUse For(const Demand& demand, int empty_free, int whole_need) const;
  // `demand` started on `devices`; `took_empty` those of them that were empty.
  void Started(const Demand& demand, int took_empty);
  // When `uid`'s affinity window closes (For said kWindow).
  int64_t WindowEnd(uint32_t uid) const;
  // The GPUs a user may hold while others wait for theirs (at least 1).
  int share() const { return share_; }

 private:
  int Deficit(uint32_t uid) const;

  bool on_ = false;  // slice_placement auto with MPS devices
  int64_t now_ms_ = 0;
  int64_t window_ms_ = 0;
  int share_ = 1;
  std::map<uint32_t, int> held_;          // MPS GPUs each user's jobs hold (running and placed)
  std::map<uint32_t, int> waiting_;       // GPUs each user's waiting slices would take, at most
  std::map<uint32_t, int64_t> first_ms_;  // when each user's oldest running slice started
};

}  // namespace pinpoint::sched
