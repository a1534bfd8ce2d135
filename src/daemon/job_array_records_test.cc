// Job arrays' pure parts (job_array.h): the task records of a spec, and which stored job is the
// first task of an array (a retried submit's check).
#include "daemon/job_array.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

TEST(JobArrayPolicyTest, TaskRecordsFollowTheSpec) {
  JobRecord job;
  job.request.argv = {"true"};
  std::vector<JobRecord> tasks = ArrayTaskRecords(job, ParseArraySpec("2,4,9%3").value());
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].array, (ArrayTask{0, 2, 3, 2, 9, 3}));
  EXPECT_EQ(tasks[2].array, (ArrayTask{0, 9, 3, 2, 9, 3}));
  JobRecord first = tasks[0];
  first.id = first.array.array_id = 12;
  EXPECT_TRUE(IsFirstTaskOf(first, ParseArraySpec("2,4,9%3").value()));
  EXPECT_FALSE(IsFirstTaskOf(first, ParseArraySpec("2,4,9").value()));
  EXPECT_FALSE(IsFirstTaskOf(first, ParseArraySpec("2,9%3").value()));  // same ends, another count
  JobRecord second = tasks[1];
  second.id = 13;
  second.array.array_id = 12;
  EXPECT_FALSE(IsFirstTaskOf(second, ParseArraySpec("2,4,9%3").value()));
}

}  // namespace
}  // namespace pinpoint::daemon
