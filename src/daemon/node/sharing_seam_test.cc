// The node uses a sharing mode only through its backend (sharing/backend.h): a backend with rules
// and behaviour of its own, registered for a mode, is what that mode's jobs get, with no change
// to the scheduler or the job table. The stand-in here plays a mode that enforces device memory
// another way (a variable the job's runtime obeys, released at the end): what docs/design.md's
// "Adding a sharing mode" describes.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "daemon/service/node_fixture.h"
#include "daemon/setup/sharing_setup.h"
#include "sharing/fake_backend.h"

namespace pinpoint::daemon {
namespace {

class SharingSeamTest : public NodeTest {
 protected:
  void SetUp() override {
    OpenStore();
    backends_ = MakeBackends(SharingSetup{.mps = &mps_});
    // Any users at once, at most two jobs a device: rules no built-in mode has.
    auto fake = std::make_unique<sharing::FakeBackend>(SharingMode::kTimeslice,
                                                       sharing::PlacementRules{.max_jobs = 2});
    fake_ = fake.get();
    backends_->Add(std::move(fake));
    sharing_ = backends_.get();
    MakeNode(TwoGpus(SharingMode::kTimeslice));
    caller_.uid = ::getuid();
    caller_.gid = ::getgid();
  }
  JobId SubmitSlice(uint64_t gpu_mem, std::map<std::string, std::string> env = {}) {
    JobRequest r = Request(1, gpu_mem);
    r.env = std::move(env);
    return Submit(std::move(r));
  }

  std::unique_ptr<sharing::Backends> backends_;
  sharing::FakeBackend* fake_ = nullptr;
};

TEST_F(SharingSeamTest, TheModesBackendPreparesEachJobAndItsVariablesAreItsOwn) {
  JobId id = SubmitSlice(3ull << 30, {{"FAKE_LIMIT_BYTES", "999999999999"}});
  node_->Step();
  ASSERT_EQ(node_->Get(id)->state, JobState::kRunning);
  ASSERT_EQ(fake_->prepared().size(), 1u);
  EXPECT_EQ(fake_->prepared()[0].job_id, static_cast<uint64_t>(id));
  EXPECT_EQ(node_->Get(id)->allocations.at(0).mode, SharingMode::kTimeslice);
  EXPECT_EQ(LaunchEnv(launcher_, 0).at("FAKE_LIMIT_BYTES"), std::to_string(3ull << 30))
      << "the job cannot choose its own limit";
  EXPECT_TRUE(mps_.prepared().empty()) << "no MPS on a device of another mode";
  launcher_.Finish(id, ExitStatus{});
  node_->Step();
  ASSERT_EQ(fake_->released().size(), 1u);
  EXPECT_EQ(fake_->released()[0].gpu_mem_bytes, 3ull << 30);
}

TEST_F(SharingSeamTest, TheSchedulerPlacesByTheBackendsRules) {
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(SubmitSlice(1ull << 30));
  node_->Step();
  int running = 0;
  for (JobId id : ids) running += node_->Get(id)->state == JobState::kRunning ? 1 : 0;
  EXPECT_EQ(running, 4) << "two jobs a device, two devices";
  EXPECT_EQ(node_->Get(ids[4])->reason, Reason::kResources);
}

TEST_F(SharingSeamTest, ANotYetFromTheBackendLeavesTheJobWaitingNotFailed) {
  fake_->Fail(FailedPrecondition("the server is starting"));
  JobId id = SubmitSlice(1ull << 30);
  node_->Step();
  EXPECT_EQ(node_->Get(id)->state, JobState::kPending);
  EXPECT_TRUE(launcher_.launches().empty());
  fake_->Fail(Status::Ok());
  fake_->Inject(sharing::Event{.kind = sharing::Event::Kind::kServerReady});
  node_->Step();
  EXPECT_EQ(node_->Get(id)->state, JobState::kRunning);
}

TEST_F(SharingSeamTest, ABackendThatCannotServeFailsTheJobWithItsReason) {
  fake_->Fail(Unavailable("no memory limits on this driver"));
  JobId id = SubmitSlice(1ull << 30);
  node_->Step();
  auto job = node_->Get(id);
  EXPECT_EQ(job->state, JobState::kFailed);
  EXPECT_NE(job->detail.find("no memory limits on this driver"), std::string::npos) << job->detail;
}

TEST_F(SharingSeamTest, CancelWaitsForTheBackendToLetGoBeforeAnySignal) {
  launcher_.SetSignalsEndJobs(false);
  fake_->HoldStops(true);
  JobId id = SubmitSlice(1ull << 30);
  node_->Step();
  ASSERT_TRUE(node_->Cancel(caller_, {id})[0].ok());
  ASSERT_EQ(fake_->stopped().size(), 1u);
  EXPECT_TRUE(launcher_.signals().empty());
  fake_->FinishStops();
  node_->Step();
  ASSERT_EQ(launcher_.signals().size(), 1u);
  EXPECT_EQ(launcher_.signals()[0].second, SIGTERM);
}

TEST_F(SharingSeamTest, AFaultTheBackendReportsTouchesOnlyItsModesJobsOfThatUser) {
  JobId id = SubmitSlice(1ull << 30);
  node_->Step();
  int device = node_->Get(id)->allocations.at(0).device_index;
  // The same device and user, reported by another backend: not this job's mode.
  mps_.InjectUnresponsive(device, caller_.uid);
  node_->Step();
  EXPECT_TRUE(launcher_.signals().empty());
  fake_->Inject(sharing::Event{.device_index = device,
                               .kind = sharing::Event::Kind::kServerUnresponsive,
                               .uid = caller_.uid + 1,
                               .detail = "another user's server"});
  node_->Step();
  EXPECT_TRUE(launcher_.signals().empty()) << "another user's claim";
  fake_->Inject(sharing::Event{.device_index = device,
                               .kind = sharing::Event::Kind::kServerUnresponsive,
                               .uid = caller_.uid,
                               .detail = "did not answer"});
  node_->Step();
  ASSERT_EQ(launcher_.signals().size(), 1u);
  EXPECT_EQ(node_->Get(id)->stop_reason, Reason::kMpsUnresponsive);
}

TEST_F(SharingSeamTest, ARestartedNodeAdoptsRunningJobsThroughTheirBackend) {
  JobId id = SubmitSlice(2ull << 30);
  node_->Step();
  ASSERT_EQ(node_->Get(id)->state, JobState::kRunning);
  node_.reset();
  MakeNode(TwoGpus(SharingMode::kTimeslice));
  ASSERT_TRUE(node_->Recover().ok());
  ASSERT_EQ(fake_->adopted().size(), 1u);
  EXPECT_EQ(fake_->adopted()[0].gpu_mem_bytes, 2ull << 30);
}

}  // namespace
}  // namespace pinpoint::daemon
