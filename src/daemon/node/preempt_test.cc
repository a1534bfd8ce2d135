// Preemption (issue 56 item 3, docs/scheduling.md "Preemption"): a waiting job of a class that
// may preempt another makes room by the youngest of that class's running jobs it needs gone,
// after their grace, and they run again (requeued) or end (cancelled) as their class says.
#include <gtest/gtest.h>
#include <signal.h>

#include "daemon/service/node_fixture.h"

namespace pinpoint::daemon {
namespace {

class PreemptTest : public NodeTest {
 protected:
  JobId SubmitIn(const std::string& qos, int gpus = 1) {
    JobRequest r = Request(gpus);
    r.qos = qos;
    return Submit(r);
  }
  // The node's classes: "normal" preempts "scavenger" (requeue, 30 s) and "batch" (cancel, 0 s).
  static std::vector<ServiceClass> Classes() {
    std::vector<ServiceClass> classes = DefaultServiceClasses();
    classes.front().preempts.push_back("batch");
    classes.push_back(ServiceClass{.name = "batch", .preempt_mode = PreemptMode::kCancel});
    return classes;
  }
  void SetUp() override {
    NodeTest::SetUp();
    node_.reset();
    MakeNode(TwoGpus(), Classes());
  }
};

TEST_F(PreemptTest, AnUrgentJobRequeuesTheYoungestScavengerAfterItsGrace) {
  launcher_.SetSignalsEndJobs(false);  // each job runs until told to end below
  JobId old = SubmitIn("scavenger");
  node_->Step();
  clock_.AdvanceMs(1000);
  JobId young = SubmitIn("scavenger");
  node_->Step();
  ASSERT_EQ(StateOf(old), JobState::kRunning);
  ASSERT_EQ(StateOf(young), JobState::kRunning);
  JobId urgent = SubmitIn("normal");
  node_->Step();
  EXPECT_EQ(StateOf(urgent), JobState::kPending);
  EXPECT_NE(node_->Get(urgent)->detail.find("job(s) " + std::to_string(young) + " preempted"),
            std::string::npos)
      << node_->Get(urgent)->detail;
  EXPECT_TRUE(Signalled(launcher_, young, SIGTERM)) << "its grace begins with SIGTERM";
  EXPECT_FALSE(Signalled(launcher_, old, SIGTERM)) << "one job makes the room: the older stays";
  EXPECT_EQ(node_->Get(young)->stop_reason, Reason::kPreempted);
  EXPECT_EQ(node_->MetricsView().sched.preemptions_total, 1);
  // Another pass within the grace preempts nothing more.
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, old, SIGTERM));
  clock_.AdvanceMs(30'000);  // scavenger's grace
  node_->Step();
  launcher_.Finish(young, [] {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kSignaled;
    s.term_signal = SIGTERM;
    return s;
  }());
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(urgent), JobState::kRunning) << node_->Get(urgent)->detail;
  auto requeued = node_->Get(young);
  EXPECT_EQ(requeued->state, JobState::kPending) << "requeued, not lost";
  EXPECT_EQ(requeued->reason, Reason::kPreempted);
  EXPECT_NE(requeued->detail.find("preempted by job " + std::to_string(urgent)), std::string::npos)
      << requeued->detail;
  EXPECT_FALSE(requeued->cancel_requested) << "its next run is its own";
  // It runs again once a GPU is free.
  launcher_.Finish(urgent, Exited(0));
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(young), JobState::kRunning);
}

TEST_F(PreemptTest, AClassItDoesNotPreemptIsLeftAlone) {
  launcher_.SetSignalsEndJobs(false);
  JobId a = SubmitIn("normal");
  JobId b = SubmitIn("normal");
  node_->Step();
  JobId waiting = SubmitIn("normal");
  node_->Step();
  EXPECT_EQ(StateOf(waiting), JobState::kPending);
  EXPECT_FALSE(Signalled(launcher_, a, SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, b, SIGTERM));
  EXPECT_EQ(node_->MetricsView().sched.preemptions_total, 0);
  // Nor does a scavenger preempt anything.
  JobId s = SubmitIn("scavenger");
  node_->Step();
  EXPECT_EQ(StateOf(s), JobState::kPending);
  EXPECT_EQ(node_->MetricsView().sched.preemptions_total, 0);
}

TEST_F(PreemptTest, ACancelModeEndsTheVictimCancelled) {
  JobId batch = SubmitIn("batch", 2);
  node_->Step();
  ASSERT_EQ(StateOf(batch), JobState::kRunning);
  JobId urgent = SubmitIn("normal");
  node_->Step();  // preempted: its SIGTERM ends it (the fake's jobs end on a signal)
  node_->Step();
  node_->Step();
  auto ended = node_->Get(batch);
  EXPECT_EQ(ended->state, JobState::kCancelled);
  EXPECT_EQ(ended->reason, Reason::kPreempted);
  EXPECT_EQ(StateOf(urgent), JobState::kRunning);
}

// A user who cancels their job while it is being preempted gets a cancel, not a requeue.
TEST_F(PreemptTest, ACancelDuringTheGraceWinsOverTheRequeue) {
  launcher_.SetSignalsEndJobs(false);
  JobId a = SubmitIn("scavenger", 2);
  node_->Step();
  SubmitIn("normal");
  node_->Step();
  ASSERT_EQ(node_->Get(a)->stop_reason, Reason::kPreempted);
  ASSERT_TRUE(node_->Cancel(caller_, {a})[0].ok());
  launcher_.Finish(a, Exited(143));
  node_->Step();
  auto ended = node_->Get(a);
  EXPECT_EQ(ended->state, JobState::kCancelled);
  EXPECT_EQ(ended->reason, Reason::kCancelled);
}

}  // namespace
}  // namespace pinpoint::daemon
