#include "daemon/jobs/occupancy.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

// A job is queued and pinned to CPUs by pinpoint; a lease is neither, and while pending it is
// placed and starting, not queued. Each kind has its own answers.
TEST(OccupancyTest, EachKindSaysHowItDiffers) {
  const Occupancy& job = OccupancyOf(JobKind::kJob);
  EXPECT_TRUE(job.editable);
  EXPECT_TRUE(job.pinned_cpus);
  EXPECT_FALSE(job.pending_is_starting);
  const Occupancy& lease = OccupancyOf(JobKind::kLease);
  EXPECT_FALSE(lease.editable);
  EXPECT_FALSE(lease.pinned_cpus);
  EXPECT_TRUE(lease.pending_is_starting);
}

}  // namespace
}  // namespace pinpoint::daemon
