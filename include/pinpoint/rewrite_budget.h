// Control requests (cancel, hold, release) rewrite the stored record of each job they name, and a
// record holds its job's environment (up to max_request_bytes). So that no user's request holds
// pinpointd's loop for long, one request rewrites at most kRewriteBytesPerRequest (at least one
// job): the ids past it are answered NotReached, not done, and the client sends them again.
#pragma once

#include <cstdint>

#include "pinpoint/status.h"

namespace pinpoint {

inline constexpr uint64_t kRewriteBytesPerRequest = uint64_t{1} << 20;
inline constexpr char kNotReachedMessage[] =
    "not reached: this request's rewrites are spent; the rest must be sent again";

inline Status NotReached() { return Status(Code::kUnavailable, kNotReachedMessage); }
inline bool IsNotReached(const Status& s) {
  return s.code() == Code::kUnavailable && s.message() == kNotReachedMessage;
}

// The bytes one request may still rewrite. Spend(n) is false, and spends nothing, once a job was
// rewritten and n more would pass the budget; 0 bytes of budget means no bound.
class RewriteBudget {
 public:
  explicit RewriteBudget(uint64_t bytes) : left_(bytes), bounded_(bytes > 0) {}
  bool Spend(uint64_t bytes) {
    if (!bounded_) return true;
    if (spent_any_ && bytes > left_) return false;
    left_ = bytes > left_ ? 0 : left_ - bytes;
    spent_any_ = true;
    return true;
  }

 private:
  uint64_t left_;
  bool bounded_;
  bool spent_any_ = false;
};

}  // namespace pinpoint
