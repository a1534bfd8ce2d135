#include "demo/batch_stats.h"

#include <gtest/gtest.h>

namespace pinpoint::demo {
namespace {

JobView Job(int64_t start_ms, int64_t end_ms, std::vector<int> devices) {
  JobView j;
  j.start_ms = start_ms;
  j.end_ms = end_ms;
  for (int d : devices) {
    Allocation a;
    a.device_index = d;
    j.allocations.push_back(a);
  }
  return j;
}

TEST(BatchStatsTest, OverlappingSlicesCountOnceAndWholeGpusPerDevice) {
  std::vector<JobView> jobs = {
      Job(1000, 3000, {0}),                        // slices sharing GPU 0: busy 1000..4000
      Job(2000, 4000, {0}), Job(6000, 7000, {0}),  // after a gap: +1 s
      Job(1000, 2000, {0, 1}),  // a two-GPU job: inside GPU 0's busy time, 1 s of GPU 1
  };
  EXPECT_DOUBLE_EQ(BusyGpuSeconds(jobs), 3.0 + 1.0 + 1.0);
  auto peak = PeakPerDevice(jobs);
  EXPECT_EQ(peak[0], 2);  // at 2000 the two-GPU job ends as the second slice starts
  EXPECT_EQ(peak[1], 1);
}

TEST(BatchStatsTest, OneJobPerGpuIsTheSumOfRuntimes) {
  std::vector<JobView> jobs = {Job(0 + 1, 2001, {0}), Job(2001, 4001, {0}), Job(1, 1001, {1})};
  EXPECT_DOUBLE_EQ(BusyGpuSeconds(jobs), 5.0);
  EXPECT_EQ(PeakPerDevice(jobs)[0], 1) << "an end at the ms of the next start is not an overlap";
}

TEST(BatchStatsTest, JobsThatNeverRanCountNothing) {
  std::vector<JobView> jobs = {Job(0, 0, {0}), Job(5000, 0, {1}), Job(1000, 1500, {})};
  EXPECT_DOUBLE_EQ(BusyGpuSeconds(jobs), 0.0);
  EXPECT_TRUE(PeakPerDevice(jobs).empty());
}

}  // namespace
}  // namespace pinpoint::demo
