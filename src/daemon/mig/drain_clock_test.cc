// A MIG drain's clock is the waiting slice's: a drain that moves keeps it, one for another slice
// has its own, and a slice that no longer waits is forgotten.
#include "daemon/mig/drain_clock.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

TEST(DrainClockTest, ADrainThatMovesKeepsItsSlicesClock) {
  DrainClock clock;
  EXPECT_EQ(clock.Drains(9, {9, 10}, 1'000), 1'000);
  // The planner drains another placement (or GPU) for job 9 at each of 52 passes: one clock.
  for (int pass = 1; pass <= 52; ++pass)
    EXPECT_EQ(clock.Drains(9, {9, 10}, 1'000 + pass * 3'000), 1'000) << pass;
  // Job 10 is drained for a moment; then 9 again: each keeps its own.
  EXPECT_EQ(clock.Drains(10, {9, 10}, 200'000), 200'000);
  EXPECT_EQ(clock.Drains(9, {9, 10}, 201'000), 1'000);
  EXPECT_EQ(clock.Drains(10, {9, 10}, 202'000), 200'000);
  // Job 9 started (it no longer waits): forgotten; it would start afresh.
  EXPECT_EQ(clock.Drains(10, {10}, 203'000), 200'000);
  EXPECT_EQ(clock.Drains(9, {9, 10}, 204'000), 204'000);
  EXPECT_EQ(clock.Drains(0, {}, 205'000), 205'000) << "nothing drains, nothing waits";
  EXPECT_EQ(clock.Drains(10, {10}, 206'000), 206'000) << "forgotten when nothing waited";
}

}  // namespace
}  // namespace pinpoint::daemon
