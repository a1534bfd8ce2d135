// EstimateStarts (sched/start_estimate.h): the node played forward with Schedule's own policy.
#include "sched/start_estimate.h"

#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using namespace testing;  // NOLINT: the sched test builders

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kMin = 60'000;

std::map<JobId, std::optional<int64_t>> Starts(const std::vector<StartEstimate>& estimates) {
  std::map<JobId, std::optional<int64_t>> out;
  for (const auto& e : estimates) out[e.id] = e.start_ms;
  return out;
}

TEST(StartEstimateTest, JobsStartAsTheRunningOnesReachTheirLimitsInTheSchedulersOrder) {
  Snapshot snap;
  snap.inventory = Node({Gpu(80), Gpu(80)});
  snap.running = {Running(1, 1000, {WholeOn(0)}), Running(2, 1000, {WholeOn(1)})};
  // 3 needs both GPUs; 4, a slice submitted later, backfills nothing (3 holds both) and follows it.
  snap.pending = {Whole(3, 2), Slice(4, 1000, 10), Slice(5, 1000, 10)};
  auto estimates = EstimateStarts(snap, {{1, kNow + 10 * kMin}, {2, kNow + 30 * kMin}},
                                  {{3, 60 * kMin}, {4, 5 * kMin}, {5, 5 * kMin}}, kNow, 100);
  auto starts = Starts(estimates);
  EXPECT_EQ(starts[3], kNow + 30 * kMin) << "once both GPUs are free";
  EXPECT_EQ(starts[4], kNow + 90 * kMin) << "after 3's hour";
  EXPECT_EQ(starts[5], kNow + 90 * kMin);
  EXPECT_EQ(estimates[0].id, 3) << "in the snapshot's order";
}

TEST(StartEstimateTest, WhatFitsNowStartsNowAndNoLimitMeansNoEstimate) {
  Snapshot snap;
  snap.inventory = Node({Gpu(80)});
  snap.running = {Running(1, 1000, {On(0, 70)})};  // no time limit
  snap.pending = {Slice(2, 1000, 5), Slice(3, 1000, 20)};
  auto estimates = EstimateStarts(snap, {}, {{2, kMin}}, kNow, 100);
  EXPECT_EQ(estimates[0].start_ms, kNow) << "fits beside it now";
  EXPECT_FALSE(estimates[1].start_ms.has_value());
  EXPECT_EQ(estimates[1].why, "waits for a job without a time limit to end");
}

TEST(StartEstimateTest, HeldJobsAndDependenciesAndTheHorizon) {
  Snapshot snap;
  snap.inventory = Node({Gpu(80)});
  snap.running = {Running(1, 1000, {WholeOn(0)})};
  Demand held = Whole(2, 1);
  held.hold = Hold::kUser;
  Demand after = Slice(3, 1000, 10);
  after.afterok = {4};  // runs once 4 has ended, though it would fit beside it
  Demand first = Slice(4, 1000, 10);
  snap.pending = {held, after, first};
  snap.dependencies = {{99, JobState::kFailed}};  // not read: the play judges dependencies itself
  auto estimates = EstimateStarts(snap, {{1, kNow + kMin}}, {{3, kMin}, {4, 5 * kMin}}, kNow, 100);
  auto starts = Starts(estimates);
  EXPECT_FALSE(starts[2].has_value());
  EXPECT_EQ(estimates[0].why, "held");
  EXPECT_EQ(starts[4], kNow + kMin);
  EXPECT_EQ(starts[3], kNow + 6 * kMin) << "after 4's five minutes";
  auto short_sight = EstimateStarts(snap, {{1, kNow + kMin}}, {{3, kMin}, {4, 5 * kMin}}, kNow, 1);
  EXPECT_FALSE(short_sight[2].start_ms.has_value());
  EXPECT_EQ(short_sight[2].why, "beyond the estimate's horizon");
}

TEST(StartEstimateTest, AJobThatNeverFitsSaysSo) {
  Snapshot snap;
  snap.inventory = Node({Gpu(80)});
  snap.pending = {Whole(1, 2)};
  auto estimates = EstimateStarts(snap, {}, {}, kNow, 100);
  EXPECT_FALSE(estimates[0].start_ms.has_value());
  EXPECT_EQ(estimates[0].why, "does not start even once the running jobs end");
}

}  // namespace
}  // namespace pinpoint::sched
