// MigDynamic (mig_dynamic.h) over the simulated a100x8-mig node, whose GPU 0 is mig-dynamic here:
// 2g.20gb at memory slices 0 and 2 (GPU instances 2, 3), 3g.40gb at 4 (GPU instance 1).
#include "daemon/mig/mig_dynamic.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "daemon/setup/inventory_builder.h"
#include "daemon/setup/mig_setup.h"
#include "gpu/simulated_backend.h"

namespace pinpoint::daemon {
namespace {

constexpr uint64_t kSliceGiB = uint64_t{1} << 30;

class MigDynamicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = std::move(gpu::SimulatedBackend::FromPreset("a100x8-mig")).value();
    config_.gpu_modes["0"] = GpuMode::MigDynamic();
    config_.mig_min_idle_s = 60;
    config_.mig_min_lifetime_s = 300;
    std::string dir = ::testing::TempDir() + "pinpoint_mig_XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    mig_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // What the daemon does at start, at `now_ms`, over the store in dir_ (and `backend`, when given,
  // for the reconfiguration thread).
  void Start(int64_t now_ms, gpu::GpuBackend* backend = nullptr) {
    mig_.reset();
    store_ = std::move(store::JobStore::Open(dir_ + "/pinpoint.db")).value();
    auto gpus = backend_->Inventory();
    ASSERT_TRUE(gpus.ok());
    auto profiles = MigDynamicProfiles(*backend_, *gpus, config_);
    ASSERT_TRUE(profiles.ok()) << profiles.status().ToString();
    auto inv = BuildInventory(*gpus, config_, *profiles);
    ASSERT_TRUE(inv.ok()) << inv.status().ToString();
    inv_ = *inv;
    gpu::GpuBackend& thread_backend = backend != nullptr ? *backend : *backend_;
    auto setup =
        StartMigDynamic(thread_backend, *gpus, *profiles, config_, store_.get(), inv_, now_ms);
    ASSERT_TRUE(setup.ok()) << setup.status().ToString();
    ASSERT_NE(setup->mig, nullptr);
    mig_ = std::move(setup->mig);
  }

  // Waits for the reconfiguration thread (its eventfd, not a sleep), then takes its outcome.
  bool Finish(int64_t now_ms) {
    int fd = mig_->WaitFd();
    if (fd < 0) return false;
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 60'000), 1) << "the thread never finished";
    return mig_->Poll(inv_, now_ms);
  }

  const sched::Device& Slot(int start) const {
    for (const sched::Device& d : inv_.devices)
      if (d.gpu_index == 0 && d.partition.start == start) return d;
    static sched::Device none;
    ADD_FAILURE() << "no slot " << start;
    return none;
  }
  std::vector<gpu::MigInfo> Migs() { return backend_->Inventory().value()[0].migs; }

  std::unique_ptr<gpu::SimulatedBackend> backend_;
  Config config_;
  std::string dir_;
  std::unique_ptr<store::JobStore> store_;
  sched::Inventory inv_;
  std::unique_ptr<MigDynamic> mig_;
};

TEST_F(MigDynamicTest, AStartAdoptsTheLayoutItFindsAndMakesNothing) {
  Start(1000);
  EXPECT_FALSE(Slot(0).partition.vacant);
  EXPECT_FALSE(Slot(2).partition.vacant);
  EXPECT_FALSE(Slot(4).partition.vacant);
  for (int vacant : {1, 3, 5, 6}) EXPECT_TRUE(Slot(vacant).partition.vacant) << vacant;
  EXPECT_EQ(Slot(4).name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  // A slice an idle instance serves needs nothing made.
  EXPECT_TRUE(mig_->Plan(inv_, {{7, 30 * kSliceGiB}}, {}, 1000).empty());
  EXPECT_EQ(mig_->WaitFd(), -1) << "no reconfiguration";
  EXPECT_EQ(Migs().size(), 3u);
}

TEST_F(MigDynamicTest, AWaitingSliceGetsAnInstanceMadeOffTheLoop) {
  ASSERT_TRUE(backend_->DestroyMigInstance(0, 3).ok());  // slices 2-3 free
  Start(1000);
  ASSERT_TRUE(Slot(2).partition.vacant);
  EXPECT_TRUE(mig_->Plan(inv_, {{7, 5 * kSliceGiB}}, {{Slot(0).index, 1}, {Slot(4).index, 1}}, 1000)
                  .empty());
  ASSERT_GE(mig_->WaitFd(), 0) << "a reconfiguration runs";
  EXPECT_TRUE(mig_->Plan(inv_, {{8, 5 * kSliceGiB}}, {}, 1000).empty()) << "one at a time";
  ASSERT_TRUE(Finish(1500));
  EXPECT_EQ(mig_->WaitFd(), -1);
  EXPECT_FALSE(Slot(2).partition.vacant);
  EXPECT_EQ(Slot(2).name, "NVIDIA A100-SXM4-80GB MIG 1g.10gb");
  EXPECT_EQ(Migs().size(), 3u);
  ASSERT_EQ(mig_->recent().size(), 1u);
  const store::MigChange& made = mig_->recent().back();
  EXPECT_EQ(made.action, partition::MigAction::kCreate);
  EXPECT_EQ(made.profile, "1g.10gb");
  EXPECT_EQ(made.start, 2);
  EXPECT_EQ(made.for_job, 7);
  EXPECT_EQ(made.result, "ok");
  EXPECT_EQ(made.uuid, Slot(2).uuid);
  EXPECT_EQ(mig_->made().at(partition::MigAction::kCreate), 1);
  auto stored = store_->RecentMigChanges(10);
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ(stored->front(), made);
}

// A 70 GiB slice needs the whole GPU as one 7g.80gb. The planner drains the GPU for it: the idle
// instances past their minimums go at once, the busy 2g.20gb is never destroyed, and once its job
// has left it goes too, 60 s later (the minimum idle time); then the 7g.80gb is made.
TEST_F(MigDynamicTest, OnlyIdleInstancesPastTheirMinimumsAreDestroyed) {
  Start(0);
  std::vector<sched::mig::Want> big = {{9, 70 * kSliceGiB}};
  int busy = Slot(0).index;
  std::vector<int> drained = mig_->Plan(inv_, big, {{busy, 1}}, 400'000);
  std::sort(drained.begin(), drained.end());
  EXPECT_EQ(drained, (std::vector<int>{Slot(2).index, Slot(4).index}));
  for (int start : {2, 4})
    EXPECT_TRUE(Slot(start).partition.vacant) << "no job is placed on an instance about to go";
  ASSERT_TRUE(Finish(400'000));
  ASSERT_EQ(Migs().size(), 1u) << "a job runs on the 2g.20gb at slice 0";
  EXPECT_FALSE(Slot(0).partition.vacant);
  EXPECT_TRUE(mig_->Plan(inv_, big, {}, 400'010).empty());
  EXPECT_EQ(mig_->WaitFd(), -1) << "its job left just now: not idle for 60 s";
  EXPECT_EQ(mig_->DueMs(), 460'000) << "a pass is due when it has been";
  EXPECT_FALSE(mig_->TakeDue(459'999));
  EXPECT_TRUE(mig_->TakeDue(460'000));
  EXPECT_FALSE(mig_->TakeDue(460'001)) << "once";
  EXPECT_EQ(mig_->Plan(inv_, big, {}, 460'010), std::vector<int>{busy});
  ASSERT_TRUE(Finish(460'500));
  EXPECT_FALSE(Slot(0).partition.vacant);
  EXPECT_EQ(Slot(0).name, "NVIDIA A100-SXM4-80GB MIG 7g.80gb");
  for (int start : {1, 2, 3, 4, 5, 6}) EXPECT_TRUE(Slot(start).partition.vacant) << start;
  ASSERT_EQ(Migs().size(), 1u);
  EXPECT_EQ(Migs()[0].profile, "7g.80gb");
  EXPECT_EQ(mig_->made().at(partition::MigAction::kDestroy), 3);
  EXPECT_EQ(mig_->made().at(partition::MigAction::kCreate), 1);
  for (const store::MigChange& c : mig_->recent())
    EXPECT_EQ(c.for_job, 9) << partition::MigActionName(c.action)
                            << ": each change says whom it serves";
}

TEST_F(MigDynamicTest, AFailedCreateIsRecordedAndTriedAgainLater) {
  ASSERT_TRUE(backend_->DestroyMigInstance(0, 3).ok());
  Start(1000);
  backend_->FailCreatesHalfWay(1);
  mig_->Plan(inv_, {{7, 5 * kSliceGiB}}, {{Slot(0).index, 1}, {Slot(4).index, 1}}, 1000);
  ASSERT_TRUE(Finish(2000));
  EXPECT_TRUE(Slot(2).partition.vacant);
  EXPECT_EQ(mig_->failed().at(partition::MigAction::kCreate), 1);
  EXPECT_NE(mig_->recent().back().result.find("failed (simulated)"), std::string::npos)
      << mig_->recent().back().result;
  EXPECT_EQ(mig_->DueMs(), 32'000) << "retried 30 s later";
  mig_->Plan(inv_, {{7, 5 * kSliceGiB}}, {}, 3000);
  EXPECT_EQ(mig_->WaitFd(), -1) << "not before";
  mig_->Plan(inv_, {{7, 5 * kSliceGiB}}, {{Slot(0).index, 1}, {Slot(4).index, 1}}, 32'000);
  ASSERT_TRUE(Finish(32'100));
  EXPECT_FALSE(Slot(2).partition.vacant);
  EXPECT_EQ(mig_->made().at(partition::MigAction::kCreate), 1);
}

// After a restart an instance pinpoint made keeps its age from the store: it is not destroyed
// before its minimum lifetime has passed since its create.
TEST_F(MigDynamicTest, ARestartKeepsEachInstancesLifetime) {
  ASSERT_TRUE(backend_->DestroyMigInstance(0, 3).ok());
  Start(1000);
  mig_->Plan(inv_, {{7, 5 * kSliceGiB}}, {{Slot(0).index, 1}, {Slot(4).index, 1}}, 1000);
  ASSERT_TRUE(Finish(1000));
  ASSERT_FALSE(Slot(2).partition.vacant);
  std::string made = Slot(2).uuid;

  Start(200'000);  // the daemon restarts: the 1g.10gb it made at 1000 is there
  EXPECT_EQ(Slot(2).uuid, made) << "adopted, not made again";
  // A 15 GiB slice needs a 2g.20gb at slice 2: the 1g.10gb's room. Idle since the restart,
  // made at 1000: destroyable from max(200'000 + 60'000, 1000 + 300'000).
  std::vector<sched::mig::Want> want = {{8, 15 * kSliceGiB}};
  std::map<int, int> others_busy = {{Slot(0).index, 1}, {Slot(4).index, 1}};
  EXPECT_TRUE(mig_->Plan(inv_, want, others_busy, 299'000).empty());
  EXPECT_EQ(mig_->WaitFd(), -1);
  EXPECT_EQ(mig_->DueMs(), 301'000);
  EXPECT_EQ(mig_->Plan(inv_, want, others_busy, 301'000), std::vector<int>{Slot(2).index});
  ASSERT_TRUE(Finish(301'000));
  EXPECT_FALSE(Slot(2).partition.vacant);
  EXPECT_GE(Slot(2).mem_bytes, 15 * kSliceGiB) << Slot(2).name;
}

// The simulated node, except that each create waits until the test opens the gate: a driver call
// that does not answer.
class GatedBackend : public gpu::GpuBackend {
 public:
  explicit GatedBackend(gpu::SimulatedBackend* node) : node_(node) {}
  Source source() const override { return Source::kSimulated; }
  std::string Kind() const override { return "simulated:gated"; }
  std::string DriverVersion() const override { return "simulated"; }
  Result<std::vector<gpu::GpuInfo>> Inventory() override { return node_->Inventory(); }
  Result<gpu::GpuSample> Sample(int index) override { return node_->Sample(index); }
  Result<gpu::MigInfo> CreateMigInstance(int index, const std::string& profile,
                                         int start) override {
    std::unique_lock<std::mutex> lock(mu_);
    // A deadline, as every wait of a test: a gate never opened fails the create, not the run.
    if (!opened_.wait_for(lock, std::chrono::seconds(60), [&] { return open_; }))
      return Unavailable("the test never opened the gate");
    return node_->CreateMigInstance(index, profile, start);
  }
  Status DestroyMigInstance(int index, uint32_t id) override {
    return node_->DestroyMigInstance(index, id);
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    opened_.notify_all();
  }

 private:
  gpu::SimulatedBackend* node_;
  std::mutex mu_;
  std::condition_variable opened_;
  bool open_ = false;
};

// The loop never waits on the driver: while a create does not answer, Poll returns at once (past
// the deadline it says so, once), no other reconfiguration starts, and the slot stays vacant.
TEST_F(MigDynamicTest, ADriverThatDoesNotAnswerNeverHoldsTheLoop) {
  ASSERT_TRUE(backend_->DestroyMigInstance(0, 3).ok());
  GatedBackend gated(backend_.get());
  Start(1000, &gated);
  mig_->Plan(inv_, {{7, 5 * kSliceGiB}}, {{Slot(0).index, 1}, {Slot(4).index, 1}}, 1000);
  ASSERT_GE(mig_->WaitFd(), 0);
  EXPECT_FALSE(mig_->Poll(inv_, 2000));
  EXPECT_FALSE(mig_->overdue());
  EXPECT_FALSE(mig_->Poll(inv_, 1000 + 121'000)) << "the deadline passed: Poll still returns";
  EXPECT_TRUE(mig_->overdue());
  EXPECT_TRUE(Slot(2).partition.vacant);
  EXPECT_TRUE(mig_->Plan(inv_, {{8, 5 * kSliceGiB}}, {}, 200'000).empty()) << "nothing else starts";
  gated.Open();
  ASSERT_TRUE(Finish(200'000));
  EXPECT_FALSE(mig_->overdue());
  EXPECT_FALSE(Slot(2).partition.vacant);
}

// Only one-device slices waiting for room are planned for, a bounded number a pass.
TEST(MigWantsTest, OneDeviceSlicesWaitingForRoomInPassOrderAndBounded) {
  sched::Snapshot snap;
  sched::Plan plan;
  auto demand = [&](JobId id, int gpus, uint64_t mem, Reason reason) {
    sched::Demand d;
    d.id = id;
    d.gpus = gpus;
    d.gpu_mem_bytes = mem;
    snap.pending.push_back(d);
    sched::Wait wait;
    wait.id = id;
    wait.reason = reason;
    plan.waits.push_back(wait);
  };
  demand(5, 1, kSliceGiB, Reason::kMpsUser);
  demand(3, 1, kSliceGiB, Reason::kResources);
  demand(4, 1, 0, Reason::kResources);          // a whole GPU: never a MIG instance
  demand(6, 2, kSliceGiB, Reason::kResources);  // two devices: not made room for
  demand(7, 1, kSliceGiB, Reason::kHeld);       // waits for something else
  demand(8, 1, kSliceGiB, Reason::kReservation);
  std::vector<sched::mig::Want> wants = MigWants(snap, plan);
  ASSERT_EQ(wants.size(), 3u);
  EXPECT_EQ(wants[0].id, 5);
  EXPECT_EQ(wants[1].id, 3);
  EXPECT_EQ(wants[2].id, 8);
  for (JobId id = 100; id < 100 + 2 * static_cast<JobId>(kMigWantsPerPass); ++id)
    demand(id, 1, kSliceGiB, Reason::kResources);
  EXPECT_EQ(MigWants(snap, plan).size(), kMigWantsPerPass);
}

}  // namespace
}  // namespace pinpoint::daemon
