// pinpointd's bounds on running jobs' output on the state disk (OutputGuard,
// daemon/jobs/output_bound.h), through a Node with a fake disk: one user's jobs past their
// bound together are ended while another user's job runs on, and when the disk runs short of the
// store's reserve the job that took the space is ended and cut, never the one that printed a
// line.
#include <gtest/gtest.h>
#include <signal.h>

#include "daemon/jobs/fake_users.h"
#include "daemon/node/occupant.h"
#include "daemon/service/node_fixture.h"
#include "launch/fake_output_space.h"

namespace pinpoint::daemon {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

class NodeOutputTest : public NodeTest {
 protected:
  void SetUp() override {
    NodeTest::SetUp();
    users_.AddUser(1001, 1001, "mallory");
    users_.AddUser(1002, 1002, "bob");
    users_.AddUser(1003, 1003, "carol");
    launcher_.SetSignalsEndJobs(false);  // a stopped job ends when the test says
  }
  void MakeNode(OutputLimits limits) {
    NodeOptions o = node_->options();
    o.inventory = node_->devices();
    o.identity.daemon_uid = 0;  // runs other users' jobs (FakeLauncher starts nothing)
    o.launch.output = limits;
    o.launch.output_check_ms = 0;  // a look every pass
    node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                               .launcher = &launcher_,
                                               .clock = &clock_,
                                               .users = &users_,
                                               .sharing = mps_backends_.get(),
                                               .output_space = &space_});
  }
  JobId SubmitAs(const api::Caller& who) {
    auto job = node_->Submit(who, Request(0));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  std::string Dir(JobId id) { return ShimOccupant::JobDir(node_->options(), id); }

  FakeUserDirectory users_;
  launch::FakeOutputSpace space_;
  const api::Caller mallory_{1001, 1001, 1};
  const api::Caller bob_{1002, 1002, 2};
  const api::Caller carol_{1003, 1003, 3};
};

// Attack: eight jobs of one user at 48 MiB each filled 256 MiB, each within max_output_bytes (the
// bound was per job), and another user's running job that printed one line was ended. The
// user's largest jobs are ended until their output is within max_user_output_bytes, each cut
// once it has ended; the other user's job runs on.
TEST_F(NodeOutputTest, OneUsersJobsPastTheirBoundTogetherAreEndedAnotherUsersJobRunsOn) {
  MakeNode({.job_bytes = 64 * kMiB, .user_bytes = 100 * kMiB, .reserve_bytes = 0});
  std::vector<JobId> many;
  for (int i = 0; i < 3; ++i) many.push_back(SubmitAs(mallory_));
  JobId line = SubmitAs(bob_);
  node_->Step();
  for (JobId id : many) ASSERT_EQ(StateOf(id), JobState::kRunning);
  ASSERT_EQ(StateOf(line), JobState::kRunning);

  space_.Write(Dir(line), 4096);
  for (JobId id : many) space_.Write(Dir(id), 48 * kMiB);  // 144 MiB together
  node_->Step();
  // 44 MiB over: the later of the largest (all equal) is ended and cut by that much.
  EXPECT_TRUE(Signalled(launcher_, many[2], SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, many[1], SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, many[0], SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, line, SIGTERM)) << "the bystander pays nothing";
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, many[1], SIGTERM)) << "the one ended counts what it keeps";

  launcher_.Finish(many[2], Terminated());
  node_->Step();
  JobRecord ended = *node_->Get(many[2]);
  EXPECT_EQ(ended.state, JobState::kFailed);
  EXPECT_EQ(ended.reason, Reason::kOutputExceeded);
  EXPECT_NE(ended.detail.find("passed 100MiB (max_user_output_bytes): they took 144MiB on disk "
                              "together; pinpoint ended this job, their largest, and cut its "
                              "output to 4MiB"),
            std::string::npos)
      << ended.detail;
  ASSERT_EQ(space_.cuts().size(), 1u);
  EXPECT_EQ(space_.cuts()[0].job_dir, Dir(many[2]));
  EXPECT_EQ(space_.cuts()[0].keep_bytes, 4 * kMiB);
  EXPECT_NE(space_.cuts()[0].note.find("(max_user_output_bytes)"), std::string::npos);
  EXPECT_EQ(StateOf(many[0]), JobState::kRunning);
  EXPECT_EQ(StateOf(many[1]), JobState::kRunning);
  EXPECT_EQ(StateOf(line), JobState::kRunning);
}

// Attack: one `yes` filled the state filesystem in half a second; the reserve rule then ended
// another user's running job because it printed one line while the disk was short. The job that
// took the space is ended, and its cut gives the store its reserve back; the job that printed a
// line is never ended, before or after, nor is a job that wrote less than the writer, while the
// writer is being stopped.
TEST_F(NodeOutputTest, WithTheDiskShortTheBigWriterIsEndedAndCutNeverTheBystander) {
  MakeNode({.job_bytes = 0, .user_bytes = 0, .reserve_bytes = 64 * kMiB});
  space_.SetSpace({270 * kMiB, 4096 * kMiB});
  JobId line = SubmitAs(bob_);
  JobId writer = SubmitAs(mallory_);
  JobId modest = SubmitAs(carol_);
  node_->Step();
  ASSERT_EQ(StateOf(writer), JobState::kRunning);
  space_.Write(Dir(modest), 10 * kMiB);
  space_.Write(Dir(writer), 200 * kMiB);
  space_.Write(Dir(line), 4096);  // its line, printed last: the disk is short as it does
  ASSERT_LT(space_.space().free_bytes, 64 * kMiB);
  node_->Step();
  EXPECT_TRUE(Signalled(launcher_, writer, SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, line, SIGTERM)) << "ended for a line while another filled it";
  EXPECT_FALSE(Signalled(launcher_, modest, SIGTERM));

  // Both print on while the writer is being stopped, its cut not made yet: the disk is still
  // short, and it alone pays for it.
  space_.Write(Dir(line), 8192);
  space_.Write(Dir(modest), 11 * kMiB);
  ASSERT_LT(space_.space().free_bytes, 64 * kMiB);
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, line, SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, modest, SIGTERM)) << "paid for the writer's shortfall";
  EXPECT_EQ(StateOf(writer), JobState::kRunning) << "being stopped";
  launcher_.Finish(writer, Terminated());
  node_->Step();
  EXPECT_EQ(node_->Get(writer)->reason, Reason::kOutputExceeded);
  EXPECT_NE(node_->Get(writer)->detail.find("kept for the job store (state_reserve_bytes)"),
            std::string::npos)
      << node_->Get(writer)->detail;
  ASSERT_EQ(space_.cuts().size(), 1u);
  EXPECT_GE(space_.space().free_bytes, 64 * kMiB) << "the cut gave the store its reserve back";
  space_.Write(Dir(line), 12288);
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, line, SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, modest, SIGTERM));
  EXPECT_EQ(StateOf(line), JobState::kRunning);
  EXPECT_EQ(StateOf(modest), JobState::kRunning);
}

// The writer's cut is made off the loop (a truncate of GBs it dirtied): while it is being made
// the disk is still short, and what it will free counts as free, so no bystander pays meanwhile.
TEST_F(NodeOutputTest, WhileTheWritersCutIsBeingMadeNobodyElsePaysForTheShortfall) {
  MakeNode({.job_bytes = 0, .user_bytes = 0, .reserve_bytes = 64 * kMiB});
  space_.SetSpace({270 * kMiB, 4096 * kMiB});
  space_.DeferCuts();
  JobId writer = SubmitAs(mallory_);
  JobId modest = SubmitAs(carol_);
  node_->Step();
  space_.Write(Dir(modest), 10 * kMiB);
  space_.Write(Dir(writer), 250 * kMiB);
  node_->Step();
  ASSERT_TRUE(Signalled(launcher_, writer, SIGTERM));
  launcher_.Finish(writer, Terminated());
  node_->Step();
  ASSERT_TRUE(space_.cuts().empty()) << "asked for, not made yet";
  EXPECT_EQ(StateOf(writer), JobState::kRunning)
      << "its end is recorded once its output is as the record says";
  space_.Write(Dir(modest), 11 * kMiB);
  ASSERT_LT(space_.space().free_bytes, 64 * kMiB);
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, modest, SIGTERM)) << "paid while the writer's cut was made";
  EXPECT_EQ(StateOf(writer), JobState::kRunning);
  space_.FinishCuts();
  ASSERT_EQ(space_.cuts().size(), 1u);
  EXPECT_GE(space_.space().free_bytes, 64 * kMiB);
  node_->Step();
  EXPECT_EQ(StateOf(writer), JobState::kFailed) << "the pass after the cut records the end";
  EXPECT_EQ(node_->Get(writer)->reason, Reason::kOutputExceeded);
  EXPECT_FALSE(Signalled(launcher_, modest, SIGTERM));
  EXPECT_EQ(StateOf(modest), JobState::kRunning);
}

// With the disk filled by what no running job holds (ended jobs' output, other files), no
// running job that printed a line pays for it.
TEST_F(NodeOutputTest, ADiskFilledByNoRunningJobEndsNone) {
  MakeNode({.job_bytes = 0, .user_bytes = 0, .reserve_bytes = 64 * kMiB});
  space_.SetSpace({0, 4096 * kMiB});
  JobId line = SubmitAs(bob_);
  node_->Step();
  space_.Write(Dir(line), 4096);
  node_->Step();
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, line, SIGTERM));
  EXPECT_EQ(StateOf(line), JobState::kRunning);
}

}  // namespace
}  // namespace pinpoint::daemon
