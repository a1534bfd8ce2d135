// FaultRecovery (fault_recovery.h) alone: whom a claim may touch, when a device is reset, and
// drains with their reason. Node's side (victims requeued, suspects) is node_faults_test.cc.
#include "daemon/node/fault_recovery.h"

#include <gtest/gtest.h>

#include "common/test_dir.h"
#include "daemon/setup/sharing_setup.h"
#include "mps/fake_mps.h"
#include "sched/sched_test_util.h"

namespace pinpoint::daemon {
namespace {

class FaultRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::JobStore::Open(dir_.path() + "/pinpoint.db")).value();
    jobs_ = std::make_unique<JobTable>(store_.get(), nullptr);
    faults_ = std::make_unique<FaultRecovery>(/*drain_after=*/2, store_.get());
  }
  // A running job of `uid` stored and in the table, held on `device` in `mode`.
  JobId Running(uint32_t uid, int device, SharingMode mode = SharingMode::kMps) {
    JobRecord r;
    r.uid = uid;
    r.state = JobState::kRunning;
    r.allocations = {
        Allocation{.device_index = device, .uuid = "GPU-" + std::to_string(device), .mode = mode}};
    r.id = store_->Insert(r).value();
    jobs_->Add(r);
    return r.id;
  }
  static sharing::Event Fault(int device, uint32_t uid) {
    return sharing::Event{.mode = SharingMode::kMps,
                          .device_index = device,
                          .kind = sharing::Event::Kind::kFault,
                          .uid = uid};
  }

  TestDir dir_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<JobTable> jobs_;
  mps::FakeMps mps_;
  std::unique_ptr<sharing::Backends> sharing_ = MakeBackends(SharingSetup{.mps = &mps_});
  std::unique_ptr<FaultRecovery> faults_;
};

TEST_F(FaultRecoveryTest, AClaimTouchesItsUsersJobsOnItsDeviceOnlyAndTheLastToLeaveResetsIt) {
  JobId a = Running(1000, 0), b = Running(1000, 0);
  JobId other_user = Running(2000, 0), other_device = Running(1000, 1);
  JobId exclusive = Running(1000, 0, SharingMode::kExclusive);
  faults_->Claim(Fault(0, 1000), *jobs_, *sharing_, 5);
  EXPECT_TRUE(faults_->Recovering(0));
  EXPECT_EQ(faults_->RecoveringDevices(), std::vector<int>{0});
  EXPECT_EQ(store_->Events(a)->back().kind, "mps-fault");
  for (JobId id : {other_user, other_device, exclusive}) {
    EXPECT_FALSE(faults_->Leave(jobs_->at(id), *sharing_)) << "not hit: " << id;
  }
  EXPECT_TRUE(faults_->Leave(jobs_->at(a), *sharing_));
  EXPECT_TRUE(mps_.resets().empty()) << "b still runs there";
  EXPECT_FALSE(faults_->Leave(jobs_->at(a), *sharing_)) << "once";
  EXPECT_TRUE(faults_->Leave(jobs_->at(b), *sharing_));
  EXPECT_EQ(mps_.resets(), std::vector<int>{0});
  EXPECT_FALSE(faults_->Recovering(0));
}

TEST_F(FaultRecoveryTest, AClaimThatTouchesNoJobResetsTheDeviceAtOnce) {
  Running(2000, 0);
  faults_->Claim(Fault(0, 1000), *jobs_, *sharing_, 5);
  EXPECT_FALSE(faults_->Recovering(0));
  EXPECT_EQ(mps_.resets(), std::vector<int>{0});
}

TEST_F(FaultRecoveryTest, OnlyClaimsTheDriverConfirmsDrainADeviceAndTheReasonIsKept) {
  std::vector<sched::Device> devices = {sched::testing::Gpu(80), sched::testing::Gpu(80)};
  faults_->Claim(Fault(1, 1000), *jobs_, *sharing_, 1'000);  // never confirmed
  faults_->Claim(Fault(0, 1000), *jobs_, *sharing_, 1'000);
  faults_->Xid(0, 1'500);
  EXPECT_FALSE(faults_->Evaluate(devices, 2'000)) << "one counted fault of two";
  faults_->Claim(Fault(0, 1000), *jobs_, *sharing_, 60'000);
  faults_->Xid(0, 60'100);
  EXPECT_TRUE(faults_->Evaluate(devices, 120'000));
  EXPECT_TRUE(devices[0].drained);
  EXPECT_FALSE(devices[1].drained) << "claims alone never count";
  EXPECT_EQ(faults_->DrainReason(0), "2 MPS faults confirmed by the driver within an hour");
  EXPECT_EQ(faults_->DrainReason(1), "");
  EXPECT_FALSE(faults_->Evaluate(devices, 130'000)) << "drained once";
}

}  // namespace
}  // namespace pinpoint::daemon
