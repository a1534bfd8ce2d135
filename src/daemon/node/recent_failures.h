// The jobs that failed to launch of late, for the active listing (Node::List): a job that cannot
// start stays in `pinpoint queue` with its reason for kRecentFailureMs after its end (as Slurm
// keeps an ended job for MinJobAge, 300 s by default), without a read of the store to select it.
//
// Kept per user (docs/security.md "Recent launch failures"): each user's own, at most
// kRecentFailuresPerUser of them and kRecentFailureBytesPerUser of their bytes (FailureBytes),
// so that no user's failures push out another's; in all, at most that much per user who has
// failed within kRecentFailureMs. Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/job.h"

namespace pinpoint::daemon {

inline constexpr int64_t kRecentFailureMs = 300000;
inline constexpr size_t kRecentFailuresPerUser = 100;
inline constexpr uint64_t kRecentFailureBytesPerUser = 16 << 10;

struct RecentFailure {
  JobId id = 0;
  uint32_t uid = 0;
  JobId array_id = 0;
  std::string name;  // the job's name: the text its user chose (at most kMaxNameBytes)
  int64_t end_ms = 0;
};

// What one failure costs here: its fixed fields and its name's bytes.
inline uint64_t FailureBytes(const RecentFailure& f) { return 64 + f.name.size(); }

class RecentFailures {
 public:
  // Keeps `failure` (ended at or before `now_ms`) among its user's. Forgets every user's failures
  // older than kRecentFailureMs at `now_ms`, then this user's oldest past either bound.
  void Add(RecentFailure failure, int64_t now_ms);

  // The failures of `uid` (nullopt: of every user, as root sees them) that ended within
  // kRecentFailureMs of `now_ms`, oldest first for each user.
  std::vector<const RecentFailure*> Of(std::optional<uint32_t> uid, int64_t now_ms) const;

  size_t users() const { return by_uid_.size(); }  // users with failures kept
  uint64_t BytesOf(uint32_t uid) const;            // what a user's failures cost here

 private:
  struct Kept {
    std::deque<RecentFailure> failures;  // in the order they ended
    uint64_t bytes = 0;                  // FailureBytes of them all
  };
  static void DropOldest(Kept& kept);
  static bool Expired(const RecentFailure& f, int64_t now_ms) {
    return now_ms - f.end_ms > kRecentFailureMs;
  }

  std::map<uint32_t, Kept> by_uid_;
};

}  // namespace pinpoint::daemon
