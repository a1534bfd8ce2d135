// Node under MPS faults (job_runner.cc, docs/design.md "MPS faults"): who a fault touches, the
// suspects and victims, forged claims, an unresponsive daemon, a suspect kept alone.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "daemon/service/node_fixture.h"

namespace pinpoint::daemon {
namespace {

// A user's control daemon stopped answering (stopped, or wedged on a FIFO it writes): the MPS
// control killed it. That user's jobs on the device can no longer be served: they are stopped with
// reason mps-unresponsive (not left running for ever), and nothing else is touched.
TEST_F(NodeTest, AnUnresponsiveMpsDaemonStopsItsUsersJobsThereWithATruthfulReason) {
  JobId there = Submit(Request(1, 4ull << 30));
  JobRequest elsewhere_request = Request(1, 4ull << 30);
  elsewhere_request.devices = {1};
  JobId elsewhere = Submit(elsewhere_request);
  node_->Step();
  ASSERT_EQ(node_->Get(there)->allocations.at(0).device_index, 0);
  ASSERT_EQ(StateOf(elsewhere), JobState::kRunning);
  mps_.InjectUnresponsive(0, caller_.uid);
  node_->Step();
  ASSERT_EQ(launcher_.signals().size(), 1u);
  EXPECT_EQ(launcher_.signals()[0], (std::pair<JobId, int>{there, SIGTERM}));
  EXPECT_EQ(node_->Get(there)->stop_reason, Reason::kMpsUnresponsive);
  ExitStatus killed;
  killed.kind = ExitStatus::Kind::kSignaled;
  killed.term_signal = SIGTERM;
  launcher_.Finish(there, killed);
  node_->Step();
  JobRecord ended = *store_->Get(there);
  EXPECT_EQ(ended.state, JobState::kFailed);
  EXPECT_EQ(ended.reason, Reason::kMpsUnresponsive);
  EXPECT_NE(ended.detail.find("did not answer"), std::string::npos) << ended.detail;
  EXPECT_EQ(StateOf(elsewhere), JobState::kRunning) << "its job on another device is untouched";
}

TEST_F(NodeTest, FaultRequeuesVictimsWhichRerunAloneAndTheCulpritFails) {
  sched::Inventory packed = TwoGpus();  // the three share GPU 0
  packed.slice_placement = sched::SlicePlacement::kPack;
  MakeNode(packed);
  JobId a = Submit(Request(1, 4ull << 30));
  JobId b = Submit(Request(1, 4ull << 30));
  JobId culprit = Submit(Request(1, 4ull << 30));
  node_->Step();
  for (JobId id : {a, b, culprit}) ASSERT_EQ(node_->Get(id)->allocations.at(0).device_index, 0);
  mps_.InjectFault(0);
  node_->Step();
  JobId late = Submit(Request(1, 4ull << 30));
  node_->Step();
  EXPECT_EQ(node_->Get(late)->allocations.at(0).device_index, 1)
      << "a recovering device takes no job";
  for (JobId id : {a, b, culprit}) launcher_.Finish(id, Exited(2));  // every client got the error
  node_->Step();
  EXPECT_EQ(mps_.resets(), std::vector<int>{0}) << "fresh MPS server once the old clients are gone";
  for (JobId id : {a, b, culprit}) {
    auto job = store_->Get(id);
    EXPECT_NE(job->state, JobState::kFailed) << id;
    EXPECT_TRUE(job->fault_suspect);
    auto events = *store_->Events(id);
    bool requeued = false;
    for (const auto& e : events) requeued |= e.kind == "requeue";
    EXPECT_TRUE(requeued) << id;
  }
  launcher_.Finish(late, Exited(0));
  node_->Step();
  node_->Step();
  // Suspects rerun alone: at most one per device.
  std::map<int, int> per_device;
  for (JobId id : {a, b, culprit}) {
    auto job = *node_->Get(id);
    if (job.state == JobState::kRunning) ++per_device[job.allocations.at(0).device_index];
  }
  for (const auto& [device, count] : per_device) EXPECT_EQ(count, 1) << "device " << device;
  EXPECT_EQ(per_device.size(), 2u);
  // Run them to the end: the culprit faults again alone, the others complete.
  for (int round = 0; round < 3; ++round) {
    for (JobId id : {a, b, culprit}) {
      auto job = *node_->Get(id);
      if (job.state != JobState::kRunning) continue;
      if (id == culprit) {
        mps_.InjectFault(job.allocations.at(0).device_index);
        node_->Step();
        launcher_.Finish(id, Exited(2));
      } else {
        launcher_.Finish(id, Exited(0));
      }
    }
    node_->Step();
  }
  EXPECT_EQ(store_->Get(a)->state, JobState::kCompleted);
  EXPECT_EQ(store_->Get(b)->state, JobState::kCompleted);
  EXPECT_EQ(store_->Get(culprit)->state, JobState::kFailed);
  EXPECT_EQ(store_->Get(culprit)->reason, Reason::kGpuFault);
}

TEST_F(NodeTest, FaultPolicyFailEndsAffectedJobsAsGpuFault) {
  NodeOptions o = node_->options();
  o.inventory = node_->devices();
  o.watch.mps_fault_policy = MpsFaultPolicy::kFail;
  node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                             .launcher = &launcher_,
                                             .clock = &clock_,
                                             .sharing = mps_backends_.get()});
  JobId a = Submit(Request(1, 4ull << 30));
  JobId ok = Submit(Request(1, 4ull << 30));
  node_->Step();
  mps_.InjectFault(0);
  node_->Step();
  launcher_.Finish(a, Exited(2));
  launcher_.Finish(ok, Exited(0));  // finished its work before the error reached it
  node_->Step();
  EXPECT_EQ(store_->Get(a)->reason, Reason::kGpuFault);
  EXPECT_EQ(store_->Get(ok)->state, JobState::kCompleted);
}

// The MPS server log is written by the device's user: claims alone never drain a device (the
// drain needs the driver's Xid: node_watch_test.cc).
TEST_F(NodeTest, ForgedFaultClaimsNeverDrainTheDevice) {
  NodeOptions o = node_->options();
  o.inventory = node_->devices();
  o.watch.mps_fault_drain_after = 2;
  node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                             .launcher = &launcher_,
                                             .clock = &clock_,
                                             .sharing = mps_backends_.get()});
  for (int i = 0; i < 10; ++i) {
    mps_.InjectFault(0);
    node_->Step();
    clock_.AdvanceMs(1000);
  }
  clock_.AdvanceMs(60'000);
  node_->Step();
  EXPECT_FALSE(node_->GpusView().devices[0].drained);
  JobId id = Submit(Request(1, 4ull << 30));
  node_->Step();
  EXPECT_EQ(node_->Get(id)->allocations.at(0).device_index, 0);
}

// A claim from one user's MPS server never ends another user's job.
TEST_F(NodeTest, FaultClaimTouchesOnlyTheClaimingUsersJobs) {
  JobId mine = Submit(Request(1, 4ull << 30));
  node_->Step();
  ASSERT_EQ(node_->Get(mine)->allocations.at(0).device_index, 0);
  mps_.InjectFault(0, caller_.uid + 1);  // another user's server log claims a fault on device 0
  node_->Step();
  launcher_.Finish(mine, Exited(1));
  node_->Step();
  EXPECT_EQ(store_->Get(mine)->reason, Reason::kExitedNonZero) << "not a victim of the claim";
  EXPECT_FALSE(store_->Get(mine)->fault_suspect);
}

TEST_F(NodeTest, FaultOnAnotherDeviceLeavesJobsAlone) {
  JobId whole = Submit(Request(1));              // GPU 0, no MPS
  JobId slice = Submit(Request(1, 4ull << 30));  // GPU 1
  node_->Step();
  mps_.InjectFault(0);
  node_->Step();
  launcher_.Finish(slice, Exited(1));
  node_->Step();
  EXPECT_EQ(store_->Get(slice)->reason, Reason::kExitedNonZero) << "not a fault victim";
  EXPECT_EQ(store_->Get(whole)->state, JobState::kRunning);
}

TEST_F(NodeTest, RunningSuspectKeepsItsDeviceToItself) {
  MakeNode([] {
    auto inv = TwoGpus();
    inv.devices.resize(1);
    return inv;
  }());
  JobId a = Submit(Request(1, 4ull << 30));
  node_->Step();
  mps_.InjectFault(0);
  node_->Step();
  launcher_.Finish(a, Exited(2));
  node_->Step();  // requeued as a suspect and started again, alone
  ASSERT_EQ(node_->Get(a)->state, JobState::kRunning);
  ASSERT_TRUE(node_->Get(a)->fault_suspect);
  JobId b = Submit(Request(1, 4ull << 30));
  node_->Step();
  EXPECT_EQ(node_->Get(b)->state, JobState::kPending) << "nothing joins a suspect's rerun";
  launcher_.Finish(a, Exited(0));
  node_->Step();
  EXPECT_EQ(node_->Get(b)->state, JobState::kRunning);
}

}  // namespace
}  // namespace pinpoint::daemon
