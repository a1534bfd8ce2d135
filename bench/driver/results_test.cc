#include "bench/driver/results.h"

#include <gtest/gtest.h>

#include "bench/driver/test_points.h"

namespace pinpoint::bench {
namespace {

TEST(StatsTest, MedianAndNearestRankPercentile) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 2, 3}), 2.5);
  EXPECT_LT(Median({}), 0);
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(Percentile(v, 95), 19);
  EXPECT_DOUBLE_EQ(Percentile({5}, 95), 5);
  EXPECT_DOUBLE_EQ(Percentile({1, 2}, 95), 2);
  EXPECT_LT(Percentile({}, 95), 0);
}

TEST(ComputeMetricsTest, ThroughputJobTimesAndEnergyPerJob) {
  PointResult p = TestPoint(Mode::kMps, 4, 2.0, 1.5, 400, 2.0, 1, 0.25);
  PointMetrics m = ComputeMetrics(p);
  EXPECT_EQ(m.ok_jobs, 3);
  EXPECT_EQ(m.failed_jobs, 1);
  EXPECT_DOUBLE_EQ(m.units, 6);
  EXPECT_DOUBLE_EQ(m.makespan_s, 2);
  EXPECT_DOUBLE_EQ(m.throughput, 3);
  EXPECT_DOUBLE_EQ(m.jobs_per_min, 90);
  EXPECT_DOUBLE_EQ(m.job_mean_s, 1.5);
  EXPECT_DOUBLE_EQ(m.job_p95_s, 1.5);
  EXPECT_DOUBLE_EQ(m.wait_mean_s, 0.25);
  EXPECT_DOUBLE_EQ(m.energy_per_job_j, 100) << "the whole GPU's energy over all N copies";
  EXPECT_DOUBLE_EQ(m.mean_power_w, 200);
}

TEST(ComputeMetricsTest, SkippedAndFailedPointsHaveNoNumbers) {
  PointResult p = TestPoint(Mode::kMps, 2, 2.0, 1.0, 100);
  p.skipped = true;
  EXPECT_LT(ComputeMetrics(p).throughput, 0);
  p.skipped = false;
  p.error = "submit refused";
  EXPECT_LT(ComputeMetrics(p).makespan_s, 0);
}

TEST(SummarizeTest, MediansOverRepetitionsAndRatioToExclusive) {
  std::vector<PointResult> points = {
      TestPoint(Mode::kExclusive, 4, 8, 2, 800), TestPoint(Mode::kExclusive, 4, 10, 2, 1000),
      TestPoint(Mode::kExclusive, 4, 9, 2, 900), TestPoint(Mode::kMps, 4, 2, 2, 300),
      TestPoint(Mode::kMps, 4, 3, 3, 330)};
  PointResult skipped = TestPoint(Mode::kMps, 16, 1, 1, 1);
  skipped.skipped = true;
  points.push_back(skipped);
  auto rows = Summarize(points, {Mode::kMps, Mode::kExclusive});
  ASSERT_EQ(rows.size(), 2u) << "no row for a (mode, N) with nothing measured";
  EXPECT_EQ(rows[0].mode, Mode::kMps) << "rows follow the modes' order";
  EXPECT_EQ(rows[0].reps, 2);
  EXPECT_DOUBLE_EQ(rows[0].median.makespan_s, 2.5);
  EXPECT_DOUBLE_EQ(rows[0].median.job_mean_s, 2.5);
  EXPECT_EQ(rows[0].unit, "Giter");
  EXPECT_EQ(rows[1].reps, 3);
  EXPECT_DOUBLE_EQ(rows[1].median.throughput, 4.0 / 9);
  EXPECT_DOUBLE_EQ(rows[1].median.energy_per_job_j, 225);
  EXPECT_DOUBLE_EQ(rows[1].vs_exclusive, 1);
  double mps_throughput = (4.0 / 2 + 4.0 / 3) / 2;
  EXPECT_DOUBLE_EQ(rows[0].vs_exclusive, mps_throughput / (4.0 / 9));
}

TEST(EvaluateTargetsTest, MetMissedAndUnknown) {
  std::vector<PointResult> points = {
      TestPoint(Mode::kExclusive, 16, 32, 2, 3200),  // 0.5 units/s, 200 J/job
      TestPoint(Mode::kMps, 16, 4, 3, 640),          // 4 units/s (8x), 40 J/job (5x less)
      TestPoint(Mode::kBareMps, 16, 3.8, 3, 600),    // mps at 95% of it
      TestPoint(Mode::kExclusive, 1, 2.05, 2, 200),  // +2.5% over bare
      TestPoint(Mode::kBare, 1, 2.0, 2, 200),
  };
  auto targets = EvaluateTargets(Summarize(points, AllModes()), 16);
  ASSERT_EQ(targets.size(), 5u);
  EXPECT_TRUE(targets[0].known);
  EXPECT_TRUE(targets[0].met);
  EXPECT_DOUBLE_EQ(targets[0].value, 8);
  EXPECT_EQ(targets[0].measured, "8.00x");
  EXPECT_TRUE(targets[1].met);
  EXPECT_EQ(targets[1].measured, "95%");
  EXPECT_TRUE(targets[2].met);
  EXPECT_DOUBLE_EQ(targets[2].value, 5);
  EXPECT_TRUE(targets[3].met);
  EXPECT_EQ(targets[3].measured, "+2.5%");
  EXPECT_FALSE(targets[4].known) << "no mps or bare-mps at N=1";
  EXPECT_TRUE(targets[4].info);

  points[1] = TestPoint(Mode::kMps, 16, 8, 3, 1280);  // 2 units/s: 4x, 80 J/job: 2.5x
  points[3] = TestPoint(Mode::kExclusive, 1, 2.1, 2, 200);
  targets = EvaluateTargets(Summarize(points, AllModes()), 16);
  EXPECT_FALSE(targets[0].met);
  EXPECT_FALSE(targets[1].met);
  EXPECT_FALSE(targets[2].met);
  EXPECT_FALSE(targets[3].met) << "+5% is over 3%";
}

}  // namespace
}  // namespace pinpoint::bench
