#include "daemon/jobs/hold.h"

#include <gtest/gtest.h>

#include "sched/placement.h"

namespace pinpoint::daemon {
namespace {

struct Row {
  JobState state;
  Hold before;
  bool root;
  // Outcomes: the hold after, or the error code.
  std::optional<Hold> hold_after;
  Code hold_error;
  std::optional<Hold> release_after;
  Code release_error;
};

TEST(HoldTest, DecisionsTable) {
  constexpr auto kU = Hold::kUser, kR = Hold::kRoot, kN = Hold::kNone;
  constexpr auto kOk = Code::kOk, kPre = Code::kFailedPrecondition, kPerm = Code::kPermissionDenied;
  const Row rows[] = {
      {JobState::kPending, kN, false, kU, kOk, kN, kOk},    // owner holds, releases
      {JobState::kPending, kU, false, kU, kOk, kN, kOk},    // again: no change
      {JobState::kPending, kR, false, kR, kOk, {}, kPerm},  // root's hold stays; owner cannot
                                                            // release
      {JobState::kPending, kN, true, kR, kOk, kN, kOk},     // root's hold is an admin hold
      {JobState::kPending, kU, true, kR, kOk, kN, kOk},  // root replaces and releases a user hold
      {JobState::kPending, kR, true, kR, kOk, kN, kOk},
      {JobState::kRunning, kN, false, {}, kPre, {}, kPre},  // only pending jobs
      {JobState::kRunning, kN, true, {}, kPre, {}, kPre},
      {JobState::kCompleted, kN, false, {}, kPre, {}, kPre},
      {JobState::kCancelled, kU, true, {}, kPre, {}, kPre},
  };
  for (const Row& row : rows) {
    JobRecord job;
    job.id = 12;
    job.state = row.state;
    job.hold = row.before;
    std::string what = std::string(JobStateName(row.state)) + " " + HoldName(row.before) +
                       (row.root ? " by root" : " by owner");
    Result<Hold> held = DecideHold(job, row.root);
    EXPECT_EQ(held.status().code(), row.hold_error) << what;
    if (held.ok()) {
      EXPECT_EQ(*held, *row.hold_after) << what;
    }
    Result<Hold> released = DecideRelease(job, row.root);
    EXPECT_EQ(released.status().code(), row.release_error) << what;
    if (released.ok()) {
      EXPECT_EQ(*released, *row.release_after) << what;
    }
  }
}

TEST(HoldTest, ErrorsSayWhatToDo) {
  JobRecord job;
  job.id = 7;
  job.state = JobState::kRunning;
  EXPECT_EQ(DecideHold(job, false).status().message(),
            "job 7 is running: only a pending job can be held (cancel it to stop it)");
  job.state = JobState::kPending;
  job.hold = Hold::kRoot;
  EXPECT_EQ(DecideRelease(job, false).status().message(),
            "job 7 is held by root: only root can release it");
  EXPECT_EQ(sched::HeldDetail(7, Hold::kUser), "held by its owner: pinpoint release 7");
}

}  // namespace
}  // namespace pinpoint::daemon
