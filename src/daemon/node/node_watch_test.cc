// The node acting on the watcher: device-memory budgets enforced through the safe stop, usage
// kept with the job. Simulated GPUs with scripted processes and energy; the watcher is polled by
// the test (no thread), so every step is deterministic.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "common/test_dir.h"
#include "daemon/jobs/enforcement.h"
#include "daemon/node/fake_checkpointer.h"
#include "daemon/node/node.h"
#include "daemon/service/service_fixture.h"
#include "daemon/setup/sharing_setup.h"
#include "gpu/simulated_backend.h"
#include "launch/fake_launcher.h"
#include "mps/fake_mps.h"

namespace pinpoint::daemon {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

class NodeWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::JobStore::Open(tmp_.path() + "/pinpoint.db");
    ASSERT_TRUE(s.ok());
    store_ = std::move(s).value();
    auto b = gpu::SimulatedBackend::FromPreset("h100x2");
    ASSERT_TRUE(b.ok());
    backend_ = std::move(b).value();
    ASSERT_TRUE(backend_->AddEnergy(0, 50'000'000).ok());
    watch::WatcherOptions w;
    w.accountant = {5.0, 1000};
    w.gpu_indices = {0, 1};
    watcher_ = std::make_unique<watch::Watcher>(w, backend_.get(), &owner_, &clock_);
    NodeOptions o;
    o.identity.state_dir = tmp_.path();
    o.inventory = TwoGpus();
    o.inventory.slice_placement = sched::SlicePlacement::kPack;  // slices share GPU 0
    o.identity.backend_kind = "simulated:test";
    o.identity.simulated = true;
    o.launch.cancel_grace_ms = 5000;
    o.identity.daemon_uid = ::getuid();
    o.watch.usage_flush_ms = 1000;
    options_ = o;
    node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                               .launcher = &launcher_,
                                               .watcher = watcher_.get(),
                                               .clock = &clock_,
                                               .sharing = mps_backends_.get()});
    caller_.uid = ::getuid();
    caller_.gid = ::getgid();
  }
  // pinpointd stopped and started again on the same store: a new watcher and node, recovered.
  void Restart() {
    node_.reset();
    watch::WatcherOptions w;
    w.accountant = {5.0, 1000};
    w.gpu_indices = {0, 1};
    watcher_ = std::make_unique<watch::Watcher>(w, backend_.get(), &owner_, &clock_);
    node_ = std::make_unique<Node>(options_, NodeDeps{.store = store_.get(),
                                                      .launcher = &launcher_,
                                                      .watcher = watcher_.get(),
                                                      .clock = &clock_,
                                                      .sharing = mps_backends_.get()});
    ASSERT_TRUE(node_->Recover().ok());
  }
  // A job on both GPUs runs, and a process of its user in no job (kEscaped) is on GPU 0; the next
  // job, for one GPU, waits. {that job, the next}.
  static constexpr int64_t kEscaped = 777777;
  std::pair<JobId, JobId> RunWithALooseProcess() {
    JobId first = Submit(0, 0, 2);
    JobId next = Submit(0, 0, 1);
    node_->Step();
    watcher_->PollOnce();
    owner_.SetUser(kEscaped, caller_.uid);
    EXPECT_TRUE(backend_->SetProcesses(0, {{kEscaped, kGiB, true}}).ok());
    return {first, next};
  }
  bool HasEvent(JobId id, const std::string& kind) {
    auto events = node_->Events(id);
    if (!events.ok()) return false;
    for (const auto& e : *events)
      if (e.kind == kind) return true;
    return false;
  }

  JobId Submit(uint64_t gpu_mem, int share = 0, int gpus = 1) {
    JobRequest r;
    r.argv = {"train"};
    r.cwd = "/";
    r.gpus = gpus;
    r.gpu_mem_bytes = gpu_mem;
    r.gpu_share_pct = share;
    auto job = node_->Submit(caller_, r);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  // The job's processes on GPU 0 with their device memory (pids are the job's supervisor pid
  // times 1000, plus 1, 2, ...).
  void Processes(std::vector<std::pair<JobId, std::vector<uint64_t>>> jobs) {
    std::vector<gpu::GpuProcess> procs;
    for (const auto& [id, sizes] : jobs) {
      int64_t base = node_->Get(id)->pid;
      for (size_t i = 0; i < sizes.size(); ++i) {
        int64_t pid = base * 1000 + 1 + static_cast<int64_t>(i);
        owner_.Set(pid, id);
        procs.push_back({pid, sizes[i], true});
      }
    }
    ASSERT_TRUE(backend_->SetProcesses(0, procs).ok());
  }
  // One second: the GPU spends `energy_mj`, the watcher polls, the node steps.
  void Second(uint64_t energy_mj) {
    ASSERT_TRUE(backend_->AddEnergy(0, energy_mj).ok());
    clock_.AdvanceMs(1000);
    watcher_->PollOnce();
    node_->Step();
  }
  bool Signalled(JobId id, int sig) {
    for (const auto& [job, s] : launcher_.signals())
      if (job == id && s == sig) return true;
    return false;
  }

  TestDir tmp_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<gpu::SimulatedBackend> backend_;
  watch::FakeProcessOwner owner_;
  launch::FakeLauncher launcher_;
  mps::FakeMps mps_;
  std::unique_ptr<sharing::Backends> mps_backends_ = MakeBackends(SharingSetup{.mps = &mps_});
  FakeClock clock_;
  std::unique_ptr<watch::Watcher> watcher_;
  std::unique_ptr<Node> node_;
  NodeOptions options_;
  api::Caller caller_;
};

TEST_F(NodeWatchTest, JobWhoseTwoProcessesExceedItsBudgetIsStoppedSafelyItsNeighbourIsNot) {
  JobId greedy = Submit(4 * kGiB);
  JobId neighbour = Submit(4 * kGiB);
  node_->Step();
  ASSERT_EQ(node_->Get(greedy)->state, JobState::kRunning);
  ASSERT_EQ(node_->Get(neighbour)->allocations[0].device_index,
            node_->Get(greedy)->allocations[0].device_index)
      << "both slices share GPU 0";
  // Each of greedy's processes is under 4 GiB (as a per-process MPS limit would allow); together
  // they hold 5 GiB.
  Processes({{greedy, {2560ull << 20, 2560ull << 20}}, {neighbour, {3 * kGiB}}});
  Second(300'000);
  EXPECT_TRUE(launcher_.signals().empty()) << "inside the grace period";
  Second(300'000);
  // Safe stop: terminate_client for the job's processes first, then SIGTERM to it alone.
  ASSERT_EQ(mps_.stopped().size(), 1u);
  EXPECT_EQ(mps_.stopped()[0].first.device_index, 0);
  EXPECT_TRUE(Signalled(greedy, SIGTERM));
  EXPECT_FALSE(Signalled(neighbour, SIGTERM));
  Second(300'000);  // the fake job ends on the signal
  auto stopped = node_->Get(greedy);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->state, JobState::kFailed);
  EXPECT_EQ(stopped->reason, Reason::kGpuMemExceeded);
  EXPECT_NE(stopped->detail.find("5GiB"), std::string::npos) << stopped->detail;
  EXPECT_NE(stopped->detail.find("its 2 processes used"), std::string::npos) << stopped->detail;
  EXPECT_EQ(node_->Get(neighbour)->state, JobState::kRunning);
  auto events = node_->Events(greedy);
  ASSERT_TRUE(events.ok());
  bool stop_event = false;
  for (const auto& e : *events) stop_event = stop_event || e.kind == "stop";
  EXPECT_TRUE(stop_event);
  // Its last interval is accounted one poll after it ended, and stored.
  Second(300'000);
  auto stored = store_->Get(greedy);
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->usage.final);
  EXPECT_EQ(stored->usage.gpu_mem_peak_bytes, 5 * kGiB);
  launcher_.Finish(neighbour, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  Second(300'000);
  EXPECT_EQ(node_->Get(neighbour)->state, JobState::kCompleted);
}

// A process that outlived its job (it left the job's session and cleared its environment, on a
// node without cgroups) still holds the job's GPU: the next job does not get that GPU until the
// process has exited. The ended job is reported ended at once all the same.
TEST_F(NodeWatchTest, AProcessThatOutlivedItsJobKeepsTheJobsGpusFromTheNextJob) {
  JobId first = Submit(0, 0, 2);  // both GPUs, whole
  JobId next = Submit(0, 0, 1);
  node_->Step();
  ASSERT_EQ(node_->Get(first)->state, JobState::kRunning);
  ASSERT_EQ(node_->Get(next)->state, JobState::kPending);
  watcher_->PollOnce();
  const int64_t escaped = 777777;  // the user's, in no job
  owner_.SetUser(escaped, caller_.uid);
  ASSERT_TRUE(backend_->SetProcesses(0, {{escaped, kGiB, true}}).ok());
  launcher_.Finish(first, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  node_->Step();
  EXPECT_EQ(node_->Get(first)->state, JobState::kCompleted);
  Second(1000);  // the watcher's look at the ended job's GPUs
  Second(1000);
  EXPECT_EQ(node_->Get(next)->state, JobState::kPending)
      << "its GPUs are still held by what the job left";
  EXPECT_TRUE(owner_.killed().empty())
      << "a process in no job is not killed before the settle deadline";
  ASSERT_TRUE(backend_->SetProcesses(0, {}).ok());
  Second(1000);
  EXPECT_EQ(node_->Get(next)->state, JobState::kRunning);
}

// The same, shown and ended: the waiting job's reason, `gpus` and the ended job's history name
// the holder (user, pid, since when); at the settle deadline (60 s by default) it is killed.
TEST_F(NodeWatchTest, AProcessInNoJobIsNamedWhileItHoldsAndKilledAtTheDeadline) {
  auto [first, next] = RunWithALooseProcess();
  launcher_.Finish(first, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  node_->Step();
  Second(1000);
  Second(1000);
  auto waiting = node_->Get(next);
  ASSERT_EQ(waiting->state, JobState::kPending);
  EXPECT_NE(waiting->detail.find("held by process 777777 of "), std::string::npos)
      << waiting->detail;
  EXPECT_NE(waiting->detail.find("in no job, since job " + std::to_string(first) + " ended at"),
            std::string::npos)
      << waiting->detail;
  GpusReply gpus = node_->GpusView();
  ASSERT_EQ(gpus.devices[0].holds.size(), 1u);
  EXPECT_EQ(gpus.devices[0].holds[0].job, first);
  EXPECT_EQ(gpus.devices[0].holds[0].pids, std::vector<int64_t>{kEscaped});
  EXPECT_FALSE(gpus.devices[0].holds[0].in_job);
  EXPECT_EQ(gpus.devices[0].holds[0].deadline_ms - gpus.devices[0].holds[0].since_ms, 60'000);
  EXPECT_TRUE(gpus.devices[1].holds.empty()) << "no process of it is on GPU 1";
  EXPECT_TRUE(HasEvent(first, "gpu-held"));
  EXPECT_EQ(store_->GpuHolds()->size(), 1u) << "stored, for a restart";
  for (int i = 0; i < 60 && owner_.killed().empty(); ++i) Second(1000);
  ASSERT_EQ(owner_.killed().size(), 1u);
  EXPECT_EQ(owner_.killed()[0], (std::pair<int64_t, uint32_t>{kEscaped, caller_.uid}));
  EXPECT_GE(clock_.NowMs(), gpus.devices[0].holds[0].deadline_ms) << "not before its deadline";
  EXPECT_TRUE(HasEvent(first, "gpu-hold-killed"));
  ASSERT_TRUE(backend_->SetProcesses(0, {}).ok());  // the kill took it
  Second(1000);
  EXPECT_EQ(node_->Get(next)->state, JobState::kRunning);
  EXPECT_TRUE(HasEvent(first, "gpu-released"));
  EXPECT_TRUE(store_->GpuHolds()->empty());
  EXPECT_TRUE(node_->GpusView().devices[0].holds.empty());
}

// Attack (issue 55): a set-user-id program left on an ended job's GPU survives the settle
// deadline: pinpointd may not kill it. The log and `gpus` said "killed" while it held the GPU.
// Now the device is drained with the reason, `gpus` names the process as not killed, the job's
// history says so, and no job is placed there until the process is gone.
TEST_F(NodeWatchTest, AHolderThatCannotBeKilledDrainsItsDeviceWithTheReason) {
  auto [first, next] = RunWithALooseProcess();
  owner_.SetUnkillable(kEscaped);
  launcher_.Finish(first, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  node_->Step();
  for (int i = 0; i < 62; ++i) Second(1000);  // past the 60 s deadline
  EXPECT_TRUE(owner_.killed().empty());
  EXPECT_FALSE(HasEvent(first, "gpu-hold-killed")) << "reported killed, yet it runs on";
  EXPECT_TRUE(HasEvent(first, "gpu-hold-unkillable"));
  GpusReply gpus = node_->GpusView();
  ASSERT_EQ(gpus.devices[0].holds.size(), 1u);
  EXPECT_FALSE(gpus.devices[0].holds[0].killed);
  EXPECT_EQ(gpus.devices[0].holds[0].unkillable, std::vector<int64_t>{kEscaped});
  EXPECT_TRUE(gpus.devices[0].drained);
  EXPECT_NE(gpus.devices[0].drain_reason.value_or("").find("could not kill"), std::string::npos)
      << gpus.devices[0].drain_reason.value_or("");
  EXPECT_FALSE(gpus.devices[1].drained) << "the process is not on GPU 1";
  EXPECT_EQ(node_->Get(next)->state, JobState::kPending);
  ASSERT_TRUE(backend_->SetProcesses(0, {}).ok());  // it exits at last
  Second(1000);
  EXPECT_FALSE(node_->GpusView().devices[0].drained);
  EXPECT_EQ(node_->Get(next)->state, JobState::kRunning);
}

// A restart does not hand on the GPUs a process still holds: the hold is stored, read back,
// and its deadline still runs from the job's end.
TEST_F(NodeWatchTest, AHoldOutlivesARestartOfTheDaemon) {
  auto [first, next] = RunWithALooseProcess();
  launcher_.Finish(first, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  node_->Step();
  Second(1000);
  const int64_t since = node_->GpusView().devices[0].holds.at(0).since_ms;
  Restart();
  node_->Step();
  Second(1000);
  Second(1000);
  ASSERT_EQ(node_->Get(next)->state, JobState::kPending) << "the next job still waits";
  GpusReply gpus = node_->GpusView();
  ASSERT_EQ(gpus.devices[0].holds.size(), 1u);
  EXPECT_EQ(gpus.devices[0].holds[0].since_ms, since) << "the deadline runs from the job's end";
  int held_events = 0;
  auto events = node_->Events(first);
  ASSERT_TRUE(events.ok());
  for (const auto& e : *events) held_events += e.kind == "gpu-held";
  EXPECT_EQ(held_events, 1) << "told once, not again after the restart";
  ASSERT_TRUE(backend_->SetProcesses(0, {}).ok());
  Second(1000);
  EXPECT_EQ(node_->Get(next)->state, JobState::kRunning);
  EXPECT_TRUE(store_->GpuHolds()->empty());
}

// A job that ended while pinpointd was down, with a process of its user still on its GPU: the
// restarted daemon looks at its GPUs before handing them on.
TEST_F(NodeWatchTest, AJobThatEndedWhileTheDaemonWasDownSettlesToo) {
  auto [first, next] = RunWithALooseProcess();
  node_.reset();  // pinpointd stops; the job ends meanwhile
  launcher_.Finish(first, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  Restart();
  EXPECT_EQ(node_->Get(first)->state, JobState::kCompleted);
  node_->Step();
  Second(1000);
  Second(1000);
  EXPECT_EQ(node_->Get(next)->state, JobState::kPending) << "its GPU is held";
  ASSERT_TRUE(backend_->SetProcesses(0, {}).ok());
  Second(1000);
  EXPECT_EQ(node_->Get(next)->state, JobState::kRunning);
}

TEST_F(NodeWatchTest, JobsUnderTheirBudgetRunToTheEnd) {
  JobId a = Submit(4 * kGiB);
  JobId b = Submit(4 * kGiB);
  node_->Step();
  Processes(
      {{a, {2 * kGiB, 2 * kGiB}}, {b, {4 * kGiB + (100ull << 20)}}});  // b: 2.4% over, inside 5%
  for (int i = 0; i < 20; ++i) Second(300'000);
  EXPECT_TRUE(launcher_.signals().empty());
  EXPECT_TRUE(mps_.stopped().empty());
  EXPECT_EQ(node_->Get(a)->state, JobState::kRunning);
  EXPECT_EQ(node_->Get(a)->usage.gpu_mem_now_bytes, 4 * kGiB);
  EXPECT_EQ(node_->Get(a)->usage.samples, 20);
}

TEST_F(NodeWatchTest, EnergyOfTheRunIsSplitAmongTheJobsAndSumsToTheCounterDelta) {
  JobId a = Submit(8 * kGiB, 60);
  JobId b = Submit(8 * kGiB, 20);
  JobId c = Submit(8 * kGiB);  // no share: an even third
  node_->Step();
  Processes({{a, {kGiB}}, {b, {kGiB}}, {c, {kGiB}}});
  watcher_->PollOnce();  // first counter reading
  uint64_t delta = 0;
  for (int i = 0; i < 10; ++i) {
    uint64_t e = 250'000 + 7'919 * i;
    delta += e;
    Second(e);
  }
  launcher_.FinishAll(0);
  node_->Step();
  delta += 100'000;
  Second(100'000);  // the last interval, after they ended, still goes to them
  uint64_t sum = 0;
  for (JobId id : {a, b, c}) {
    auto r = store_->Get(id);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->usage.final) << id;
    sum += r->usage.energy_mj;
  }
  EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(delta), 3.0);
  uint64_t ea = store_->Get(a)->usage.energy_mj, eb = store_->Get(b)->usage.energy_mj;
  EXPECT_NEAR(static_cast<double>(ea) / eb, 3.0, 0.01);
  // Nothing runs now: the GPU's further energy is idle, charged to no job.
  Second(80'000);
  EXPECT_DOUBLE_EQ(watcher_->Latest().accounts.at(0).idle_energy_mj, 80'000.0);
}

TEST_F(NodeWatchTest, GpusViewAndMetricsShowTheWatchersReadings) {
  JobId a = Submit(8 * kGiB, 50);
  node_->Step();
  Processes({{a, {3 * kGiB}}});
  ASSERT_TRUE(backend_->SetPower(0, 250'000).ok());
  Second(100'000);
  auto view = node_->GpusView();
  ASSERT_TRUE(view.devices[0].reading.has_value());
  EXPECT_EQ(view.devices[0].reading->mem_used_bytes, 3 * kGiB);
  EXPECT_EQ(view.devices[0].reading->power_mw, 250'000u);
  EXPECT_EQ(view.devices[0].jobs[0].gpu_mem_used_bytes, 3 * kGiB);
  EXPECT_EQ(view.watcher->polls, 1);
  metrics::Snapshot snap = node_->MetricsView();
  ASSERT_EQ(snap.gpus.size(), 2u);
  EXPECT_TRUE(snap.gpus[0].sampled);
  EXPECT_EQ(snap.devices[0].slices, 1);
  EXPECT_EQ(snap.devices[0].share_allocated_pct, 50);
  EXPECT_EQ(snap.sched.running, 1);
  EXPECT_EQ(snap.sched.starts_total, 1);
  ASSERT_EQ(snap.jobs.size(), 1u);
  EXPECT_EQ(snap.jobs[0].usage.gpu_mem_now_bytes, 3 * kGiB);
  int64_t before = node_->generation();
  Second(100'000);
  EXPECT_NE(node_->generation(), before) << "a poll makes new metrics due";
}

TEST_F(NodeWatchTest, UsageIsFlushedToTheStoreWhileRunning) {
  JobId a = Submit(8 * kGiB);
  node_->Step();
  Processes({{a, {6 * kGiB}}});
  Second(100'000);
  Second(100'000);
  auto stored = store_->Get(a);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->usage.gpu_mem_peak_bytes, 6 * kGiB);
  EXPECT_FALSE(stored->usage.final);
}

// --- What each job really had (docs/enforcement.md) ---------------------------------------------

TEST_F(NodeWatchTest, TheEnforcementListIsWhatTheJobsProcessWasGivenNotWhatItAsked) {
  JobId a = Submit(4 * kGiB, 25);
  JobId b = Submit(4 * kGiB, 25);
  node_->Step();
  // Job a's process got what pinpointd gave its job; job b's got a pinned limit above its slice.
  auto environ_of = [&](JobId id) {
    std::string text;
    for (const launch::LaunchSpec& spec : launcher_.launches())
      if (spec.job_id == id)
        for (const std::string& e : spec.env) text += e + std::string(1, '\0');
    return text;
  };
  std::string uuid_b = node_->Get(b)->allocations.at(0).uuid;
  std::string forged = "PINPOINT_JOB_ID=" + std::to_string(b) + std::string(1, '\0') +
                       "CUDA_VISIBLE_DEVICES=" + uuid_b + std::string(1, '\0') +
                       "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=99999M" + std::string(1, '\0') +
                       "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25" + std::string(1, '\0');
  Processes({{a, {kGiB}}, {b, {kGiB}}});
  owner_.SetEnviron(node_->Get(a)->pid * 1000 + 1, environ_of(a));
  owner_.SetEnviron(node_->Get(b)->pid * 1000 + 1, forged);
  Second(100'000);
  std::vector<Enforcement> list_a = EnforcementOf(*node_->Get(a));
  ASSERT_EQ(list_a.size(), 7u);
  EXPECT_EQ(list_a[0].resource, "devices");
  EXPECT_EQ(list_a[0].verdict, "held");
  EXPECT_EQ(list_a[1].resource, "gpu_mem");
  EXPECT_EQ(list_a[1].verdict, "held") << list_a[1].applied;
  EXPECT_EQ(list_a[2].verdict, "not measurable");
  // Job b's process ran with a limit of its own: the job's doing, not pinpoint's (issue 57).
  std::vector<Enforcement> list_b = EnforcementOf(*node_->Get(b));
  EXPECT_EQ(list_b[1].verdict, "overridden");
  EXPECT_NE(list_b[1].applied.find("ran with CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=99999M"),
            std::string::npos)
      << list_b[1].applied;
  // Kept with the job in the store while it runs (the usage flush), and counted once it ends.
  Second(100'000);
  EXPECT_TRUE(store_->Get(b)->readback.env_read);
  EXPECT_EQ(node_->MetricsView().sched.enforcement_disagreements_total.count("gpu_mem"), 0u);
  launcher_.FinishAll(0);
  node_->Step();
  EXPECT_TRUE(node_->MetricsView().sched.enforcement_disagreements_total.empty())
      << "a job's own doing raises no alarm of the node's";
  auto overrides = node_->MetricsView().sched.enforcement_overrides_total;
  EXPECT_EQ(overrides["gpu_mem"], 1) << "counted apart";
  EXPECT_EQ(store_->Get(b)->readback.gpu_env.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"),
            std::vector<std::string>{"0=99999M"});
}

// A slice's MPS client priority comes from its service class (issue 56): a scavenger slice's
// process is given CUDA_MPS_CLIENT_PRIORITY=1, whatever its request's environment said, and its
// gpu_priority row reads held once its process is seen to have run with it.
TEST_F(NodeWatchTest, AScavengerSliceRunsBelowNormalMpsPriority) {
  JobRequest r;
  r.argv = {"train"};
  r.cwd = "/";
  r.gpus = 1;
  r.gpu_mem_bytes = 2 * kGiB;
  r.qos = "scavenger";
  r.env = {{"CUDA_MPS_CLIENT_PRIORITY", "0"}};  // a job never chooses its own
  auto submitted = node_->Submit(caller_, r);
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  JobId a = submitted->id;
  JobId b = Submit(2 * kGiB);  // no --qos: the default class, normal
  EXPECT_EQ(node_->Get(b)->request.qos, "normal") << "the default class is stored";
  node_->Step();
  auto environ_of = [&](JobId id) {
    std::string text;
    for (const launch::LaunchSpec& spec : launcher_.launches())
      if (spec.job_id == id)
        for (const std::string& e : spec.env) text += e + std::string(1, '\0');
    return text;
  };
  EXPECT_NE(environ_of(a).find("CUDA_MPS_CLIENT_PRIORITY=1"), std::string::npos);
  EXPECT_EQ(environ_of(a).find("CUDA_MPS_CLIENT_PRIORITY=0"), std::string::npos);
  EXPECT_NE(environ_of(b).find("CUDA_MPS_CLIENT_PRIORITY=0"), std::string::npos);
  Processes({{a, {kGiB}}, {b, {kGiB}}});
  owner_.SetEnviron(node_->Get(a)->pid * 1000 + 1, environ_of(a));
  owner_.SetEnviron(node_->Get(b)->pid * 1000 + 1, environ_of(b));
  Second(100'000);
  auto row = [&](JobId id) {
    for (const Enforcement& e : EnforcementOf(*node_->Get(id)))
      if (e.resource == "gpu_priority") return e;
    return Enforcement{};
  };
  EXPECT_EQ(row(a).verdict, "held") << row(a).applied;
  EXPECT_EQ(row(a).applied.rfind("CUDA_MPS_CLIENT_PRIORITY=1", 0), 0u) << row(a).applied;
  EXPECT_EQ(row(a).asked, "class scavenger");
  EXPECT_EQ(row(b).verdict, "held");
  EXPECT_EQ(row(b).applied.rfind("CUDA_MPS_CLIENT_PRIORITY=0", 0), 0u) << row(b).applied;
}

// A slice whose allocation past its limit is refused at once never shows on a GPU: what it was
// given is read from its first process (its supervisor's child), and its limit held.
TEST_F(NodeWatchTest, AJobThatNeverReachesAGpuHasItsLimitsReadFromItsFirstProcess) {
  JobId a = Submit(2 * kGiB);
  node_->Step();
  const launch::LaunchSpec& spec = launcher_.launches().back();
  std::string environ;
  for (const std::string& e : spec.env) environ += e + std::string(1, '\0');
  int64_t shim = node_->Get(a)->pid, child = shim * 1000 + 9;
  owner_.SetChildren(shim, {child});
  owner_.Set(child, a);
  owner_.SetEnviron(child, environ);
  Second(100'000);
  launcher_.FinishAll(3);
  node_->Step();
  JobRecord job = *node_->Get(a);
  EXPECT_EQ(job.usage.gpu_mem_peak_bytes, 0u);
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(list[1].applied, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M");
  EXPECT_EQ(list[1].verdict, "held");
  EXPECT_EQ(list[1].observed, "nothing of it on its GPUs (NVML)");
}

// The watcher may read what a job's first process was given just before the job ends, and hand
// it over a pass later: the job's record takes it still, whether the loop's table holds the
// ended job yet or only the store does.
TEST_F(NodeWatchTest, WhatTheWatcherReadJustBeforeAJobEndedIsKeptWithIt) {
  JobId a = Submit(2 * kGiB);
  JobId b = Submit(2 * kGiB);
  node_->Step();
  // The loop's side of the watcher for these two jobs, as the node holds one.
  sched::Inventory inventory = TwoGpus();
  WatchFeedback feedback(watcher_.get(), store_.get(), nullptr, &inventory, 1000);
  JobTable both(store_.get(), &clock_), only_a(store_.get(), &clock_);
  for (JobId id : {a, b}) {
    JobRecord job = *node_->Get(id);
    both.Add(job);
    std::string environ;
    for (const launch::LaunchSpec& spec : launcher_.launches())
      if (spec.job_id == id)
        for (const std::string& e : spec.env) environ += e + std::string(1, '\0');
    int64_t child = job.pid * 1000 + 9;
    owner_.SetChildren(job.pid, {child});
    owner_.Set(child, id);
    owner_.SetEnviron(child, environ);
  }
  feedback.Update(both);
  clock_.AdvanceMs(1000);
  watcher_->PollOnce();  // it reads both jobs' first processes
  // Then both end before the read is handed over: a is still in the table, b only in the store.
  JobRecord ended_a = *node_->Get(a);
  ended_a.state = JobState::kCompleted;
  only_a.Add(ended_a);
  JobRecord ended_b = *node_->Get(b);
  ended_b.state = JobState::kCompleted;
  ASSERT_TRUE(store_->Update(ended_b).ok());
  feedback.Apply(only_a, clock_.NowMs());
  EXPECT_TRUE(only_a.at(a).readback.env_read);
  EXPECT_EQ(only_a.at(a).readback.env.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=2048M");
  EXPECT_EQ(store_->Get(a)->readback.env.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=2048M");
  JobRecord stored_b = *store_->Get(b);
  EXPECT_TRUE(stored_b.readback.env_read);
  EXPECT_EQ(stored_b.readback.env.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=2048M");
  EXPECT_EQ(EnforcementOf(stored_b)[1].verdict, "held");
}

TEST_F(NodeWatchTest, AReadBackValueAJobSetForItselfIsBounded) {
  JobId a = Submit(4 * kGiB);
  node_->Step();
  Processes({{a, {kGiB}}});
  owner_.SetEnviron(node_->Get(a)->pid * 1000 + 1,
                    "PINPOINT_JOB_ID=" + std::to_string(a) + std::string(1, '\0') +
                        "CUDA_VISIBLE_DEVICES=" + std::string(100'000, 'x') + std::string(1, '\0'));
  Second(100'000);
  EXPECT_EQ(node_->Get(a)->readback.env.at("CUDA_VISIBLE_DEVICES").size(), kMaxReadbackBytes);
  EXPECT_EQ(EnforcementOf(*node_->Get(a))[0].verdict, "overridden");
}

TEST_F(NodeWatchTest, OnANodeWithoutCgroupsTheHostLimitsSayTheyWereNotRead) {
  JobId a = Submit(4 * kGiB);
  node_->Step();
  JobRecord job = *node_->Get(a);
  EXPECT_FALSE(job.readback.host_unread.empty());
  std::vector<Enforcement> list = EnforcementOf(job);
  ASSERT_GE(list.size(), 3u);
  EXPECT_EQ(list[list.size() - 3].resource, "cpus");
  EXPECT_EQ(list[list.size() - 3].verdict, "not read");
}

// --- MPS faults confirmed by the driver ---------------------------------------------------------

// A fault counts toward draining only when the driver reports a critical Xid for the device near
// the MPS log's claim.
TEST_F(NodeWatchTest, FaultsConfirmedByXidDrainTheDevice) {
  NodeOptions o = node_->options();
  o.inventory = node_->devices();
  o.watch.mps_fault_drain_after = 2;
  node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                             .launcher = &launcher_,
                                             .watcher = watcher_.get(),
                                             .clock = &clock_,
                                             .sharing = mps_backends_.get()});
  mps_.InjectFault(0);
  ASSERT_TRUE(backend_->InjectXid(0, 31).ok());
  Second(0);
  EXPECT_FALSE(node_->GpusView().devices[0].drained);
  clock_.AdvanceMs(60'000);
  ASSERT_TRUE(backend_->InjectXid(0, 13).ok());  // the driver first, the log line a second later
  Second(0);
  mps_.InjectFault(0);
  Second(0);
  EXPECT_TRUE(node_->GpusView().devices[0].drained);
  EXPECT_FALSE(node_->GpusView().devices[1].drained);
  JobId id = Submit(4 * kGiB);
  node_->Step();
  EXPECT_EQ(node_->Get(id)->allocations.at(0).device_index, 1);
}

TEST_F(NodeWatchTest, XidOnAnotherGpuOrTooLateConfirmsNothing) {
  NodeOptions o = node_->options();
  o.inventory = node_->devices();
  o.watch.mps_fault_drain_after = 1;
  node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                             .launcher = &launcher_,
                                             .watcher = watcher_.get(),
                                             .clock = &clock_,
                                             .sharing = mps_backends_.get()});
  mps_.InjectFault(0);
  ASSERT_TRUE(backend_->InjectXid(1, 31).ok());  // another GPU
  Second(0);
  for (int i = 0; i < 11; ++i) Second(0);        // the claim's window passes
  ASSERT_TRUE(backend_->InjectXid(0, 31).ok());  // an Xid long after the claim
  Second(0);
  EXPECT_FALSE(node_->GpusView().devices[0].drained);
  EXPECT_FALSE(node_->GpusView().devices[1].drained);
}

// Suspend (issue 56): a suspended job's GPUs are others'. It is charged none of their energy, and a
// process of it found holding device memory there (one the checkpoint did not take: started
// after the job's processes were listed, or out of its process group) is a breach: the job is
// stopped, and the GPU goes to nobody else until that memory is gone.
class SuspendWatchTest : public NodeWatchTest {
 protected:
  void SetUp() override {
    NodeWatchTest::SetUp();
    node_.reset();
    options_.inventory = TwoGpus(SharingMode::kExclusive);
    launcher_.SetJobProcesses({::getpid()});  // a real process: its start time is read
    launcher_.SetSignalsEndJobs(false);
    node_ = std::make_unique<Node>(options_, NodeDeps{.store = store_.get(),
                                                      .launcher = &launcher_,
                                                      .watcher = watcher_.get(),
                                                      .clock = &clock_,
                                                      .sharing = mps_backends_.get(),
                                                      .checkpointer = &fake_});
  }
  FakeCheckpointer fake_;
};

TEST_F(SuspendWatchTest, ASuspendedJobIsChargedNoEnergyAndOneHoldingDeviceMemoryIsStopped) {
  JobId a = Submit(0);
  JobId b = Submit(0);
  node_->Step();
  ASSERT_EQ(node_->Get(a)->allocations.at(0).device_index, 0);
  ASSERT_EQ(node_->Get(b)->allocations.at(0).device_index, 1);
  Processes({{a, {4 * kGiB}}});
  Second(100'000);
  Second(100'000);
  const uint64_t before = node_->Get(a)->usage.energy_mj;
  ASSERT_GT(before, 0u) << "charged while it runs";
  api::Caller root = caller_;
  root.uid = 0;
  ASSERT_TRUE(node_->SuspendJobs(root, {a}).at(0).ok());
  fake_.Finish(a, true);
  node_->Step();
  ASSERT_EQ(node_->Get(a)->suspend.phase, SuspendPhase::kSuspended);
  JobId c = Submit(0);
  Processes({});  // the checkpoint took a's memory
  Second(100'000);
  ASSERT_EQ(node_->Get(c)->state, JobState::kRunning);
  ASSERT_EQ(node_->Get(c)->allocations.at(0).device_index, 0) << "a's GPU";
  Processes({{c, {2 * kGiB}}});
  Second(100'000);
  Second(100'000);
  EXPECT_EQ(node_->Get(a)->usage.energy_mj, before) << "GPU 0's energy is c's now";
  EXPECT_GT(node_->Get(c)->usage.energy_mj, 0u);
  EXPECT_FALSE(Signalled(a, SIGTERM));
  // A process of a's shows on GPU 0 with device memory: past the grace, a is stopped.
  Processes({{c, {2 * kGiB}}, {a, {kGiB}}});
  Second(100'000);
  EXPECT_FALSE(Signalled(a, SIGTERM)) << "inside the grace period";
  Second(100'000);
  ASSERT_TRUE(Signalled(a, SIGTERM));
  EXPECT_TRUE(Signalled(a, SIGCONT)) << "its stopped processes run to take the signal";
  EXPECT_EQ(node_->Get(a)->stop_reason, Reason::kGpuMemExceeded);
  EXPECT_NE(node_->Get(a)->stop_detail.find("while the job was suspended"), std::string::npos)
      << node_->Get(a)->stop_detail;
  EXPECT_EQ(node_->Get(c)->state, JobState::kRunning) << "c is not a's victim";
  launcher_.Finish(a, {launch::ExitStatus::Kind::kSignaled, 0, SIGTERM, ""});
  Second(100'000);
  EXPECT_EQ(node_->Get(a)->state, JobState::kFailed);
  EXPECT_EQ(node_->Get(a)->reason, Reason::kGpuMemExceeded);
  // Its process still holds GPU 0: once c ends, the next job does not get GPU 0 until it is gone.
  launcher_.Finish(c, {launch::ExitStatus::Kind::kExited, 0, 0, ""});
  Processes({{a, {kGiB}}});
  Second(100'000);
  JobId d = Submit(0);
  Second(100'000);
  EXPECT_EQ(node_->Get(d)->state, JobState::kPending) << "GPU 0 still holds a's memory";
  Processes({});
  Second(100'000);
  Second(100'000);
  EXPECT_EQ(node_->Get(d)->state, JobState::kRunning);
  EXPECT_EQ(node_->Get(d)->allocations.at(0).device_index, 0);
}

}  // namespace
}  // namespace pinpoint::daemon
