// Node's safe stop (node_cancel.cc): cancel of pending and running jobs, SIGTERM after the MPS
// server let go, SIGKILL at the deadline, a cancel before the start, orphaned supervisors.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "daemon/service/node_fixture.h"

namespace pinpoint::daemon {
namespace {

TEST_F(NodeTest, CancelPendingEndsAtOnce) {
  Submit(Request(2));
  JobId waiting = Submit(Request(2));
  node_->Step();
  auto results = node_->Cancel(caller_, {waiting});
  ASSERT_TRUE(results[0].ok());
  EXPECT_EQ(store_->Get(waiting)->state, JobState::kCancelled);
  EXPECT_EQ(launcher_.launches().size(), 1u) << "the cancelled job never starts";
}

TEST_F(NodeTest, CancelRunningSendsTermThenKillAfterGrace) {
  launcher_.SetSignalsEndJobs(false);  // a job that ignores SIGTERM
  JobId id = Submit(Request(1, 1ull << 30));
  node_->Step();
  ASSERT_TRUE(node_->Cancel(caller_, {id})[0].ok());
  ASSERT_EQ(launcher_.signals().size(), 1u);
  EXPECT_EQ(launcher_.signals()[0].second, SIGTERM);
  ASSERT_EQ(mps_.stopped().size(), 1u) << "MPS terminate_client before any signal";
  EXPECT_EQ(mps_.stopped()[0].second,
            std::vector<int64_t>{launcher_.launches().size() > 0 ? 1001 : 0});
  EXPECT_TRUE(mps_.released().empty()) << "the client is released when the job has ended";
  clock_.AdvanceMs(4999);
  node_->Step();
  EXPECT_EQ(launcher_.signals().size(), 1u);
  clock_.AdvanceMs(1);
  node_->Step();
  ASSERT_EQ(launcher_.signals().size(), 2u);
  EXPECT_EQ(launcher_.signals()[1].second, SIGKILL);
  ExitStatus killed;
  killed.kind = ExitStatus::Kind::kSignaled;
  killed.term_signal = SIGKILL;
  launcher_.Finish(id, killed);
  node_->Step();
  auto job = store_->Get(id);
  EXPECT_EQ(job->state, JobState::kCancelled);
  EXPECT_TRUE(job->cancel_requested);
  EXPECT_EQ(mps_.released().size(), 1u);
}

// The MPS server answers a safe cancel later (its exchange runs beside the loop): SIGTERM waits
// for that answer, comes when it has come, and the SIGKILL deadline holds whatever the server does.
TEST_F(NodeTest, CancelSendsTermOnceTheMpsServerHasLetGoOfTheClients) {
  launcher_.SetSignalsEndJobs(false);
  mps_.HoldStops(true);
  JobId id = Submit(Request(1, 1ull << 30));
  node_->Step();
  ASSERT_TRUE(node_->Cancel(caller_, {id})[0].ok());
  ASSERT_EQ(mps_.stopped().size(), 1u);
  EXPECT_TRUE(launcher_.signals().empty()) << "no signal while the server still holds the client";
  node_->Step();
  EXPECT_TRUE(launcher_.signals().empty());
  mps_.FinishStops();
  node_->Step();
  ASSERT_EQ(launcher_.signals().size(), 1u);
  EXPECT_EQ(launcher_.signals()[0].second, SIGTERM);
  // A server that never answers: the kill deadline still ends the job.
  mps_.HoldStops(true);
  JobId other = Submit(Request(1, 1ull << 30));
  node_->Step();
  ASSERT_TRUE(node_->Cancel(caller_, {other})[0].ok());
  clock_.AdvanceMs(5000);
  node_->Step();
  bool killed = false;
  for (const auto& [job, sig] : launcher_.signals()) killed |= job == other && sig == SIGKILL;
  EXPECT_TRUE(killed);
}

TEST_F(NodeTest, CancelErrors) {
  JobId id = Submit(Request(0));
  api::Caller other;
  other.uid = caller_.uid + 1;
  auto r = node_->Cancel(other, {id, 9999});
  EXPECT_EQ(r[0].code(), Code::kPermissionDenied);
  EXPECT_EQ(r[1].code(), Code::kNotFound);
  if (caller_.uid != 0) {
    api::Caller root;
    EXPECT_TRUE(node_->Cancel(root, {id})[0].ok()) << "root may cancel any job";
  }
  node_->Cancel(caller_, {id});
  EXPECT_EQ(node_->Cancel(caller_, {id})[0].code(), Code::kFailedPrecondition);
}

TEST_F(NodeTest, OrphanedJobKeepsItsGpusUntilItsProcessesAreEnded) {
  launcher_.SetSignalsEndJobs(false);  // a job that ignores SIGTERM
  JobId orphan = Submit(Request(2));
  node_->Step();
  ASSERT_EQ(StateOf(orphan), JobState::kRunning);
  JobId next = Submit(Request(2));
  launcher_.Orphan(orphan);  // its pinpoint-shim is SIGKILLed; the job runs on
  EXPECT_TRUE(node_->Step().empty()) << "no end is reported while the job's processes live";
  EXPECT_EQ(StateOf(orphan), JobState::kRunning);
  EXPECT_EQ(StateOf(next), JobState::kPending) << "its GPUs are not handed to the next job";
  EXPECT_TRUE(Signalled(launcher_, orphan, SIGTERM)) << "the daemon ends the orphan";
  // Cancel still reaches it.
  auto cancelled = node_->Cancel(caller_, {orphan});
  EXPECT_TRUE(cancelled.at(0).ok()) << cancelled.at(0).ToString();
  clock_.AdvanceMs(5001);
  EXPECT_TRUE(node_->Step().empty());
  EXPECT_TRUE(Signalled(launcher_, orphan, SIGKILL)) << "SIGKILL after the grace";
  EXPECT_EQ(StateOf(next), JobState::kPending);
  launcher_.Finish(orphan, Exited(0));  // its processes are gone; nobody saw how they ended
  auto ended = node_->Step();
  EXPECT_EQ(ended, std::vector<JobId>{orphan});
  auto stored = store_->Get(orphan);
  EXPECT_EQ(stored->state, JobState::kFailed);
  EXPECT_EQ(stored->reason, Reason::kLost);
  EXPECT_NE(stored->detail.find("supervisor died; its job's processes were ended"),
            std::string::npos)
      << stored->detail;
  EXPECT_EQ(StateOf(next), JobState::kRunning);
}

TEST_F(NodeTest, OrphanFoundAfterRestartIsAdoptedAndEnded) {
  launcher_.SetSignalsEndJobs(false);
  JobId orphan = Submit(Request(2));
  node_->Step();
  node_.reset();
  launcher_.Orphan(orphan);  // supervisor killed while pinpointd was down
  MakeNode(TwoGpus());
  ASSERT_TRUE(node_->Recover().ok());
  JobId next = Submit(Request(2));
  node_->Step();
  EXPECT_EQ(StateOf(orphan), JobState::kRunning);
  EXPECT_EQ(StateOf(next), JobState::kPending);
  EXPECT_TRUE(Signalled(launcher_, orphan, SIGTERM));
}

// A cancel between the launch and the job's start (its supervisor has not recorded the job's pid
// yet, and ignores signals itself) must not lose its SIGTERM: Step sends it once the job has
// started, long before the SIGKILL deadline.
TEST_F(NodeTest, ACancelBeforeTheJobStartedIsSentOnceItHas) {
  JobId id = Submit(Request(0));
  node_->Step();
  ASSERT_EQ(StateOf(id), JobState::kRunning);
  launcher_.SetNotStarted(id, true);
  ASSERT_TRUE(node_->Cancel(caller_, {id}).at(0).ok());
  node_->Step();
  EXPECT_TRUE(launcher_.signals().empty()) << "nothing reached the job yet";
  launcher_.SetNotStarted(id, false);
  clock_.AdvanceMs(100);  // far from the 5 s grace
  node_->Step();
  ASSERT_EQ(launcher_.signals().size(), 1u);
  EXPECT_EQ(launcher_.signals()[0], std::make_pair(id, SIGTERM));
  node_->Step();
  EXPECT_EQ(StateOf(id), JobState::kCancelled);
  EXPECT_EQ(launcher_.signals().size(), 1u) << "once";
}

// The SIGKILL at the deadline is not lost either while the job has still not started.
TEST_F(NodeTest, TheKillAtTheDeadlineWaitsForTheStartToo) {
  launcher_.SetSignalsEndJobs(false);
  JobId id = Submit(Request(0));
  node_->Step();
  launcher_.SetNotStarted(id, true);
  ASSERT_TRUE(node_->Cancel(caller_, {id}).at(0).ok());
  clock_.AdvanceMs(6000);
  node_->Step();
  EXPECT_TRUE(launcher_.signals().empty());
  launcher_.SetNotStarted(id, false);
  node_->Step();
  std::vector<std::pair<JobId, int>> want = {{id, SIGTERM}, {id, SIGKILL}};
  EXPECT_EQ(launcher_.signals(), want);
}

}  // namespace
}  // namespace pinpoint::daemon
