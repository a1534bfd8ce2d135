#include "watch/watcher.h"

#include <gtest/gtest.h>
#include <poll.h>

#include "gpu/simulated_backend.h"

namespace pinpoint::watch {
namespace {

constexpr uint64_t kWatchGiB = 1ull << 30;

class WatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto b = gpu::SimulatedBackend::FromPreset("h100x2");
    ASSERT_TRUE(b.ok());
    backend_ = std::move(b).value();
    ASSERT_TRUE(backend_->AddEnergy(0, 1'000'000).ok());  // a counter that has run a while
    WatcherOptions o;
    o.interval_ms = 1000;
    o.accountant = {5.0, 1000};
    o.gpu_indices = {0, 1};
    watcher_ = std::make_unique<Watcher>(o, backend_.get(), &owner_, &clock_);
  }
  static WatchedJob Slice(JobId id, int gpu, uint64_t budget) {
    WatchedJob j;
    j.id = id;
    j.slots.push_back({gpu, budget, 0, 1.0, false});
    j.env_vars = {"CUDA_VISIBLE_DEVICES", "FAKE_MEM_LIMIT", "FAKE_SHARE"};  // what its limits name
    return j;
  }
  void Procs(int gpu, std::vector<std::pair<int64_t, uint64_t>> procs) {
    std::vector<gpu::GpuProcess> list;
    for (auto [pid, bytes] : procs) list.push_back({pid, bytes, true});
    ASSERT_TRUE(backend_->SetProcesses(gpu, list).ok());
  }
  void Tick(uint64_t energy_mj_gpu0) {
    ASSERT_TRUE(backend_->AddEnergy(0, energy_mj_gpu0).ok());
    clock_.AdvanceMs(1000);
    watcher_->PollOnce();
  }
  // A watcher whose settle deadline (and kill grace) are these.
  void SettleDeadline(int64_t deadline_ms, int64_t kill_grace_ms = 10'000) {
    WatcherOptions o;
    o.gpu_indices = {0, 1};
    o.settle_deadline_ms = deadline_ms;
    o.kill_grace_ms = kill_grace_ms;
    watcher_ = std::make_unique<Watcher>(o, backend_.get(), &owner_, &clock_);
  }
  bool WakeReadable() {
    pollfd p{watcher_->wake_fd(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }

  std::unique_ptr<gpu::SimulatedBackend> backend_;
  FakeProcessOwner owner_;
  FakeClock clock_;
  std::unique_ptr<Watcher> watcher_;
};

TEST_F(WatcherTest, OverBudgetJobIsReportedAndWakesTheMainLoopItsNeighbourIsNot) {
  ASSERT_TRUE(watcher_->Start().ok());  // makes the wake descriptor (and a thread we stop at once)
  watcher_->Stop();
  watcher_->SetJobs({Slice(1, 0, 4 * kWatchGiB), Slice(2, 0, 4 * kWatchGiB)});
  owner_.Set(100, 1);
  owner_.Set(101, 1);
  owner_.Set(200, 2);
  Procs(0, {{100, 3 * kWatchGiB}, {101, 3 * kWatchGiB}, {200, 3 * kWatchGiB}});
  Tick(1000);
  EXPECT_TRUE(watcher_->Take().over_budget.empty());
  EXPECT_FALSE(WakeReadable());
  Tick(1000);
  EXPECT_TRUE(WakeReadable());
  WatchUpdate u = watcher_->Take();
  ASSERT_EQ(u.over_budget.size(), 1u);
  EXPECT_EQ(u.over_budget[0].id, 1);
  EXPECT_EQ(u.over_budget[0].used_bytes, 6 * kWatchGiB);
  EXPECT_FALSE(WakeReadable());  // Take drained it
  EXPECT_EQ(u.usage.at(1).gpu_mem_now_bytes, 6 * kWatchGiB);
  EXPECT_EQ(u.usage.at(2).gpu_mem_now_bytes, 3 * kWatchGiB);
}

// The environment a job's process on a GPU was given, as /proc shows it (NUL-separated).
std::string Environ(std::initializer_list<std::string> entries) {
  std::string text;
  for (const std::string& e : entries) text += e + std::string(1, '\0');
  return text;
}

TEST_F(WatcherTest, AJobsProcessEnvironmentAndItsGpusAreReadBack) {
  watcher_->SetJobs({Slice(1, 0, 4 * kWatchGiB), Slice(2, 1, 4 * kWatchGiB)});
  owner_.Set(100, 1);
  owner_.Set(200, 2);
  owner_.SetEnviron(100, Environ({"HOME=/home/a", "PINPOINT_JOB_ID=1", "CUDA_VISIBLE_DEVICES=GPU-a",
                                  "FAKE_MEM_LIMIT=4096", "OTHER=not read"}));
  Procs(0, {{100, kWatchGiB}});
  Procs(1, {{200, kWatchGiB}});  // job 2's process has no readable environment
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  ASSERT_TRUE(u.seen.count(1));
  const JobSeen& seen = u.seen.at(1);
  EXPECT_TRUE(seen.env_read);
  EXPECT_EQ(seen.env,
            (std::map<std::string, std::string>{
                {"CUDA_VISIBLE_DEVICES", "GPU-a"}, {"FAKE_MEM_LIMIT", "4096"}, {"FAKE_SHARE", ""}}))
      << "the variables its limits name, and no other";
  EXPECT_EQ(seen.gpu_env_reads, 1);
  EXPECT_EQ(seen.gpu_env.at("FAKE_MEM_LIMIT"), std::vector<std::string>{"4096"});
  EXPECT_EQ(seen.gpus, std::vector<int>{0});
  ASSERT_TRUE(u.seen.count(2));
  EXPECT_FALSE(u.seen.at(2).env_read) << "seen on GPU 1, its environment not read";
  EXPECT_EQ(u.seen.at(2).gpus, std::vector<int>{1});
  // The same process is read once: nothing is reported again until something new is seen.
  owner_.SetEnviron(100, Environ({"PINPOINT_JOB_ID=1", "CUDA_VISIBLE_DEVICES=GPU-b"}));
  Tick(1000);
  EXPECT_TRUE(watcher_->Take().seen.empty());
  Procs(1, {{200, kWatchGiB}, {100, kWatchGiB}});  // job 1 on GPU 1 as well
  Tick(1000);
  u = watcher_->Take();
  ASSERT_TRUE(u.seen.count(1));
  EXPECT_EQ(u.seen.at(1).gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(u.seen.at(1).env.at("CUDA_VISIBLE_DEVICES"), "GPU-a");
}

// Attack (issue 57): a job's GPU process that runs with another limit than the job was given (a
// child that set its own, after a first process that ran as given), and one that cleared its
// environment: each GPU process of the job is read, over the job's life, and every value it ran
// with is kept (the proof judges from those), not only the first process's.
TEST_F(WatcherTest, EveryGpuProcessOfAJobIsReadOverItsLife) {
  WatchedJob job = Slice(1, 0, 4 * kWatchGiB);
  job.session_id = 50;
  watcher_->SetJobs({job});
  owner_.SetChildren(50, {51});
  owner_.Set(51, 1);
  owner_.SetEnviron(51, Environ({"PINPOINT_JOB_ID=1", "FAKE_MEM_LIMIT=1024"}));
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  ASSERT_TRUE(u.seen.count(1));
  EXPECT_EQ(u.seen.at(1).env.at("FAKE_MEM_LIMIT"), "1024") << "its first process, as given";
  EXPECT_EQ(u.seen.at(1).gpu_env_reads, 0);
  owner_.Set(60, 1);  // a child that raised its own limit, on the GPU
  owner_.SetEnviron(60, Environ({"PINPOINT_JOB_ID=1", "FAKE_MEM_LIMIT=81559"}));
  owner_.Set(61, 1);  // one under `env -i`: no key, no limit; the job's by its session
  owner_.SetEnviron(61, Environ({"PATH=/bin"}));
  Procs(0, {{60, kWatchGiB}, {61, kWatchGiB}});
  Tick(1000);
  u = watcher_->Take();
  ASSERT_TRUE(u.seen.count(1));
  EXPECT_EQ(u.seen.at(1).env.at("FAKE_MEM_LIMIT"), "1024") << "the first read stands";
  EXPECT_EQ(u.seen.at(1).gpu_env_reads, 2);
  EXPECT_EQ(u.seen.at(1).gpu_env.at("FAKE_MEM_LIMIT"), (std::vector<std::string>{"81559", ""}));
  int reads = owner_.environ_reads();
  Tick(1000);
  EXPECT_EQ(owner_.environ_reads(), reads) << "each GPU process is read once";
}

// Once seen on a loaded node: 40 slices ended "not seen" after running a minute. A job's first
// process that was not there in the job's first 2 s (its supervisor slow to start it) was never
// read after, and a job that never reaches a GPU (a simulated node) had nothing else read. It is
// read at a later poll.
TEST_F(WatcherTest, AFirstProcessThatStartedLateIsReadAtALaterPoll) {
  WatchedJob job = Slice(1, 0, 4 * kWatchGiB);
  job.session_id = 50;
  watcher_->SetJobs({job});
  for (int i = 0; i < 5; ++i) Tick(1000);  // no child yet
  EXPECT_TRUE(watcher_->Take().seen.empty());
  owner_.SetChildren(50, {51});
  owner_.Set(51, 1);
  owner_.SetEnviron(51, Environ({"PINPOINT_JOB_ID=1", "FAKE_MEM_LIMIT=1024"}));
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  ASSERT_TRUE(u.seen.count(1));
  EXPECT_TRUE(u.seen.at(1).env_read);
}

TEST_F(WatcherTest, AJobsFirstProcessIsReadWhetherOrNotItReachesAGpu) {
  WatchedJob job = Slice(1, 0, 4 * kWatchGiB);
  job.session_id = 50;  // its supervisor
  watcher_->SetJobs({job});
  owner_.SetChildren(50, {51});
  owner_.Set(51, 1);
  owner_.SetEnviron(
      51, Environ({"PINPOINT_JOB_ID=1", "CUDA_VISIBLE_DEVICES=GPU-a", "FAKE_MEM_LIMIT=2048"}));
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  ASSERT_TRUE(u.seen.count(1));
  EXPECT_TRUE(u.seen.at(1).env_read);
  EXPECT_EQ(u.seen.at(1).env.at("FAKE_MEM_LIMIT"), "2048");
  EXPECT_TRUE(u.seen.at(1).gpus.empty()) << "read from its first process, seen on no GPU";
}

TEST_F(WatcherTest, AnEnvironmentWithoutTheJobsKeyOrOfAnotherJobIsNotRead) {
  WatchedJob job = Slice(1, 0, 4 * kWatchGiB);
  job.session_id = 50;
  watcher_->SetJobs({job, Slice(2, 1, 4 * kWatchGiB)});
  // Its child between fork and exec (the supervisor's environment), and a child that is job 2's.
  owner_.SetChildren(50, {51, 52});
  owner_.Set(51, 1);
  owner_.SetEnviron(51, Environ({"PATH=/usr/bin"}));
  owner_.Set(52, 2);
  owner_.SetEnviron(52, Environ({"PINPOINT_JOB_ID=1", "CUDA_VISIBLE_DEVICES=GPU-forged"}));
  Tick(1000);
  EXPECT_TRUE(watcher_->Take().seen.empty());
  owner_.SetEnviron(51, Environ({"PINPOINT_JOB_ID=1", "CUDA_VISIBLE_DEVICES=GPU-a"}));  // exec'd
  Tick(1000);
  EXPECT_EQ(watcher_->Take().seen.at(1).env.at("CUDA_VISIBLE_DEVICES"), "GPU-a");
}

// Many jobs started at once are read a few at a time, in turn: jobs whose first processes are
// never readable (one user's) do not keep the others (another user's) from being read.
TEST_F(WatcherTest, FirstProcessesAreReadAFewAtATimeInTurn) {
  std::vector<WatchedJob> jobs;
  for (JobId id = 1; id <= 20; ++id) {
    WatchedJob job = Slice(id, 0, 4 * kWatchGiB);
    job.session_id = 1000 + id;
    jobs.push_back(job);
    int64_t child = 2000 + id;
    owner_.SetChildren(job.session_id, {child});
    owner_.Set(child, id);
    // Jobs 1-10 cleared their environment; 11-20 carry theirs.
    owner_.SetEnviron(child, id <= 10 ? Environ({"PATH=/bin"})
                                      : Environ({"PINPOINT_JOB_ID=" + std::to_string(id)}));
  }
  watcher_->SetJobs(jobs);
  Tick(1000);
  EXPECT_EQ(owner_.environ_reads(), 8) << "a check reads at most 8 jobs";
  for (int i = 0; i < 3; ++i) Tick(1000);
  WatchUpdate u = watcher_->Take();
  for (JobId id = 11; id <= 20; ++id) {
    ASSERT_TRUE(u.seen.count(id)) << id;
    EXPECT_TRUE(u.seen.at(id).env_read) << id;
  }
}

TEST_F(WatcherTest, AJobWhoseProcessesNeverCarryItsKeyCostsABoundedNumberOfReads) {
  WatchedJob job = Slice(1, 0, 4 * kWatchGiB);
  job.session_id = 50;
  watcher_->SetJobs({job});
  owner_.SetChildren(50, {51});  // its first process never carries its key
  owner_.Set(51, 1);
  owner_.SetEnviron(51, Environ({"PATH=/usr/bin", std::string(100'000, 'x')}));
  for (int i = 0; i < Watcher::kMaxEnvReads + 50; ++i) Tick(1000);
  EXPECT_EQ(owner_.environ_reads(), Watcher::kMaxEnvReads);
  EXPECT_TRUE(watcher_->Take().seen.empty());
}

TEST_F(WatcherTest, AnotherJobsOrNoJobsProcessIsNeverReadForAJob) {
  watcher_->SetJobs({Slice(1, 0, 4 * kWatchGiB)});
  owner_.SetEnviron(300, Environ({"PINPOINT_JOB_ID=1",
                                  "CUDA_VISIBLE_DEVICES=GPU-other"}));  // a process of no job
  owner_.SetUser(300, 1001);
  Procs(0, {{300, kWatchGiB}});
  Tick(1000);
  EXPECT_TRUE(watcher_->Take().seen.empty());
}

TEST_F(WatcherTest, EndedJobGetsItsLastIntervalThenFinalUsage) {
  watcher_->SetJobs({Slice(1, 0, 4 * kWatchGiB), Slice(2, 0, 4 * kWatchGiB)});
  watcher_->PollOnce();                             // first counter reading
  Tick(10'000);                                     // 5 J each
  watcher_->SetJobs({Slice(2, 0, 4 * kWatchGiB)});  // job 1 ended during the next interval
  Tick(10'000);  // still split between both: job 1 ran in part of it
  WatchUpdate u = watcher_->Take();
  ASSERT_EQ(u.closed.count(1), 1u);
  EXPECT_TRUE(u.closed.at(1).final);
  EXPECT_EQ(u.closed.at(1).energy_mj, 10'000u);
  EXPECT_EQ(u.usage.count(1), 0u);
  Tick(10'000);  // job 2 alone now
  u = watcher_->Take();
  EXPECT_TRUE(u.closed.empty());
  EXPECT_EQ(u.usage.at(2).energy_mj, 20'000u);
  WatchView v = watcher_->Latest();
  EXPECT_EQ(v.polls, 4);
  EXPECT_EQ(v.gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(v.accounts.at(0).charged_energy_mj, 30'000.0);
}

TEST_F(WatcherTest, JobStartedAgainBeforeItsLastPollIsNotClosed) {
  watcher_->SetJobs({Slice(1, 0, kWatchGiB)});
  watcher_->PollOnce();
  watcher_->SetJobs({});
  watcher_->SetJobs({Slice(1, 0, kWatchGiB)});
  Tick(1000);
  EXPECT_TRUE(watcher_->Take().closed.empty());
}

// A process that outlived its job (it left the job's session, say) still holds the job's GPU:
// the job is not settled, so its devices do not go to another job, until the process is gone.
TEST_F(WatcherTest, AProcessOfAnEndedJobKeepsItUnsettledUntilItExits) {
  watcher_->SetJobs({Slice(1, 0, kWatchGiB), Slice(2, 0, kWatchGiB)});
  owner_.Set(100, 1);
  owner_.Set(200, 2);
  Procs(0, {{100, kWatchGiB / 2}, {200, kWatchGiB / 2}});
  Tick(1000);
  watcher_->SetJobs({Slice(2, 0, kWatchGiB)});
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  EXPECT_EQ(u.closed.count(1), 1u) << "its usage is final all the same";
  EXPECT_TRUE(u.settled.empty());
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).owned, std::vector<int64_t>{100});
  EXPECT_TRUE(u.lingering.at(1).loose.empty());
  ASSERT_FALSE(owner_.killed().empty()) << "the job's own leftover is killed";
  EXPECT_EQ(owner_.killed()[0].first, 100);
  Tick(1000);  // still there: reported again, usage not charged to the closed job
  u = watcher_->Take();
  EXPECT_TRUE(u.closed.empty());
  EXPECT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.usage.count(1), 0u);
  Procs(0, {{200, kWatchGiB / 2}});
  Tick(1000);
  u = watcher_->Take();
  EXPECT_EQ(u.settled, std::vector<JobId>{1});
  EXPECT_TRUE(u.lingering.empty());
  Tick(1000);
  EXPECT_TRUE(watcher_->Take().settled.empty()) << "reported once";
}

// Without a cgroup, a process that left the session and cleared its environment is no job's. A
// GPU process of the job's user in no job holds the ended job's GPUs; another user's does not,
// nor one on another GPU.
TEST_F(WatcherTest, AUsersProcessInNoJobHoldsTheEndedJobsGpuAnotherUsersDoesNot) {
  WatchedJob job = Slice(1, 0, kWatchGiB);
  job.uid = 1001;
  watcher_->SetJobs({job});
  owner_.Set(100, 1);
  owner_.SetUser(300, 1001);  // escaped: the user's, in no job
  owner_.SetUser(400, 2002);  // another user's program
  owner_.SetUser(500, 1001);  // the user's, on the other GPU
  Procs(0, {{100, kWatchGiB / 2}, {300, kWatchGiB / 2}, {400, kWatchGiB / 2}});
  Procs(1, {{500, kWatchGiB / 2}});
  Tick(1000);
  watcher_->SetJobs({});
  Procs(0, {{300, kWatchGiB / 2}, {400, kWatchGiB / 2}});
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  EXPECT_TRUE(u.settled.empty());
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_TRUE(u.lingering.at(1).owned.empty());
  EXPECT_EQ(u.lingering.at(1).loose, std::vector<int64_t>{300});
  EXPECT_TRUE(owner_.killed().empty()) << "not before the settle deadline";
  Procs(0, {{400, kWatchGiB / 2}});
  Tick(1000);
  EXPECT_EQ(watcher_->Take().settled, std::vector<JobId>{1});
}

// A process of the ended job's user in no job holds its GPU until the settle deadline, counted
// from the job's end; then it is killed (as the job's user, through the owner's pidfd-pinned
// kill). Another user's process on the same GPU is never touched.
TEST_F(WatcherTest, AUsersProcessInNoJobIsKilledAtTheSettleDeadlineAnotherUsersNever) {
  SettleDeadline(10'000);
  WatchedJob job = Slice(1, 0, kWatchGiB);
  job.uid = 1001;
  watcher_->SetJobs({job});
  owner_.SetUser(300, 1001);
  owner_.SetUser(400, 2002);
  Procs(0, {{300, kWatchGiB / 2}, {400, kWatchGiB / 2}});
  Tick(1000);
  const int64_t ended = clock_.NowMs();
  watcher_->SetJobs({});
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).since_ms, ended);
  EXPECT_EQ(u.lingering.at(1).deadline_ms, ended + 10'000);
  EXPECT_EQ(u.lingering.at(1).gpu_of, (std::map<int64_t, int>{{300, 0}}));
  EXPECT_TRUE(u.lingering.at(1).killed.empty());
  clock_.AdvanceMs(7000);
  Tick(1000);  // 9 s after the end
  EXPECT_TRUE(owner_.killed().empty()) << "before the deadline";
  Tick(1000);  // 10 s after the end
  u = watcher_->Take();
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).killed, std::vector<int64_t>{300});
  ASSERT_EQ(owner_.killed().size(), 1u);
  EXPECT_EQ(owner_.killed()[0], (std::pair<int64_t, uint32_t>{300, 1001}));
  Procs(0, {{400, kWatchGiB / 2}});  // it is gone; the other user's stays
  Tick(1000);
  EXPECT_EQ(watcher_->Take().settled, std::vector<JobId>{1});
  EXPECT_EQ(owner_.killed().size(), 1u) << "the other user's process is never killed";
}

// Attack (issue 55): a process left on an ended job's GPU names a sibling job of its user that
// still runs (PINPOINT_JOB_ID, so the sibling "owns" it), on a GPU that sibling does not hold. It
// was taken for the sibling's and the ended job settled at once: its GPU went to another user
// while the process held 40 GiB there, never named nor killed. It is no job's to keep there: it
// holds the ended job's GPU like any process of the user, and is killed at the deadline. The
// sibling's own process on its own GPU is left alone.
TEST_F(WatcherTest, AProcessThatNamesASiblingJobHoldsTheGpuItIsOnUntilTheDeadline) {
  SettleDeadline(10'000);
  WatchedJob ended = Slice(1, 0, kWatchGiB);
  ended.uid = 1001;
  WatchedJob sibling = Slice(2, 1, kWatchGiB);
  sibling.uid = 1001;
  watcher_->SetJobs({ended, sibling});
  owner_.Set(300, 2);  // claims the sibling: on GPU 0, which the sibling does not hold
  owner_.SetUser(300, 1001);
  owner_.Set(400, 2);  // the sibling's own, on its GPU
  owner_.SetUser(400, 1001);
  Procs(0, {{300, 40 * kWatchGiB}});
  Procs(1, {{400, kWatchGiB / 2}});
  Tick(1000);
  watcher_->SetJobs({sibling});
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  EXPECT_TRUE(u.settled.empty()) << "its GPU is handed on while a process holds it";
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).loose, std::vector<int64_t>{300});
  clock_.AdvanceMs(9000);
  Tick(1000);
  u = watcher_->Take();
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).killed, std::vector<int64_t>{300});
  EXPECT_EQ(owner_.killed(), (std::vector<std::pair<int64_t, uint32_t>>{{300, 1001}}))
      << "the sibling's process on its own GPU is not touched";
  Procs(0, {});
  Tick(1000);
  EXPECT_EQ(watcher_->Take().settled, std::vector<JobId>{1});
}

// Attack (issue 55): a set-user-id program left on an ended job's GPU (its real uid the user's,
// its effective uid another's) may not be killed by pinpointd, and one stuck in the kernel
// outlives its SIGKILL. Each was reported "killed" while it held the GPU. Now neither is in
// `killed`: they are `unkillable`, the first at the deadline, the second kill_grace_ms after its
// SIGKILL, and the job stays unsettled while they hold on.
TEST_F(WatcherTest, AHolderThatCannotBeKilledIsReportedSoNotKilled) {
  SettleDeadline(10'000, 5'000);
  WatchedJob job = Slice(1, 0, kWatchGiB);
  job.uid = 1001;
  watcher_->SetJobs({job});
  owner_.SetUser(300, 1001);
  owner_.SetUnkillable(300);  // set-user-id
  owner_.SetUser(301, 1001);  // survives its SIGKILL
  Procs(0, {{300, kWatchGiB}, {301, kWatchGiB}});
  Tick(1000);
  watcher_->SetJobs({});
  clock_.AdvanceMs(9000);
  Tick(1000);  // 10 s after the end: the deadline
  WatchUpdate u = watcher_->Take();
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).killed, std::vector<int64_t>{301});
  EXPECT_EQ(u.lingering.at(1).unkillable, std::vector<int64_t>{300});
  clock_.AdvanceMs(4000);
  Tick(1000);  // 5 s after 301's SIGKILL, still there
  u = watcher_->Take();
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).unkillable, (std::vector<int64_t>{300, 301}));
  EXPECT_TRUE(u.settled.empty());
  Procs(0, {});
  Tick(1000);
  EXPECT_EQ(watcher_->Take().settled, std::vector<JobId>{1});
}

// After a restart, a job that ended earlier is looked at as if it had just left the set at its
// end: its deadline runs from then, and no final usage is reported for it.
TEST_F(WatcherTest, AResumedJobKeepsItsDeadlineFromItsEnd) {
  WatcherOptions o;
  o.gpu_indices = {0, 1};
  o.settle_deadline_ms = 60'000;
  watcher_ = std::make_unique<Watcher>(o, backend_.get(), &owner_, &clock_);
  WatchedJob job = Slice(1, 0, kWatchGiB);
  job.uid = 1001;
  owner_.SetUser(300, 1001);
  Procs(0, {{300, kWatchGiB / 2}});
  watcher_->Resume(job, clock_.NowMs() - 59'000);
  Tick(1000);
  WatchUpdate u = watcher_->Take();
  EXPECT_TRUE(u.closed.empty()) << "its usage was charged before the restart";
  ASSERT_EQ(u.lingering.count(1), 1u);
  EXPECT_EQ(u.lingering.at(1).killed, std::vector<int64_t>{300}) << "60 s after its end";
  Procs(0, {});
  Tick(1000);
  EXPECT_EQ(watcher_->Take().settled, std::vector<JobId>{1});
}

// The thread does not wait out its interval for a job that left: the poll that settles it comes
// at once and wakes the main loop.
TEST_F(WatcherTest, AJobThatLeftIsPolledForAtOnce) {
  WatcherOptions o;
  o.interval_ms = 3'600'000;  // an hour: only the early poll can report within the test
  o.gpu_indices = {0, 1};
  watcher_ = std::make_unique<Watcher>(o, backend_.get(), &owner_, &clock_);
  watcher_->SetJobs({Slice(1, 0, kWatchGiB)});
  ASSERT_TRUE(backend_->InjectXid(1, 79).ok());  // so that the thread's first poll wakes us
  ASSERT_TRUE(watcher_->Start().ok());
  pollfd first{watcher_->wake_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&first, 1, 60'000), 1);
  ASSERT_EQ(watcher_->Take().xids.size(), 1u);  // the first poll is done, the job still ran
  watcher_->SetJobs({});
  std::vector<JobId> settled;
  while (settled.empty()) {
    pollfd p{watcher_->wake_fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 60'000), 1) << "no poll came for the job that left";
    WatchUpdate u = watcher_->Take();
    settled = u.settled;
  }
  EXPECT_EQ(settled, std::vector<JobId>{1});
  watcher_->Stop();
}

TEST_F(WatcherTest, LostGpuIsReportedAndChargesNothing) {
  watcher_->SetJobs({Slice(1, 0, kWatchGiB)});
  watcher_->PollOnce();
  ASSERT_TRUE(backend_->SetLost(0, true).ok());
  Tick(5000);
  WatchView v = watcher_->Latest();
  EXPECT_FALSE(v.gpus[0].ok);
  EXPECT_NE(v.gpus[0].error, "");
  EXPECT_TRUE(v.gpus[1].ok);
  EXPECT_EQ(watcher_->Take().usage.at(1).energy_mj, 0u);
}

TEST_F(WatcherTest, ThreadPollsUntilStopped) {
  ASSERT_TRUE(watcher_->Start().ok());
  watcher_->Stop();  // joins: the first poll ran before the first wait
  EXPECT_GE(watcher_->Latest().polls, 1);
  EXPECT_GE(backend_->sample_calls(), 2);
}

}  // namespace
}  // namespace pinpoint::watch
