// Preemption (issue 56 item 3, docs/scheduling.md "Preemption"): a waiting job of a class that
// may preempt another makes room by the youngest of that class's running jobs it needs gone,
// after their grace, and they run again (requeued) or end (cancelled) as their class says.
#include <gtest/gtest.h>
#include <signal.h>

#include "daemon/jobs/fake_users.h"
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
  launcher_.Finish(young, Terminated());
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

// The fair share's reclaim (docs/scheduling.md "Several users and MPS"): ana arrived first and
// holds both MPS GPUs; bob's slice waits. After mps_reclaim_ms, the youngest of ana's GPUs is
// preempted for it when her class allows (normal requeues here), and nothing before.
class ReclaimTest : public NodeTest {
 protected:
  void Make(PreemptMode normal_mode) {
    users_.AddUser(1001, 1001, "ana");
    users_.AddUser(1002, 1002, "bob");
    NodeOptions o = node_->options();
    o.inventory = TwoGpus();
    o.identity.daemon_uid = 0;  // runs other users' jobs (FakeLauncher starts nothing)
    o.pass.mps_reclaim_ms = 60'000;
    o.admission.qos.front().preempt_mode = normal_mode;  // "normal", the default class
    node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                               .launcher = &launcher_,
                                               .clock = &clock_,
                                               .users = &users_,
                                               .sharing = mps_backends_.get()});
    launcher_.SetSignalsEndJobs(false);
  }
  JobId SliceOf(const api::Caller& who) {
    auto job = node_->Submit(who, Request(1, 10ull << 30));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  // ana's two slices, one a GPU; bob's, waiting for either.
  void AnaHoldsBothAndBobWaits() {
    first_ = SliceOf(ana_);
    node_->Step();
    clock_.AdvanceMs(1000);
    second_ = SliceOf(ana_);
    node_->Step();
    ASSERT_EQ(StateOf(second_), JobState::kRunning);
    ASSERT_NE(node_->Get(first_)->allocations.at(0).device_index,
              node_->Get(second_)->allocations.at(0).device_index)
        << "alone, ana spreads";
    bobs_ = SliceOf(bob_);
    node_->Step();
    ASSERT_EQ(StateOf(bobs_), JobState::kPending);
  }
  FakeUserDirectory users_;
  api::Caller ana_{1001, 1001, 1};
  api::Caller bob_{1002, 1002, 2};
  JobId first_ = 0, second_ = 0, bobs_ = 0;
};

TEST_F(ReclaimTest, AUserBelowTheirShareGetsTheYoungestGpuOfOneAboveAfterTheReclaimTime) {
  Make(PreemptMode::kRequeue);
  AnaHoldsBothAndBobWaits();
  clock_.AdvanceMs(59'000);
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, second_, SIGTERM)) << "before the reclaim time";
  clock_.AdvanceMs(1'000);
  node_->Step();
  EXPECT_TRUE(Signalled(launcher_, second_, SIGTERM)) << "the youngest of ana's GPUs";
  EXPECT_FALSE(Signalled(launcher_, first_, SIGTERM)) << "one GPU: ana keeps her share";
  EXPECT_NE(node_->Get(bobs_)->detail.find("the fair share"), std::string::npos)
      << node_->Get(bobs_)->detail;
  node_->Step();  // normal's grace is 0: stopped
  launcher_.Finish(second_, Terminated());
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(bobs_), JobState::kRunning) << node_->Get(bobs_)->detail;
  // Requeued, not lost: it runs again beside ana's other slice, on the GPU she kept.
  int anas = node_->Get(first_)->allocations.at(0).device_index;
  EXPECT_EQ(node_->Get(bobs_)->allocations.at(0).device_index, 1 - anas);
  auto again = node_->Get(second_);
  EXPECT_EQ(again->state, JobState::kRunning);
  EXPECT_EQ(again->allocations.at(0).device_index, anas);
  EXPECT_EQ(launcher_.launches().size(), 4u) << "ana's two, bob's, and the requeued run";
  // Each holds their share now: nothing more is reclaimed however long it goes on.
  clock_.AdvanceMs(600'000);
  node_->Step();
  EXPECT_EQ(node_->MetricsView().sched.preemptions_total, 1);
}

TEST_F(ReclaimTest, NothingIsReclaimedFromAClassThatIsNeverPreempted) {
  Make(PreemptMode::kOff);
  AnaHoldsBothAndBobWaits();
  clock_.AdvanceMs(3'600'000);
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, first_, SIGTERM));
  EXPECT_FALSE(Signalled(launcher_, second_, SIGTERM));
  EXPECT_EQ(StateOf(bobs_), JobState::kPending);
  EXPECT_EQ(node_->MetricsView().sched.preemptions_total, 0);
}

}  // namespace
}  // namespace pinpoint::daemon
