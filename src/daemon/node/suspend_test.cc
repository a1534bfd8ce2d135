// Suspend (issue 56 item 4, docs/scheduling.md "Suspend"): root's suspend moves a job's device
// memory to host memory and stops it, its GPU goes to another job, and it resumes on the same GPU
// once that is free; a class whose preempt_mode is suspend is preempted so; what cannot be
// suspended is said, and a restart keeps a suspended job suspended.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "daemon/node/fake_checkpointer.h"
#include "daemon/service/node_fixture.h"

namespace pinpoint::daemon {
namespace {

class SuspendTest : public NodeTest {
 protected:
  // "normal" preempts "scavenger", whose jobs are suspended.
  static std::vector<ServiceClass> Classes() {
    std::vector<ServiceClass> classes = DefaultServiceClasses();
    for (ServiceClass& c : classes)
      if (c.name == "scavenger") c.preempt_mode = PreemptMode::kSuspend;
    return classes;
  }
  void SetUp() override {
    NodeTest::SetUp();
    node_.reset();
    checkpointer_ = &fake_;
    launcher_.SetJobProcesses({::getpid()});  // a real process: its start time is read
    launcher_.SetSignalsEndJobs(false);
    MakeNode(TwoGpus(SharingMode::kExclusive), Classes());
  }
  JobId SubmitIn(const std::string& qos) {
    JobRequest r = Request(1);
    r.qos = qos;
    return Submit(r);
  }
  Status SuspendOne(JobId id, uint32_t uid = 0) {
    api::Caller who = caller_;
    who.uid = uid;
    return node_->SuspendJobs(who, {id}).at(0);
  }
  Status ResumeOne(JobId id) { return node_->ResumeJobs(caller_, {id}).at(0); }
  SuspendPhase PhaseOf(JobId id) { return node_->Get(id)->suspend.phase; }
  bool HasEvent(JobId id, const std::string& kind) {
    auto events = store_->Events(id);
    return events.ok() && std::any_of(events->begin(), events->end(),
                                      [&](const store::JobEvent& e) { return e.kind == kind; });
  }
  int DeviceOf(JobId id) { return node_->Get(id)->allocations.at(0).device_index; }

  FakeCheckpointer fake_;
};

TEST_F(SuspendTest, RootsSuspendFreesTheGpuForAnotherAndTheJobResumesThereOnceFree) {
  caller_.uid = 0;
  JobId a = Submit(Request(1));
  JobId b = Submit(Request(1));
  node_->Step();
  JobId c = Submit(Request(1));
  node_->Step();
  ASSERT_EQ(StateOf(c), JobState::kPending);
  EXPECT_EQ(SuspendOne(a, 1000).code(), Code::kPermissionDenied) << "root's alone";
  ASSERT_TRUE(SuspendOne(a).ok());
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kSuspending);
  ASSERT_TRUE(fake_.Running(a));
  EXPECT_EQ(fake_.Named(a).at(0).pid, ::getpid());
  EXPECT_NE(fake_.Named(a).at(0).start_ticks, 0u) << "named with its start time";
  EXPECT_EQ(SuspendOne(a).code(), Code::kFailedPrecondition) << "once";
  node_->Step();
  EXPECT_EQ(StateOf(c), JobState::kPending) << "its GPU is held while its memory moves";
  fake_.Finish(a, true);
  node_->Step();
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kSuspended);
  EXPECT_TRUE(Signalled(launcher_, a, SIGSTOP)) << "its processes stopped once checkpointed";
  EXPECT_TRUE(HasEvent(a, "suspended"));
  node_->Step();
  ASSERT_EQ(StateOf(c), JobState::kRunning) << "the suspended job's GPU went to the next";
  EXPECT_EQ(DeviceOf(c), DeviceOf(a));
  // What root sees: the GPU is c's alone, and a's device memory is in the host's memory.
  GpusReply gpus = node_->GpusView();
  const DeviceView& shared = gpus.devices.at(static_cast<size_t>(DeviceOf(a)));
  ASSERT_EQ(shared.jobs.size(), 1u);
  EXPECT_EQ(shared.jobs[0].id, c);
  uint64_t held = node_->Get(a)->suspend.host_bytes;
  EXPECT_GT(held, 0u);
  EXPECT_EQ(gpus.host.mem_allocated_bytes, held) << "the jobs asked for no host memory";
  metrics::Snapshot metrics = node_->MetricsView();
  EXPECT_EQ(metrics.sched.suspended, 1);
  EXPECT_EQ(metrics.sched.suspended_host_bytes, held);
  EXPECT_EQ(metrics.devices.at(static_cast<size_t>(DeviceOf(a))).slices, 1);
  EXPECT_EQ(StateOf(a), JobState::kRunning) << "a suspended job is not requeued or ended";
  EXPECT_FALSE(Signalled(launcher_, a, SIGTERM));
  // Resumed by root: it waits for its own GPU, not any.
  ASSERT_TRUE(ResumeOne(a).ok());
  node_->Step();
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kSuspended) << "its GPU is c's";
  EXPECT_FALSE(fake_.Running(a));
  launcher_.Finish(c, Exited(0));
  node_->Step();
  node_->Step();
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kResuming);
  EXPECT_TRUE(Signalled(launcher_, a, SIGCONT)) << "running again before its restore";
  ASSERT_TRUE(fake_.Running(a));
  fake_.Finish(a, true);
  node_->Step();
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kNone);
  EXPECT_TRUE(HasEvent(a, "resumed"));
  EXPECT_EQ(StateOf(b), JobState::kRunning) << "b was never touched";
  EXPECT_FALSE(Signalled(launcher_, b, SIGSTOP));
}

TEST_F(SuspendTest, ASuspendedJobIsCancelledLikeAnyOtherAndLeavesItsGpuToItsNewHolder) {
  caller_.uid = 0;
  JobId a = Submit(Request(1));
  JobId b = Submit(Request(1));
  node_->Step();
  ASSERT_TRUE(SuspendOne(a).ok());
  fake_.Finish(a, true);
  node_->Step();
  JobId c = Submit(Request(1));
  node_->Step();
  ASSERT_EQ(StateOf(c), JobState::kRunning);
  ASSERT_TRUE(node_->Cancel(caller_, {a}).at(0).ok());
  EXPECT_TRUE(Signalled(launcher_, a, SIGTERM));
  EXPECT_TRUE(Signalled(launcher_, a, SIGCONT)) << "its stopped processes run to take the signal";
  launcher_.Finish(a, Terminated());
  node_->Step();
  EXPECT_EQ(StateOf(a), JobState::kCancelled);
  EXPECT_EQ(node_->Get(a)->suspend.phase, SuspendPhase::kNone);
  // Its end holds nothing of the GPU it left: b's device frees for the next job as before.
  launcher_.Finish(b, Exited(0));
  JobId d = Submit(Request(1));
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(d), JobState::kRunning);
  EXPECT_NE(DeviceOf(d), DeviceOf(c));
}

TEST_F(SuspendTest, WhatCannotBeSuspendedIsSaidAndNothingChanges) {
  caller_.uid = 0;
  JobId cpu = Submit(Request(0));
  JobId gpu = Submit(Request(1));
  JobId pending_one = Submit(Request(1));
  JobId pending_two = Submit(Request(1));
  node_->Step();
  auto refusal = [&](JobId id) { return SuspendOne(id).message(); };
  EXPECT_NE(refusal(cpu).find("holds no GPU"), std::string::npos) << refusal(cpu);
  EXPECT_NE(refusal(pending_two).find("is not running"), std::string::npos);
  EXPECT_EQ(SuspendOne(999).code(), Code::kNotFound);
  EXPECT_EQ(ResumeOne(gpu).code(), Code::kFailedPrecondition) << "not suspended";
  fake_.available_ = Unavailable("this node cannot suspend jobs: no pinpoint-checkpoint");
  EXPECT_NE(refusal(gpu).find("no pinpoint-checkpoint"), std::string::npos) << refusal(gpu);
  fake_.available_ = Status::Ok();
  EXPECT_TRUE(fake_.begun_.empty());
  EXPECT_EQ(PhaseOf(gpu), SuspendPhase::kNone);
  (void)pending_one;
  // An MPS client: the driver refuses to checkpoint it.
  node_.reset();
  MakeNode(TwoGpus(SharingMode::kMps), Classes());
  JobId slice = Submit(Request(1, 1ull << 30));
  node_->Step();
  ASSERT_EQ(StateOf(slice), JobState::kRunning);
  EXPECT_NE(refusal(slice).find("MPS client"), std::string::npos) << refusal(slice);
}

TEST_F(SuspendTest, ItsDeviceMemoryMustFitInHostMemory) {
  caller_.uid = 0;
  node_.reset();
  sched::Inventory inv = TwoGpus(SharingMode::kExclusive);
  inv.host.mem_bytes = 100ull << 30;  // the job's 80 GiB GPU fits once, with 30 GiB held by jobs
  MakeNode(inv, Classes());
  JobRequest big = Request(1);
  big.mem_bytes = 30ull << 30;
  JobId a = Submit(big);
  node_->Step();
  Status s = SuspendOne(a);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("host memory has no room"), std::string::npos) << s.message();
  EXPECT_TRUE(fake_.begun_.empty());
}

TEST_F(SuspendTest, AScavengerIsSuspendedForAnUrgentJobAndResumesByItselfAfterIt) {
  JobId old = SubmitIn("scavenger");
  JobId young = SubmitIn("scavenger");
  node_->Step();
  JobId urgent = SubmitIn("normal");
  node_->Step();
  ASSERT_TRUE(fake_.Running(young)) << "the youngest is suspended, not signalled";
  EXPECT_FALSE(Signalled(launcher_, young, SIGTERM)) << "no grace: its state is kept";
  EXPECT_FALSE(fake_.Running(old));
  EXPECT_EQ(node_->MetricsView().sched.preemptions_total, 1);
  fake_.Finish(young, true);
  node_->Step();
  node_->Step();
  ASSERT_EQ(StateOf(urgent), JobState::kRunning) << node_->Get(urgent)->detail;
  EXPECT_EQ(DeviceOf(urgent), DeviceOf(young));
  EXPECT_EQ(PhaseOf(young), SuspendPhase::kSuspended);
  launcher_.Finish(urgent, Exited(0));
  node_->Step();
  node_->Step();
  EXPECT_EQ(PhaseOf(young), SuspendPhase::kResuming) << "a preemption's suspend resumes by itself";
  fake_.Finish(young, true);
  node_->Step();
  EXPECT_EQ(PhaseOf(young), SuspendPhase::kNone);
  EXPECT_EQ(StateOf(young), JobState::kRunning);
}

TEST_F(SuspendTest, ASuspendThatFailsFallsBackToTheRequeueAndSaysWhy) {
  JobId a = SubmitIn("scavenger");
  JobId b = SubmitIn("scavenger");
  node_->Step();
  JobId urgent = SubmitIn("normal");
  node_->Step();
  ASSERT_TRUE(fake_.Running(b));
  fake_.Finish(b, false, "process 4242: lock refused");
  node_->Step();
  EXPECT_EQ(PhaseOf(b), SuspendPhase::kNone);
  EXPECT_TRUE(HasEvent(b, "suspend-failed"));
  EXPECT_TRUE(Signalled(launcher_, b, SIGTERM)) << "preempted by requeue instead";
  clock_.AdvanceMs(30'000);
  node_->Step();
  launcher_.Finish(b, Terminated());
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(b), JobState::kPending) << "requeued, not lost";
  auto events = store_->Events(b);
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(std::any_of(events->begin(), events->end(), [](const store::JobEvent& e) {
    return e.kind == "requeue" && e.detail.find("could not be suspended") != std::string::npos;
  })) << "its requeue says why it was not suspended";
  EXPECT_EQ(StateOf(urgent), JobState::kRunning);
  EXPECT_EQ(StateOf(a), JobState::kRunning);
}

TEST_F(SuspendTest, ASuspendCutShortByItsDeadlineIsUndoneAndTheJobRunsOn) {
  caller_.uid = 0;
  JobId a = Submit(Request(1));
  node_->Step();
  ASSERT_TRUE(SuspendOne(a).ok());
  fake_.Finish(a, false, "pinpoint-checkpoint did not end within 300 s", /*clean=*/false);
  node_->Step();
  EXPECT_TRUE(HasEvent(a, "suspend-failed"));
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kResuming) << "each process put back to running";
  ASSERT_TRUE(fake_.Running(a));
  EXPECT_EQ(fake_.begun_.back().second, Checkpointer::Action::kResume);
  EXPECT_TRUE(Signalled(launcher_, a, SIGCONT));
  fake_.Finish(a, true);
  node_->Step();
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kNone);
  EXPECT_EQ(StateOf(a), JobState::kRunning);
}

TEST_F(SuspendTest, ARestartKeepsASuspendedJobSuspendedAndUndoesOneUnderWay) {
  caller_.uid = 0;
  JobId kept = Submit(Request(1));
  JobId cut = Submit(Request(1));
  node_->Step();
  ASSERT_TRUE(SuspendOne(kept).ok());
  fake_.Finish(kept, true);
  node_->Step();
  ASSERT_EQ(PhaseOf(kept), SuspendPhase::kSuspended);
  ASSERT_TRUE(SuspendOne(cut).ok());  // pinpointd stops before it is made
  node_.reset();
  FakeCheckpointer after;
  checkpointer_ = &after;
  node_ = RestartedOn(launcher_);
  ASSERT_TRUE(node_->Recover().ok());
  node_->Step();
  EXPECT_EQ(PhaseOf(kept), SuspendPhase::kSuspended) << "still suspended, its GPU still free";
  EXPECT_FALSE(after.Running(kept)) << "not resumed by the restart";
  EXPECT_EQ(PhaseOf(cut), SuspendPhase::kResuming) << "the suspend under way is undone";
  ASSERT_TRUE(after.Running(cut));
  after.Finish(cut, true);
  node_->Step();
  EXPECT_EQ(PhaseOf(cut), SuspendPhase::kNone);
  EXPECT_EQ(StateOf(cut), JobState::kRunning);
}

// queue --start plays the node as the scheduler sees it: a suspended job's GPU is free now.
TEST_F(SuspendTest, AJobWaitingForASuspendedJobsGpuIsSaidToStartNow) {
  caller_.uid = 0;
  JobId a = Submit(Request(1));
  Submit(Request(1));
  node_->Step();
  ASSERT_TRUE(SuspendOne(a).ok());
  fake_.Finish(a, true);
  node_->Step();
  ASSERT_EQ(PhaseOf(a), SuspendPhase::kSuspended);
  JobId c = Submit(Request(1));
  ListQuery query;
  query.estimate_starts = true;
  auto page = node_->List(false, std::nullopt, 0, 100, {}, query);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->starts.size(), 1u);
  EXPECT_EQ(page->starts[0].id, c);
  EXPECT_EQ(page->starts[0].start_ms, clock_.NowMs()) << page->starts[0].why;
}

// Its time limit stands still while it is suspended, as Slurm's does: a job suspended for longer
// than the time it had left is not stopped while suspended nor at once when resumed, and a restart
// keeps what it was owed.
TEST_F(SuspendTest, TheTimeSpentSuspendedDoesNotCountAgainstTheTimeLimit) {
  caller_.uid = 0;
  JobRequest r = Request(1);
  r.time_limit_s = 60;
  JobId a = Submit(r);
  node_->Step();
  ASSERT_EQ(StateOf(a), JobState::kRunning);
  clock_.AdvanceMs(30'000);
  ASSERT_TRUE(SuspendOne(a).ok());
  fake_.Finish(a, true);
  node_->Step();
  ASSERT_EQ(PhaseOf(a), SuspendPhase::kSuspended);
  clock_.AdvanceMs(600'000);  // ten minutes suspended, with 30 s of its limit left
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, a, SIGTERM)) << "not stopped while suspended";
  ASSERT_TRUE(ResumeOne(a).ok());
  node_->Step();
  ASSERT_TRUE(fake_.Running(a));
  fake_.Finish(a, true);
  node_->Step();
  ASSERT_EQ(PhaseOf(a), SuspendPhase::kNone);
  EXPECT_EQ(node_->Get(a)->suspended_ms, 600'000);
  node_.reset();
  node_ = RestartedOn(launcher_);
  ASSERT_TRUE(node_->Recover().ok());
  EXPECT_EQ(node_->Get(a)->suspended_ms, 600'000) << "kept by the store";
  clock_.AdvanceMs(29'999);
  node_->Step();
  EXPECT_FALSE(Signalled(launcher_, a, SIGTERM)) << "one millisecond of its minute left";
  clock_.AdvanceMs(1);
  node_->Step();
  EXPECT_TRUE(Signalled(launcher_, a, SIGTERM));
  EXPECT_EQ(node_->Get(a)->stop_reason, Reason::kTimeLimit);
}

// A node without cgroups reads its processes a budget's worth per pass: a suspend whose job's
// processes are not all found at once lists them again each pass and checkpoints them once they
// are (a process left out would keep its device memory); its stop is sent again at each pass for
// a minute; one whose processes are still not all found after a minute is not made.
TEST_F(SuspendTest, ASuspendWaitsUntilAllOfTheJobsProcessesAreFound) {
  caller_.uid = 0;
  JobId a = Submit(Request(1));
  JobId b = Submit(Request(1));
  node_->Step();
  launcher_.SetIncompleteLooks(2);
  ASSERT_TRUE(SuspendOne(a).ok());
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kSuspending);
  EXPECT_FALSE(fake_.Running(a)) << "not checkpointed before its processes are all known";
  node_->Step();
  EXPECT_FALSE(fake_.Running(a));
  node_->Step();
  ASSERT_TRUE(fake_.Running(a)) << "checkpointed once they are";
  EXPECT_EQ(fake_.Named(a).at(0).pid, ::getpid());
  EXPECT_EQ(node_->Get(a)->suspend.pids, std::vector<int64_t>{::getpid()});
  launcher_.SetIncompleteLooks(1);  // its stop's first look misses some
  fake_.Finish(a, true);
  node_->Step();
  EXPECT_EQ(PhaseOf(a), SuspendPhase::kSuspended);
  auto stops = [&](JobId id) {
    return std::count(launcher_.signals().begin(), launcher_.signals().end(),
                      std::pair<JobId, int>{id, SIGSTOP});
  };
  const auto first = stops(a);
  EXPECT_GE(first, 1);
  node_->Step();
  EXPECT_EQ(stops(a), first + 1) << "sent again at the next pass";
  node_->Step();
  EXPECT_EQ(stops(a), first + 2)
      << "and at each pass for a minute (a process forked as it went out)";
  clock_.AdvanceMs(60'000);
  node_->Step();
  node_->Step();
  EXPECT_EQ(stops(a), first + 2) << "then no more";
  // Never all found: after a minute the suspend is not made, and b runs on as it was.
  launcher_.SetIncompleteLooks(1'000'000);
  ASSERT_TRUE(SuspendOne(b).ok());
  node_->Step();
  EXPECT_EQ(PhaseOf(b), SuspendPhase::kSuspending);
  clock_.AdvanceMs(60'000);
  node_->Step();
  EXPECT_EQ(PhaseOf(b), SuspendPhase::kNone);
  EXPECT_FALSE(fake_.Running(b));
  EXPECT_EQ(StateOf(b), JobState::kRunning);
  EXPECT_TRUE(HasEvent(b, "suspend-failed"));
  EXPECT_EQ(stops(b), 0);
  launcher_.SetIncompleteLooks(0);
}

}  // namespace
}  // namespace pinpoint::daemon
