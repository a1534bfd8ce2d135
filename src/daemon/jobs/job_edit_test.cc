// The policy of `pinpoint update` (job_edit.h): which job may take which field, and when.
#include "daemon/jobs/job_edit.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

JobRecord Pending() {
  JobRecord job;
  job.id = 7;
  job.request.argv = {"true"};
  job.request.cwd = "/";
  job.request.gpus = 1;
  job.request.gpu_mem_bytes = 1ull << 30;
  job.request.time_limit_s = 3600;
  job.reason = Reason::kResources;
  job.detail = "needs 1GiB";
  return job;
}

JobRecord Running() {
  JobRecord job = Pending();
  job.state = JobState::kRunning;
  return job;
}

JobEdit Time(int64_t s) {
  JobEdit e;
  e.time_limit_s = s;
  return e;
}

TEST(JobEditTest, APendingJobTakesEveryFieldAndWaitsForTheNextPassToSayWhy) {
  JobRecord job = Pending();
  JobEdit e = Time(7200);
  e.gpu_mem_bytes = 4ull << 30;
  e.gpu_share_pct = 20;
  e.priority = 5;
  e.name = "renamed";
  ASSERT_TRUE(EditChanges(job, e));
  auto changed = ApplyEdit(job, e, /*root=*/false);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(job.request.time_limit_s, 7200);
  EXPECT_EQ(job.request.gpu_mem_bytes, 4ull << 30);
  EXPECT_EQ(job.request.gpu_share_pct, 20);
  EXPECT_EQ(job.request.priority, 5);
  EXPECT_EQ(job.request.name, "renamed");
  EXPECT_EQ(job.reason, Reason::kNone);
  EXPECT_EQ(job.detail, "");
  EXPECT_FALSE(EditChanges(job, e)) << "done";
  EXPECT_FALSE(*ApplyEdit(job, e, false)) << "again: nothing to change, not an error";
}

TEST(JobEditTest, AHeldJobKeepsItsHoldAndItsReason) {
  JobRecord job = Pending();
  job.hold = Hold::kUser;
  job.reason = Reason::kHeld;
  JobEdit e;
  e.name = "x";
  ASSERT_TRUE(*ApplyEdit(job, e, false));
  EXPECT_EQ(job.hold, Hold::kUser);
  EXPECT_EQ(job.reason, Reason::kHeld);
}

TEST(JobEditTest, ARunningJobTakesOnlyATimeLimitAndOnlyRootRaisesIt) {
  JobRecord job = Running();
  EXPECT_TRUE(*ApplyEdit(job, Time(1800), false)) << "a user may shorten it";
  EXPECT_EQ(job.request.time_limit_s, 1800);
  Status raised = ApplyEdit(job, Time(3600), false).status();
  EXPECT_EQ(raised.code(), Code::kPermissionDenied);
  EXPECT_EQ(raised.message(),
            "job 7 is running: only root may raise its time limit (30:00 now; it may be lowered)");
  EXPECT_EQ(ApplyEdit(job, Time(0), false).status().code(), Code::kPermissionDenied)
      << "lifting it raises it";
  EXPECT_EQ(job.request.time_limit_s, 1800) << "unchanged";
  EXPECT_TRUE(*ApplyEdit(job, Time(7200), true)) << "root may";
  EXPECT_EQ(job.request.time_limit_s, 7200);

  JobEdit mem;
  mem.gpu_mem_bytes = 2ull << 30;
  Status s = ApplyEdit(job, mem, true).status();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(
      s.message(),
      "job 7 is running: only its time limit can change now (the rest is fixed once it starts)");
  EXPECT_FALSE(EditChanges(job, mem)) << "an array's update passes it over";
  EXPECT_EQ(job.request.gpu_mem_bytes, 1ull << 30);
  JobRecord unlimited = Running();
  unlimited.request.time_limit_s = 0;
  EXPECT_TRUE(*ApplyEdit(unlimited, Time(60), false)) << "a limit where there was none shortens it";
}

TEST(JobEditTest, EndedCancelledAndPlainJobsWithAnArrayLimitAreRefused) {
  JobEdit e;
  e.name = "x";
  JobRecord ended = Pending();
  ended.state = JobState::kCompleted;
  EXPECT_EQ(ApplyEdit(ended, e, true).status().message(), "job 7 already ended (completed)");
  JobRecord cancelling = Running();
  cancelling.cancel_requested = true;
  EXPECT_EQ(ApplyEdit(cancelling, Time(60), true).status().message(), "job 7 is being cancelled");
  EXPECT_FALSE(EditChanges(cancelling, Time(60)));
  JobEdit limit;
  limit.array_limit = 2;
  JobRecord plain = Pending();
  EXPECT_EQ(ApplyEdit(plain, limit, true).status().message(), "job 7 is no task of a job array");
  EXPECT_FALSE(EditChanges(plain, limit));
}

// A lease has no place in the queue: only its time limit changes, running or starting (pending),
// by a running job's rules: its owner may lower it, only root raise it.
TEST(JobEditTest, ALeaseTakesOnlyItsTimeLimitAsARunningJob) {
  for (JobState state : {JobState::kRunning, JobState::kPending}) {
    JobRecord lease = Running();
    lease.state = state;
    lease.kind = JobKind::kLease;
    JobEdit name;
    name.name = "x";
    EXPECT_EQ(ApplyEdit(lease, name, true).status().message(),
              "job 7 is a lease: only its time limit can change (for the rest, close it and open "
              "another)");
    EXPECT_FALSE(EditChanges(lease, name));
    EXPECT_TRUE(EditChanges(lease, Time(7200)));
    EXPECT_EQ(ApplyEdit(lease, Time(7200), false).status().code(), Code::kPermissionDenied);
    EXPECT_EQ(ApplyEdit(lease, Time(0), false).status().code(), Code::kPermissionDenied)
        << "lifting it is raising it";
    EXPECT_TRUE(*ApplyEdit(lease, Time(60), false));
    EXPECT_EQ(lease.request.time_limit_s, 60);
    EXPECT_TRUE(*ApplyEdit(lease, Time(7200), true));
    EXPECT_EQ(lease.request.time_limit_s, 7200);
    EXPECT_EQ(lease.detail, "needs 1GiB") << "a lease waits for no pass";
  }
}

TEST(JobEditTest, AnArrayLimitReachesRunningTasksToo) {
  JobRecord task = Running();
  task.array.array_id = 5;
  task.array.limit = 4;
  JobEdit limit;
  limit.array_limit = 2;
  EXPECT_TRUE(EditChanges(task, limit));
  EXPECT_TRUE(*ApplyEdit(task, limit, false));
  EXPECT_EQ(task.array.limit, 2);
  EXPECT_FALSE(EditChanges(task, limit));
}

}  // namespace
}  // namespace pinpoint::daemon
