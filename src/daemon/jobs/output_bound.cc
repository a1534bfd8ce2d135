#include "daemon/jobs/output_bound.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "pinpoint/units.h"

namespace pinpoint::daemon {

namespace {

// One pass of the rules: the holders still running (not ended by an earlier rule), and what the
// cuts of the jobs ended so far free.
class Decision {
 public:
  Decision(const std::vector<OutputHolder>& holders, const OutputLimits& limits)
      : holders_(holders), limits_(limits) {}

  void JobRule();
  void UserRule();
  void ReserveRule(const launch::DiskSpace& space);
  std::vector<OutputEnd> Take() { return std::move(ends_); }

 private:
  bool Ended(JobId id) const { return kept_.count(id) > 0; }
  // uid's running jobs not ended yet, largest first (ties: the later job first).
  std::vector<const OutputHolder*> LargestOf(uint32_t uid) const;
  // What each user's running jobs hold: those not ended, and what the ended ones keep.
  std::map<uint32_t, uint64_t> HeldByUser() const;
  // Ends `h`, keeping `keep` of its output; returns what the cut frees.
  uint64_t End(const OutputHolder& h, uint64_t keep, const char* setting, std::string detail) {
    keep = std::min(keep, h.bytes);
    ends_.push_back({h.id, keep, setting, std::move(detail)});
    kept_[h.id] = keep;
    freed_ += h.bytes - keep;
    return h.bytes - keep;
  }

  const std::vector<OutputHolder>& holders_;
  const OutputLimits& limits_;
  std::vector<OutputEnd> ends_;
  std::map<JobId, uint64_t> kept_;  // of each job in ends_: what its cut keeps
  uint64_t freed_ = 0;              // by the cuts of the jobs in ends_
};

std::vector<const OutputHolder*> Decision::LargestOf(uint32_t uid) const {
  std::vector<const OutputHolder*> mine;
  for (const OutputHolder& h : holders_) {
    if (h.uid == uid && !Ended(h.id)) mine.push_back(&h);
  }
  std::sort(mine.begin(), mine.end(), [](const OutputHolder* a, const OutputHolder* b) {
    return std::tie(a->bytes, a->id) > std::tie(b->bytes, b->id);
  });
  return mine;
}

std::map<uint32_t, uint64_t> Decision::HeldByUser() const {
  std::map<uint32_t, uint64_t> held;
  for (const OutputHolder& h : holders_) {
    auto ended = kept_.find(h.id);
    held[h.uid] += ended == kept_.end() ? h.bytes : ended->second;
  }
  return held;
}

void Decision::JobRule() {
  if (limits_.job_bytes == 0) return;
  for (const OutputHolder& h : holders_) {
    if (h.bytes <= limits_.job_bytes) continue;
    End(h, limits_.job_bytes, "max_output_bytes",
        "its output in the job directory passed " + FormatSize(limits_.job_bytes) +
            " (max_output_bytes): it took " + FormatSize(h.bytes) +
            " on disk; pinpoint ended it and cut the output there");
  }
}

void Decision::UserRule() {
  if (limits_.user_bytes == 0) return;
  for (const auto& [uid, held] : HeldByUser()) {
    if (uid == 0 || held <= limits_.user_bytes) continue;
    uint64_t over = held - limits_.user_bytes;
    for (const OutputHolder* h : LargestOf(uid)) {
      if (over == 0) break;
      uint64_t keep = h->bytes - std::min(h->bytes, over);
      over -= End(*h, keep, "max_user_output_bytes",
                  "the output of its user's running jobs passed " + FormatSize(limits_.user_bytes) +
                      " (max_user_output_bytes): they took " + FormatSize(held) +
                      " on disk together; pinpoint ended this job, their " +
                      "largest, and cut its output to " + FormatSize(keep));
    }
  }
}

void Decision::ReserveRule(const launch::DiskSpace& space) {
  uint64_t reserve = ReserveInForce(limits_.reserve_bytes, space.total_bytes);
  uint64_t free_bytes = space.free_bytes + freed_;
  if (reserve == 0 || free_bytes >= reserve) return;
  uint64_t missing = reserve - free_bytes;
  // Who took the space: what each user's running jobs hold, those ended already included; and
  // their jobs left to end, largest first (sorted once, when the user is first chosen).
  std::map<uint32_t, uint64_t> taken;
  for (const OutputHolder& h : holders_) taken[h.uid] += h.bytes;
  std::map<uint32_t, std::vector<const OutputHolder*>> left;
  uint64_t floor = std::max<uint64_t>(1, ReserveFloor(reserve));
  while (missing > 0) {
    std::optional<uint32_t> who;
    uint64_t most = 0;
    for (const auto& [uid, bytes] : taken) {
      if (bytes < floor || bytes <= most) continue;
      auto queue = left.find(uid);
      if (queue == left.end()) queue = left.emplace(uid, LargestOf(uid)).first;
      if (queue->second.empty()) continue;  // all ended already
      who = uid;
      most = bytes;
    }
    if (!who) return;
    std::vector<const OutputHolder*>& queue = left[*who];
    const OutputHolder& h = *queue.front();
    queue.erase(queue.begin());
    uint64_t cut = missing + reserve;
    uint64_t keep = h.bytes - std::min(h.bytes, cut);
    uint64_t freed =
        End(h, keep, "state_reserve_bytes",
            "the state directory's filesystem had " + FormatSize(space.free_bytes) +
                " free, less than the " + FormatSize(reserve) +
                " kept for the job store (state_reserve_bytes), and its user's running jobs " +
                "held the most output (" + FormatSize(most) + " on disk); pinpoint " +
                "ended this job, their largest, and cut its output to " + FormatSize(keep));
    missing -= std::min(missing, freed);
  }
}

}  // namespace

uint64_t ReserveInForce(uint64_t reserve_bytes, uint64_t total_bytes) {
  return std::min(reserve_bytes, total_bytes / 10);
}

std::vector<OutputEnd> DecideOutputEnds(const std::vector<OutputHolder>& holders,
                                        const OutputLimits& limits,
                                        std::optional<launch::DiskSpace> space) {
  Decision decision(holders, limits);
  decision.JobRule();
  decision.UserRule();
  if (space) decision.ReserveRule(*space);
  return decision.Take();
}

}  // namespace pinpoint::daemon
