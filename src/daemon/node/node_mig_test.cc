// A node with a GPU in mig-dynamic mode (mig_dynamic.h): a slice no instance has room for gets
// one made off the loop, then starts on it under the instance's own MPS. The simulated a100x8-mig
// node's GPU 0 (its only GPU here) starts as 2g.20gb at memory slice 0 and 3g.40gb at 4 (its
// 2g.20gb at 2 destroyed).
#include <poll.h>

#include <algorithm>

#include "daemon/node/fake_checkpointer.h"
#include "daemon/service/node_fixture.h"
#include "daemon/setup/inventory_builder.h"
#include "daemon/setup/mig_setup.h"
#include "gpu/simulated_backend.h"

namespace pinpoint::daemon {
namespace {

constexpr uint64_t kNodeMigGiB = uint64_t{1} << 30;

class NodeMigTest : public NodeTest {
 protected:
  void SetUp() override {
    NodeTest::SetUp();
    backend_ = std::move(gpu::SimulatedBackend::FromPreset("a100x8-mig")).value();
    ASSERT_TRUE(backend_->DestroyMigInstance(0, 3).ok());
    Build(launcher_);
  }
  // The daemon's start over the backend as it is now, finding its jobs in `launcher`.
  void Build(launch::FakeLauncher& launcher, int64_t min_idle_s = 60, int64_t min_lifetime_s = 300,
             bool mig_requests = true, const std::string& default_mode = "mps") {
    node_.reset();
    mig_.reset();
    Config config;
    config.default_mode = default_mode;
    config.gpu_modes["0"] = GpuMode::MigDynamic();
    config.host_cpus = 64;
    config.host_mem_bytes = 256 * kNodeMigGiB;
    config.mig_min_idle_s = min_idle_s;
    config.mig_min_lifetime_s = min_lifetime_s;
    auto gpus = backend_->Inventory();
    ASSERT_TRUE(gpus.ok());
    auto profiles = MigDynamicProfiles(*backend_, *gpus, config);
    ASSERT_TRUE(profiles.ok());
    auto inv = BuildInventory(*gpus, config, *profiles);
    ASSERT_TRUE(inv.ok()) << inv.status().ToString();
    sched::Inventory inventory = *inv;
    // GPU 0's slots only (indices 0-6): the node's other GPUs would take the slices whole.
    std::erase_if(inventory.devices, [](const sched::Device& d) { return d.gpu_index != 0; });
    auto setup = StartMigDynamic(*backend_, *gpus, *profiles, config, store_.get(), inventory,
                                 clock_.NowMs());
    ASSERT_TRUE(setup.ok()) << setup.status().ToString();
    mig_ = std::move(setup->mig);
    NodeOptions o;
    o.identity.state_dir = dir_;
    o.inventory = inventory;
    o.identity.backend_kind = "simulated:a100x8-mig";
    o.identity.simulated = true;
    o.identity.daemon_uid = ::getuid();
    o.admission.mig_requests = mig_requests;
    if (!classes_.empty()) o.admission.qos = classes_;
    node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                               .launcher = &launcher,
                                               .clock = &clock_,
                                               .sharing = mps_backends_.get(),
                                               .mig = mig_.get(),
                                               .checkpointer = checkpointer_});
  }
  std::vector<ServiceClass> classes_;  // empty: the default classes
  void TearDown() override {
    node_.reset();
    mig_.reset();
    NodeTest::TearDown();
  }
  // Steps until the reconfiguration in flight is done: waits on the node's descriptors (the
  // reconfiguration's eventfd among them), never sleeps.
  void StepPastReconfiguration() {
    for (int round = 0; round < 100 && mig_->WaitFd() >= 0; ++round) {
      std::vector<pollfd> fds;
      for (int fd : node_->WaitFds()) fds.push_back({fd, POLLIN, 0});
      ASSERT_GT(::poll(fds.data(), fds.size(), 60'000), 0);
      node_->Step();
    }
    ASSERT_EQ(mig_->WaitFd(), -1);
    node_->Step();
  }
  std::string DeviceUuidOf(JobId id) {
    auto job = node_->Get(id);
    return job.ok() && !job->allocations.empty() ? job->allocations[0].uuid : "";
  }

  std::unique_ptr<gpu::SimulatedBackend> backend_;
  std::unique_ptr<MigDynamic> mig_;
};

TEST_F(NodeMigTest, ASliceWithoutRoomGetsAnInstanceMadeAndStartsOnIt) {
  JobId a = Submit(Request(1, 15 * kNodeMigGiB));  // best fit: the 2g.20gb, not the 3g.40gb
  JobId b = Submit(Request(1, 30 * kNodeMigGiB));  // so the 3g.40gb still holds this one
  node_->Step();
  ASSERT_EQ(StateOf(a), JobState::kRunning);
  ASSERT_EQ(StateOf(b), JobState::kRunning);
  std::vector<gpu::MigInfo> before = backend_->Inventory().value()[0].migs;
  EXPECT_EQ(before.size(), 2u) << "served by the instances there: nothing made";

  JobId c = Submit(Request(1, 15 * kNodeMigGiB));  // no instance has 15 GiB left
  node_->Step();
  EXPECT_EQ(StateOf(c), JobState::kPending);
  EXPECT_GE(mig_->WaitFd(), 0) << "an instance is being made for it";
  StepPastReconfiguration();
  ASSERT_EQ(StateOf(c), JobState::kRunning);
  std::vector<gpu::MigInfo> after = backend_->Inventory().value()[0].migs;
  ASSERT_EQ(after.size(), 3u);
  std::string made = DeviceUuidOf(c);
  bool is_new = true;
  for (const gpu::MigInfo& m : before) is_new = is_new && m.uuid != made;
  EXPECT_TRUE(is_new) << made;
  EXPECT_EQ(EnvOf(launcher_.launches().size() - 1)["CUDA_VISIBLE_DEVICES"], made);
  ASSERT_FALSE(mig_->recent().empty());
  EXPECT_EQ(mig_->recent().back().for_job, c);
  // Every instance now runs a job: none is destroyed while they run.
  JobId d = Submit(Request(1, 70 * kNodeMigGiB));
  node_->Step();
  EXPECT_EQ(StateOf(d), JobState::kPending);
  EXPECT_EQ(backend_->Inventory().value()[0].migs.size(), 3u);
  EXPECT_EQ(mig_->WaitFd(), -1);
}

// Attack: one user kept the small instances busy with short jobs, and another user's large slice,
// queued first, waited for ever (each freed instance went to the next small job before it could
// be idle long enough to go). The placement drained for the large slice takes no new job once the
// drain has held for mig_drain_after_s (60 s here): the small ones then wait, its instances empty
// and go, and the large slice runs.
TEST_F(NodeMigTest, ALargeSliceIsNotStarvedBySmallJobsOnItsPlacement) {
  JobId a = Submit(Request(1, 15 * kNodeMigGiB));  // the 2g.20gb at 0
  JobId b = Submit(Request(1, 30 * kNodeMigGiB));  // the 3g.40gb at 4
  node_->Step();
  ASSERT_EQ(StateOf(a), JobState::kRunning);
  ASSERT_EQ(StateOf(b), JobState::kRunning);
  JobId large = Submit(Request(1, 70 * kNodeMigGiB));  // a 7g.80gb: the whole GPU, drained for
  node_->Step();
  ASSERT_EQ(StateOf(large), JobState::kPending);
  launcher_.Finish(a, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  JobId early = Submit(Request(1, 15 * kNodeMigGiB));
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(early), JobState::kRunning)
      << "within mig_drain_after_s the small ones still go";
  clock_.AdvanceMs(61'000);
  launcher_.Finish(early, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  JobId late = Submit(Request(1, 15 * kNodeMigGiB));
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(late), JobState::kPending) << "the drained placement takes no new job";
  launcher_.Finish(b, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  node_->Step();
  clock_.AdvanceMs(301'000);  // past both minimums: the idle instances may go
  node_->Step();
  StepPastReconfiguration();
  EXPECT_EQ(StateOf(large), JobState::kRunning) << "not starved";
}

// Once the drain has held, the jobs on the drained placement whose class may be preempted are
// preempted for the slice it drains for (the others still end by themselves).
TEST_F(NodeMigTest, AHeldDrainPreemptsThePreemptibleJobsOnItsPlacement) {
  launcher_.SetSignalsEndJobs(false);
  JobRequest small = Request(1, 15 * kNodeMigGiB);  // the 2g.20gb at 0
  small.qos = "scavenger";
  JobId a = Submit(small);
  JobId b = Submit(Request(1, 30 * kNodeMigGiB));  // the 3g.40gb at 4, class normal: never
  node_->Step();
  ASSERT_EQ(StateOf(a), JobState::kRunning);
  ASSERT_EQ(StateOf(b), JobState::kRunning);
  JobId large = Submit(Request(1, 70 * kNodeMigGiB));  // a 7g.80gb: the whole GPU, drained for
  node_->Step();
  ASSERT_EQ(StateOf(large), JobState::kPending);
  EXPECT_FALSE(Signalled(launcher_, a, SIGTERM)) << "not before the drain has held";
  clock_.AdvanceMs(61'000);
  node_->Step();
  node_->Step();
  EXPECT_TRUE(Signalled(launcher_, a, SIGTERM)) << "the scavenger on the drained placement";
  EXPECT_FALSE(Signalled(launcher_, b, SIGTERM)) << "class normal is never preempted";
  EXPECT_EQ(node_->Get(a)->stop_reason, Reason::kPreempted);
  EXPECT_NE(node_->Get(large)->detail.find("job(s) " + std::to_string(a) + " preempted"),
            std::string::npos)
      << node_->Get(large)->detail;
  clock_.AdvanceMs(30'000);  // scavenger's grace
  node_->Step();
  launcher_.Finish(a, Terminated());
  node_->Step();
  node_->Step();
  EXPECT_EQ(StateOf(a), JobState::kPending) << "requeued, its run lost but not the job";
}

// A held drain reshapes its placement: a job on it whose class says suspend is requeued, since a
// suspended job resumes only on its own instance, and that instance is to go.
TEST_F(NodeMigTest, AHeldDrainRequeuesAJobItCouldNotResumeOnceSuspended) {
  FakeCheckpointer checkpoints;
  checkpointer_ = &checkpoints;
  launcher_.SetJobProcesses({::getpid()});
  launcher_.SetSignalsEndJobs(false);
  classes_ = DefaultServiceClasses();
  for (ServiceClass& c : classes_)
    if (c.name == "scavenger") c.preempt_mode = PreemptMode::kSuspend;
  Build(launcher_, 60, 300, true, "exclusive");
  JobRequest small = Request(1, 15 * kNodeMigGiB);  // the 2g.20gb at 0
  small.qos = "scavenger";
  JobId a = Submit(small);
  node_->Step();
  ASSERT_EQ(StateOf(a), JobState::kRunning);
  JobId large = Submit(Request(1, 70 * kNodeMigGiB));  // drains the whole GPU
  node_->Step();
  clock_.AdvanceMs(61'000);
  node_->Step();
  node_->Step();
  EXPECT_FALSE(checkpoints.Running(a)) << "not suspended";
  EXPECT_EQ(node_->Get(a)->suspend.phase, SuspendPhase::kNone);
  EXPECT_TRUE(Signalled(launcher_, a, SIGTERM)) << "requeued by its grace";
  EXPECT_EQ(node_->Get(a)->stop_reason, Reason::kPreempted);
  auto events = store_->Events(a);
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(std::any_of(events->begin(), events->end(), [](const store::JobEvent& e) {
    return e.kind == "suspend-refused" && e.detail.find("reshaped") != std::string::npos;
  }));
  EXPECT_EQ(StateOf(large), JobState::kPending);
  checkpointer_ = nullptr;
}

// A drain that has held since before a job on its placement was suspended does not hold that
// job's resume off: the job is back on its instance in the pass it is suspended and may resume.
TEST_F(NodeMigTest, ADrainChosenBeforeASuspendDoesNotHoldItsResumeOff) {
  FakeCheckpointer checkpoints;
  checkpointer_ = &checkpoints;
  launcher_.SetJobProcesses({::getpid()});
  launcher_.SetSignalsEndJobs(false);
  Build(launcher_, 60, 300, true, "exclusive");
  caller_.uid = 0;
  JobId a = Submit(Request(1, 15 * kNodeMigGiB));  // the 2g.20gb at 0, class normal
  node_->Step();
  ASSERT_EQ(StateOf(a), JobState::kRunning);
  Submit(Request(1, 70 * kNodeMigGiB));  // drains the whole GPU, a's instance in it
  node_->Step();
  clock_.AdvanceMs(61'000);
  node_->Step();
  ASSERT_NE(mig_->HoldingFor(clock_.NowMs()), 0) << "the drain holds a's instance";
  ASSERT_TRUE(node_->SuspendJobs(caller_, {a}).at(0).ok());
  ASSERT_TRUE(node_->ResumeJobs(caller_, {a}).at(0).ok()) << "asked back at once";
  checkpoints.Finish(a, true);
  node_->Step();  // suspended, then placed again on its instance in the same pass
  EXPECT_TRUE(checkpoints.Running(a)) << "its resume was held off by the old drain";
  checkpointer_ = nullptr;
}

// A slice larger than any MIG instance of the node is refused at submit, as before; one an
// instance could hold is taken though no instance has room now.
TEST_F(NodeMigTest, SubmitCountsTheInstancesPinpointMayMake) {
  auto too_big = node_->Submit(caller_, Request(1, 90 * kNodeMigGiB));
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), Code::kFailedPrecondition);
  EXPECT_TRUE(node_->Submit(caller_, Request(1, 70 * kNodeMigGiB)).ok());
}

// --mig 1g.10gb: no instance of that profile exists, so one is made for the job, which takes all
// of its memory; the idle 2g.20gb and 3g.40gb do not serve it.
TEST_F(NodeMigTest, ANamedProfileGetsAnInstanceOfItsOwn) {
  JobRequest r = Request(1);
  r.mig_profile = "1g.10gb";
  JobId id = Submit(r);
  ASSERT_NE(id, 0);
  EXPECT_EQ(node_->Get(id)->request.gpu_mem_bytes, uint64_t{9984} << 20)
      << "the profile's whole memory";
  node_->Step();
  EXPECT_EQ(StateOf(id), JobState::kPending);
  StepPastReconfiguration();
  ASSERT_EQ(StateOf(id), JobState::kRunning);
  std::vector<gpu::MigInfo> now = backend_->Inventory().value()[0].migs;
  std::string profile;
  for (const gpu::MigInfo& m : now)
    if (m.uuid == DeviceUuidOf(id)) profile = m.profile;
  EXPECT_EQ(profile, "1g.10gb");

  JobRequest unknown = Request(1);
  unknown.mig_profile = "9g.99gb";
  auto refused = node_->Submit(caller_, unknown);
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("needs a MIG instance of profile 9g.99gb"),
            std::string::npos);
}

TEST_F(NodeMigTest, ASiteMayTurnNamedProfilesOff) {
  Build(launcher_, 60, 300, /*mig_requests=*/false);
  JobRequest r = Request(1);
  r.mig_profile = "1g.10gb";
  auto refused = node_->Submit(caller_, r);
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(
      refused.status().message(),
      "this node takes no --mig (its mig_requests setting is off): ask for --gpu-mem instead");
}

// `pinpoint update --mig`: a pending job's profile changes as submit's --mig would give it (its
// slice the new profile's memory unless one is given), back to any device with "", refused for
// an unknown profile and on a node that takes no --mig, and never for a running job.
TEST_F(NodeMigTest, APendingJobsProfileChangesAsSubmitWouldGiveIt) {
  JobRequest r = Request(1);
  r.mig_profile = "1g.10gb";
  auto job = node_->Submit(caller_, r, std::nullopt, /*hold=*/true);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  uint64_t small = job->request.gpu_mem_bytes;
  JobEdit to_larger;
  to_larger.mig_profile = "2g.20gb";
  ASSERT_TRUE(node_->UpdateJobs(caller_, {job->id}, to_larger).front().ok());
  JobRecord changed = node_->Get(job->id).value();
  EXPECT_EQ(changed.request.mig_profile, "2g.20gb");
  EXPECT_GT(changed.request.gpu_mem_bytes, small) << "the slice is the new profile's memory";
  JobEdit any;
  any.mig_profile = "";
  ASSERT_TRUE(node_->UpdateJobs(caller_, {job->id}, any).front().ok());
  EXPECT_EQ(node_->Get(job->id)->request.mig_profile, "");
  JobEdit unknown;
  unknown.mig_profile = "9g.99gb";
  Status refused = node_->UpdateJobs(caller_, {job->id}, unknown).front();
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("9g.99gb"), std::string::npos) << refused.message();
  EXPECT_EQ(node_->Get(job->id)->request.mig_profile, "")
      << "a refused change leaves the job as it was";

  JobId running = Submit(Request(1, 5 * kNodeMigGiB));
  node_->Step();
  StepPastReconfiguration();
  ASSERT_EQ(StateOf(running), JobState::kRunning);
  EXPECT_EQ(node_->UpdateJobs(caller_, {running}, to_larger).front().code(),
            Code::kFailedPrecondition);

  Build(launcher_, 60, 300, /*mig_requests=*/false);
  EXPECT_EQ(
      node_->UpdateJobs(caller_, {job->id}, to_larger).front().message(),
      "this node takes no --mig (its mig_requests setting is off): ask for --gpu-mem instead");
}

// After a restart the job on the instance pinpoint made is adopted, and its instance is never
// destroyed while it runs, even for a slice that needs the whole GPU and with no minimums left.
TEST_F(NodeMigTest, AnInstanceAReadoptedJobRunsOnIsNeverDestroyed) {
  JobId a = Submit(Request(1, 15 * kNodeMigGiB));
  JobId b = Submit(Request(1, 30 * kNodeMigGiB));
  JobId c = Submit(Request(1, 15 * kNodeMigGiB));
  node_->Step();
  StepPastReconfiguration();
  ASSERT_EQ(StateOf(c), JobState::kRunning);
  std::string made = DeviceUuidOf(c);

  // The daemon stops; its jobs run on. The next one starts with no minimum idle time or lifetime.
  launch::FakeLauncher after;
  for (const auto& spec : launcher_.launches()) ASSERT_TRUE(after.Launch(spec).ok());
  after.Finish(a, Exited(0));
  after.Finish(b, Exited(0));
  Build(after, 0, 0);
  ASSERT_TRUE(node_->Recover().ok());
  node_->Step();
  ASSERT_EQ(StateOf(c), JobState::kRunning) << "adopted";
  EXPECT_EQ(DeviceUuidOf(c), made);
  JobId whole = Submit(Request(1, 70 * kNodeMigGiB));
  node_->Step();
  StepPastReconfiguration();
  EXPECT_EQ(StateOf(whole), JobState::kPending);
  bool kept = false;
  std::vector<gpu::MigInfo> now = backend_->Inventory().value()[0].migs;
  for (const gpu::MigInfo& m : now) kept = kept || m.uuid == made;
  EXPECT_TRUE(kept) << "the instance job " << c << " runs on is still there";
  EXPECT_EQ(now.size(), 1u) << "the idle instances went (no minimums), for the whole-GPU slice";
  std::vector<int> resets = mps_.resets();
  std::sort(resets.begin(), resets.end());
  EXPECT_EQ(resets, (std::vector<int>{0, 4}))
      << "their MPS control daemons were told to quit first";
  for (const store::MigChange& change : mig_->recent())
    EXPECT_FALSE(change.action == partition::MigAction::kDestroy && change.uuid == made)
        << "the adopted job's instance was destroyed";
}

// A job suspended on an instance (its GPU's slots shared exclusive, so it can be) resumes there:
// the instance is kept as if it ran, though its slot is free for others meanwhile.
TEST_F(NodeMigTest, ASuspendedJobsInstanceIsKeptForItsResume) {
  FakeCheckpointer checkpoints;
  checkpointer_ = &checkpoints;
  launcher_.SetJobProcesses({::getpid()});
  launcher_.SetSignalsEndJobs(false);
  Build(launcher_, 0, 0, true, "exclusive");
  caller_.uid = 0;
  JobId a = Submit(Request(1, 15 * kNodeMigGiB));
  node_->Step();
  ASSERT_EQ(StateOf(a), JobState::kRunning);
  std::string its = DeviceUuidOf(a);
  ASSERT_TRUE(node_->SuspendJobs(caller_, {a}).at(0).ok());
  checkpoints.Finish(a, true);
  node_->Step();
  ASSERT_EQ(node_->Get(a)->suspend.phase, SuspendPhase::kSuspended);
  JobId whole = Submit(Request(1, 70 * kNodeMigGiB));  // needs every instance gone
  node_->Step();
  StepPastReconfiguration();
  clock_.AdvanceMs(600'000);  // long past any drain's hold: none may hold its instance off
  node_->Step();
  StepPastReconfiguration();
  EXPECT_EQ(StateOf(whole), JobState::kPending);
  bool kept = false;
  std::vector<gpu::MigInfo> now = backend_->Inventory().value()[0].migs;
  for (const gpu::MigInfo& m : now) kept = kept || m.uuid == its;
  EXPECT_TRUE(kept) << "the instance suspended job " << a << " resumes on is still there";
  ASSERT_TRUE(node_->ResumeJobs(caller_, {a}).at(0).ok());
  node_->Step();
  ASSERT_TRUE(checkpoints.Running(a)) << "its instance is free: it resumes";
  checkpoints.Finish(a, true);
  node_->Step();
  EXPECT_EQ(node_->Get(a)->suspend.phase, SuspendPhase::kNone);
  EXPECT_EQ(DeviceUuidOf(a), its);
  checkpointer_ = nullptr;
}

}  // namespace
}  // namespace pinpoint::daemon
