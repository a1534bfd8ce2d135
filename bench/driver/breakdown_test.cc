#include "bench/driver/breakdown.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace pinpoint::bench {
namespace {

using ::testing::HasSubstr;

constexpr double kT0 = 1'700'000'000.0;  // epoch seconds of a batch's start

// A copy through pinpointd whose stages take the given ms, one after the other from `at_ms`
// after kT0: submit -> received -> started -> first CUDA -> ready; it ends at end_ms and is
// known at known_ms.
JobResult Copy(double at_ms, double submit, double received, double first_cuda, double ready,
               double end_ms, double known_ms) {
  JobResult j;
  j.ok = true;
  j.submit_call_s = kT0 + at_ms / 1000;
  j.submit_s = j.submit_call_s + submit / 1000;
  j.start_s = j.submit_s + received / 1000;
  j.first_cuda_s = j.start_s + first_cuda / 1000;
  j.ready_s = j.first_cuda_s + ready / 1000;
  j.end_s = kT0 + end_ms / 1000;
  j.known_s = kT0 + known_ms / 1000;
  return j;
}

PointResult Point(Mode mode, int n, int rep, std::vector<JobResult> jobs, double t1_ms) {
  PointResult p;
  p.mode = mode;
  p.n = n;
  p.rep = rep;
  p.batch.t0_s = kT0;
  p.batch.t1_s = kT0 + t1_ms / 1000;
  p.batch.jobs = std::move(jobs);
  return p;
}

TEST(BreakdownTest, CopyStagesAreMedianAndMaxOverEveryCopyOfEveryRepetition) {
  std::vector<PointResult> points = {
      Point(Mode::kMps, 2, 1,
            {Copy(0, 2, 3, 10, 100, 1000, 1010), Copy(1, 4, 5, 20, 200, 1005, 1010)}, 1012),
      Point(Mode::kMps, 2, 2, {Copy(0, 6, 7, 30, 300, 1000, 1020)}, 1025),
  };
  std::vector<BreakdownRow> rows = ComputeBreakdown(points, {Mode::kMps});
  ASSERT_EQ(rows.size(), 1u);
  const BreakdownRow& r = rows[0];
  EXPECT_EQ(r.reps, 2);
  EXPECT_EQ(r.jobs, 3);
  EXPECT_NEAR(r.submit_to_received.median_ms, 4, 1e-3);
  EXPECT_NEAR(r.submit_to_received.max_ms, 6, 1e-3);
  EXPECT_EQ(r.submit_to_received.count, 3);
  EXPECT_NEAR(r.received_to_started.median_ms, 5, 1e-3);
  EXPECT_NEAR(r.started_to_first_cuda.max_ms, 30, 1e-3);
  EXPECT_NEAR(r.first_cuda_to_ready.median_ms, 200, 1e-3);
  EXPECT_NEAR(r.end_to_known.median_ms, 10, 1e-3);  // 10, 5, 20
  EXPECT_NEAR(r.end_to_known.max_ms, 20, 1e-3);
}

TEST(BreakdownTest, BatchStagesSplitTheMakespan) {
  // Rep 1: the last copy is received 1 + 4 ms and started 1 + 4 + 5 ms after t0; the last end is
  // at 1005 ms, t1 at 1012 ms. Rep 2: 13 ms, 1000 ms and 1025 ms.
  std::vector<PointResult> points = {
      Point(Mode::kMps, 2, 1,
            {Copy(0, 2, 3, 10, 100, 1000, 1010), Copy(1, 4, 5, 20, 200, 1005, 1010)}, 1012),
      Point(Mode::kMps, 2, 2, {Copy(0, 6, 7, 30, 300, 1000, 1020)}, 1025),
  };
  const BreakdownRow r = ComputeBreakdown(points, {Mode::kMps}).at(0);
  EXPECT_NEAR(r.first_submit_to_last_received.median_ms, 5.5, 1e-3);  // 5 and 6
  EXPECT_NEAR(r.first_submit_to_last_start.median_ms, 11.5, 1e-3);    // 10 and 13
  EXPECT_NEAR(r.first_submit_to_last_start.max_ms, 13, 1e-3);
  EXPECT_NEAR(r.last_end_to_all_known.median_ms, 16, 1e-3);  // 7 and 25
  EXPECT_NEAR(r.last_end_to_all_known.max_ms, 25, 1e-3);
  EXPECT_NEAR(r.makespan.max_ms, 1025, 1e-3);
  EXPECT_EQ(r.makespan.count, 2);
}

TEST(BreakdownTest, DirectModesHaveNoDaemonStagesAndMissingCudaLinesLeaveCellsEmpty) {
  JobResult spawned;  // bare-mps: spawned at 2 ms, no submission, reaped at its end
  spawned.ok = true;
  spawned.submit_s = spawned.start_s = kT0 + 0.002;
  spawned.first_cuda_s = kT0 + 0.005;
  spawned.ready_s = kT0 + 0.105;
  spawned.end_s = spawned.known_s = kT0 + 1.0;
  JobResult silent = Copy(0, 1, 1, 1, 1, 900, 950);  // no pp-cuda line (another workload)
  silent.first_cuda_s = silent.ready_s = 0;
  std::vector<PointResult> points = {Point(Mode::kBareMps, 1, 1, {spawned}, 1000.5),
                                     Point(Mode::kMps, 1, 1, {silent}, 960)};
  std::vector<BreakdownRow> rows = ComputeBreakdown(points, {Mode::kMps, Mode::kBareMps});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].mode, Mode::kMps) << "in the order of the modes";
  EXPECT_EQ(rows[0].started_to_first_cuda.count, 0);
  EXPECT_EQ(rows[0].first_cuda_to_ready.count, 0);
  EXPECT_EQ(rows[0].end_to_known.count, 1);
  const BreakdownRow& bare = rows[1];
  EXPECT_EQ(bare.submit_to_received.count, 0);
  EXPECT_EQ(bare.received_to_started.count, 0);
  EXPECT_EQ(bare.end_to_known.count, 0);
  EXPECT_EQ(bare.first_submit_to_last_received.count, 0);
  EXPECT_NEAR(bare.started_to_first_cuda.median_ms, 3, 1e-3);
  EXPECT_NEAR(bare.first_cuda_to_ready.median_ms, 100, 1e-3);
  EXPECT_NEAR(bare.first_submit_to_last_start.median_ms, 2, 1e-3);
  EXPECT_NEAR(bare.last_end_to_all_known.median_ms, 0.5, 1e-3);

  std::string md = BreakdownMarkdown(rows);
  EXPECT_THAT(md, HasSubstr("## Where the time goes"));
  EXPECT_THAT(md, HasSubstr("| mps | 1 | 1 | 1.0 / 1.0 | 1.0 / 1.0 |  |  | 50.0 / 50.0 |"));
  EXPECT_THAT(md, HasSubstr("| bare-mps | 1 | 1 |  |  | 3.0 / 3.0 | 100.0 / 100.0 |  |  |"));
  nlohmann::json j = BreakdownJson(rows);
  EXPECT_EQ(j[1]["mode"], "bare-mps");
  EXPECT_TRUE(j[1]["stages"]["end_to_known_ms"]["median"].is_null());
  EXPECT_NEAR(j[1]["stages"]["first_cuda_to_ready_ms"]["median"].get<double>(), 100, 1e-3);
}

TEST(BreakdownTest, FailedCopiesSkippedAndErroredPointsLeftOut) {
  JobResult failed = Copy(0, 500, 500, 500, 500, 9000, 9000);
  failed.ok = false;
  PointResult errored = Point(Mode::kMps, 4, 2, {Copy(0, 900, 1, 1, 1, 1, 1)}, 1);
  errored.error = "submit refused";
  PointResult skipped = Point(Mode::kMps, 8, 1, {}, 0);
  skipped.skipped = true;
  std::vector<PointResult> points = {
      Point(Mode::kMps, 4, 1, {Copy(0, 2, 2, 2, 2, 100, 101), failed}, 102), errored, skipped};
  std::vector<BreakdownRow> rows = ComputeBreakdown(points, {Mode::kMps});
  ASSERT_EQ(rows.size(), 1u) << "N=8 was never measured";
  EXPECT_EQ(rows[0].reps, 1);
  EXPECT_EQ(rows[0].jobs, 1);
  EXPECT_NEAR(rows[0].submit_to_received.max_ms, 2, 1e-3);
}

}  // namespace
}  // namespace pinpoint::bench
