// Per-user caps (the configuration's user_limits, docs/admin.md): how much one user's running
// jobs may hold at once. Plain data; the scheduler applies them (placement.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace pinpoint::sched {

struct UserLimit {
  // Jobs (leases included) of the user running at once; nullopt: no cap.
  std::optional<int> running_jobs = std::nullopt;
  // Device memory the user's running jobs hold at once: a slice counts its memory on each of
  // its devices, a whole GPU its whole memory. nullopt: no cap.
  std::optional<uint64_t> gpu_mem_bytes = std::nullopt;
  bool operator==(const UserLimit&) const = default;
};

struct UserLimits {
  UserLimit defaults = {};  // every uid without an entry in by_uid (root included)
  std::map<uint32_t, UserLimit> by_uid = {};  // an entry replaces `defaults` whole
  const UserLimit& For(uint32_t uid) const {
    auto it = by_uid.find(uid);
    return it == by_uid.end() ? defaults : it->second;
  }
  bool operator==(const UserLimits&) const = default;
};

}  // namespace pinpoint::sched
