#include "daemon/node/node.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "common/test_dir.h"
#include "daemon/jobs/fake_users.h"
#include "daemon/service/node_fixture.h"
#include "daemon/service/service_fixture.h"
#include "launch/fake_launcher.h"
#include "mps/fake_mps.h"
#include "pinpoint/api_codec.h"
#include "store/faulty_vfs.h"

namespace pinpoint::daemon {
namespace {

TEST_F(NodeTest, SubmittedJobIsDurableBeforeItsIdIsReturned) {
  JobId id = Submit(Request(1, 4ull << 30));
  auto stored = store_->Get(id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, JobState::kPending);
  EXPECT_EQ(stored->request.gpu_mem_bytes, 4ull << 30);
  EXPECT_TRUE(launcher_.launches().empty()) << "launching happens in Step, after the reply";
}

TEST_F(NodeTest, RequestThatCanNeverFitIsRefusedWithReason) {
  auto job = node_->Submit(caller_, Request(3));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(job.status().message().find("3"), std::string::npos) << job.status().message();
  auto bad = node_->Submit(caller_, Request(-1));
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  auto all = store_->List({});
  EXPECT_TRUE(all->empty()) << "refused jobs are not stored";
}

TEST_F(NodeTest, UserPriorityAboveTheDefaultIsRefusedAndNotStored) {
  api::Caller user;
  user.uid = 65534;  // nobody: not root, not the daemon's user, not in priority_users
  user.gid = 65534;
  if (::getuid() == user.uid) GTEST_SKIP() << "the tests run as uid 65534";
  JobRequest r = Request(0);
  r.priority = 5;
  auto job = node_->Submit(user, r);
  ASSERT_EQ(job.status().code(), Code::kPermissionDenied) << job.status().ToString();
  EXPECT_NE(job.status().message().find("priority 5"), std::string::npos) << job.status().message();
  EXPECT_TRUE(store_->List({})->empty()) << "refused jobs are not stored";
  r.priority = 5;
  EXPECT_TRUE(node_->Submit(caller_, r).ok()) << "the daemon's own user (root in production) may";
}

TEST_F(NodeTest, ListReturnsOnePageAndTheCountOfAll) {
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Submit(Request(2)));  // one runs at a time
  auto page = node_->List(false, std::nullopt, 1, 2);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->total, 5);
  ASSERT_EQ(page->jobs.size(), 2u);
  EXPECT_EQ(page->jobs[0].id, ids[1]);
  EXPECT_EQ(page->jobs[1].id, ids[2]);
  page = node_->List(false, std::nullopt, 4, 1000);
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs[0].id, ids[4]);
  page = node_->List(true, std::nullopt, 0, 2);  // all: from the newest, shown oldest first
  EXPECT_EQ(page->total, 5);
  ASSERT_EQ(page->jobs.size(), 2u);
  EXPECT_EQ(page->jobs[0].id, ids[3]);
  EXPECT_EQ(page->jobs[1].id, ids[4]);
  EXPECT_EQ(node_->List(false, std::nullopt, 0, 0).status().code(), Code::kInvalidArgument);
}

TEST_F(NodeTest, SliceLaunchesWithDeviceAndMpsEnvironment) {
  JobId id = Submit(Request(1, 4ull << 30, 20));
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), 1u);
  EXPECT_EQ(StateOf(id), JobState::kRunning);
  auto env = EnvOf(0);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "GPU-0");
  EXPECT_EQ(env["PINPOINT_JOB_ID"], std::to_string(id));
  EXPECT_EQ(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=4096M");
  EXPECT_EQ(env["CUDA_MPS_PIPE_DIRECTORY"], "/fake/mps/GPU-0/pipe")
      << "the job's own value is replaced";
  ASSERT_EQ(mps_.prepared().size(), 1u);
  EXPECT_EQ(mps_.prepared()[0].gpu_share_pct, 20);
  EXPECT_EQ(mps_.prepared()[0].uid, caller_.uid);
}

TEST_F(NodeTest, WholeGpuAndCpuOnlyJobsGetNoMps) {
  Submit(Request(2));
  Submit(Request(0));
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), 2u);
  auto whole = EnvOf(0);
  EXPECT_EQ(whole["CUDA_VISIBLE_DEVICES"], "GPU-0,GPU-1");
  EXPECT_EQ(whole.count("CUDA_MPS_PIPE_DIRECTORY"), 0u);
  auto cpu = EnvOf(1);
  EXPECT_EQ(cpu["CUDA_VISIBLE_DEVICES"], "") << "CPU-only jobs see no GPU";
  EXPECT_TRUE(mps_.prepared().empty());
}

TEST_F(NodeTest, ExitStatusesBecomeFinalStates) {
  JobId ok = Submit(Request(0));
  JobId bad = Submit(Request(0));
  JobId sig = Submit(Request(0));
  JobId nolaunch = Submit(Request(0));
  node_->Step();
  launcher_.Finish(ok, Exited(0));
  launcher_.Finish(bad, Exited(3));
  ExitStatus s;
  s.kind = ExitStatus::Kind::kSignaled;
  s.term_signal = SIGSEGV;
  launcher_.Finish(sig, s);
  ExitStatus lf;
  lf.kind = ExitStatus::Kind::kLaunchFailed;
  lf.error = "cannot run 'train': No such file or directory";
  launcher_.Finish(nolaunch, lf);
  clock_.AdvanceMs(1500);
  auto ended = node_->Step();
  EXPECT_EQ(ended.size(), 4u);
  auto get = [&](JobId id) { return *store_->Get(id); };
  EXPECT_EQ(get(ok).state, JobState::kCompleted);
  EXPECT_EQ(get(ok).end_ms - get(ok).start_ms, 1500);
  EXPECT_EQ(get(bad).state, JobState::kFailed);
  EXPECT_EQ(get(bad).reason, Reason::kExitedNonZero);
  EXPECT_EQ(*get(bad).exit_code, 3);
  EXPECT_EQ(get(sig).reason, Reason::kSignaled);
  EXPECT_EQ(*get(sig).term_signal, SIGSEGV);
  EXPECT_EQ(get(nolaunch).reason, Reason::kLaunchFailed);
  EXPECT_NE(get(nolaunch).detail.find("No such file"), std::string::npos);
  EXPECT_EQ(node_->active_count(), 0u);
}

TEST_F(NodeTest, EndedJobFreesItsDeviceForTheNext) {
  JobId first = Submit(Request(2));
  JobId second = Submit(Request(2));
  node_->Step();
  EXPECT_EQ(StateOf(second), JobState::kPending);
  EXPECT_EQ(node_->Get(second)->reason, Reason::kResources);
  launcher_.Finish(first, Exited(0));
  node_->Step();
  EXPECT_EQ(StateOf(second), JobState::kRunning);
}

TEST_F(NodeTest, NonRootDaemonRefusesOtherUsersJobs) {
  if (::getuid() == 0) {
    NodeOptions o = node_->options();
    o.inventory = node_->devices();
    o.identity.daemon_uid = 4242;  // as if pinpointd ran as an ordinary user
    node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                               .launcher = &launcher_,
                                               .clock = &clock_,
                                               .sharing = mps_backends_.get()});
  } else {
    caller_.uid = ::getuid() + 1;
  }
  auto job = node_->Submit(caller_, Request(0));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), Code::kPermissionDenied);
}

TEST_F(NodeTest, RecoverAdoptsLiveJobsFinishesEndedOnesAndRequeuesNeverLaunched) {
  JobId live = Submit(Request(0));
  JobId ended = Submit(Request(0));
  JobId lost = Submit(Request(0));
  JobId never = Submit(Request(0));
  JobId whole = Submit(Request(2));
  JobId pending = Submit(Request(2));  // waits behind `whole`
  node_->Step();
  // The daemon dies here. Meanwhile one job ends, one loses its supervisor, and one turns out
  // to have been marked running but never forked.
  node_.reset();
  launch::FakeLauncher after;
  for (const auto& spec : launcher_.launches()) {
    if (spec.job_id == never) continue;
    ASSERT_TRUE(after.Launch(spec).ok());
  }
  after.Finish(ended, Exited(0));
  after.Finish(lost, NoStatus());
  std::unique_ptr<Node> node = RestartedOn(after);
  Node& restarted = *node;
  ASSERT_TRUE(restarted.Recover().ok());
  restarted.Step();
  EXPECT_EQ(restarted.Get(live)->state, JobState::kRunning);
  EXPECT_EQ(store_->Get(ended)->state, JobState::kCompleted);
  EXPECT_EQ(store_->Get(lost)->state, JobState::kFailed);
  EXPECT_EQ(store_->Get(lost)->reason, Reason::kLost) << "without --requeue";
  EXPECT_EQ(restarted.Get(whole)->state, JobState::kRunning);
  EXPECT_EQ(restarted.Get(pending)->state, JobState::kPending);
  // The never-launched job was requeued and then launched exactly once by the new daemon.
  int launches_of_never = 0;
  for (const auto& spec : after.launches()) launches_of_never += spec.job_id == never;
  EXPECT_EQ(launches_of_never, 1);
  auto events = store_->Events(live);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().kind, "adopt");
}

TEST_F(NodeTest, AJobWithRequeueLostWithItsNodeIsQueuedAgainAndRunsOnceMore) {
  JobRequest r = Request(0);
  r.requeue = true;
  JobId id = Submit(r);
  node_->Step();
  node_.reset();  // the node goes down, and its job with it: no exit status
  launch::FakeLauncher after;
  ASSERT_TRUE(after.Launch(launcher_.launches().front()).ok());
  after.Finish(id, NoStatus());
  std::unique_ptr<Node> node = RestartedOn(after);
  Node& restarted = *node;
  ASSERT_TRUE(restarted.Recover().ok());
  JobRecord stored = store_->Get(id).value();
  EXPECT_EQ(stored.state, JobState::kPending) << "recorded before any pass";
  EXPECT_EQ(stored.reason, Reason::kRequeued);
  EXPECT_NE(stored.detail.find("back in the queue (--requeue)"), std::string::npos)
      << stored.detail;
  EXPECT_EQ(store_->Events(id)->back().kind, "requeue");
  restarted.Step();
  EXPECT_EQ(restarted.Get(id)->state, JobState::kRunning);
  EXPECT_EQ(after.launches().size(), 2u) << "the lost run, then the new one";
}

TEST_F(NodeTest, GpusViewShowsSlicesAndMpsUser) {
  Submit(Request(1, 10ull << 30, 30));
  node_->Step();
  auto view = node_->GpusView();
  EXPECT_EQ(view.backend, "simulated:test");
  const auto& dev0 = view.devices[0];
  EXPECT_EQ(dev0.mem_allocated_bytes, 10ull << 30);
  EXPECT_EQ(dev0.mem_free_bytes, 70ull << 30);
  EXPECT_EQ(dev0.share_free_pct, 70);
  EXPECT_EQ(dev0.jobs.size(), 1u);
  EXPECT_TRUE(dev0.mps_user.has_value());
  EXPECT_TRUE(view.devices[1].jobs.empty());
}

TEST_F(NodeTest, UsersComeFromTheUserDirectory) {
  FakeUserDirectory users;
  users.AddUser(1001, 1001, "ana", {4242});
  users.AddUser(1002, 1002, "bob");
  NodeOptions o = node_->options();
  o.inventory = node_->devices();
  o.identity.daemon_uid = 0;  // runs other users' jobs (FakeLauncher starts nothing)
  node_ = std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                             .launcher = &launcher_,
                                             .clock = &clock_,
                                             .users = &users,
                                             .sharing = mps_backends_.get()});
  api::Caller ana{1001, 1001, 1};
  api::Caller bob{1002, 1002, 2};
  // Two slices of ana fill both MPS devices' servers; bob's slice, come after, waits for one.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(node_->Submit(ana, Request(1, 50ull << 30)).ok());
  node_->Step();
  auto waiting = node_->Submit(bob, Request(1, 10ull << 30));
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  EXPECT_EQ(waiting->user, "bob");
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), 2u);
  EXPECT_EQ(launcher_.launches()[0].groups, (std::vector<uint32_t>{1001, 4242}));
  auto job = node_->Get(waiting->id);
  EXPECT_EQ(job->reason, Reason::kMpsUser);
  EXPECT_NE(job->detail.find("uid 1001 is ana"), std::string::npos) << job->detail;
  EXPECT_EQ(node_->GpusView().devices[0].mps_user, "ana");
  EXPECT_EQ(node_->Cancel(ana, {waiting->id}).at(0).code(), Code::kPermissionDenied);
  EXPECT_TRUE(node_->Cancel(bob, {waiting->id}).at(0).ok());
  EXPECT_EQ(node_->Get(waiting->id)->detail, "cancelled by bob while pending");
}

TEST_F(NodeTest, MpsDaemonsAreShownInTheGpusViewAndTheMetrics) {
  sharing::ServerInfo down;
  down.device_index = 1;
  down.running = false;
  down.uid = caller_.uid;
  down.control_pid = 0;
  down.restarts = 2;
  down.pipe_dir = "/mps/dev1/pipe";
  mps_.SetServers({{1, down}});
  auto view = ToJson(node_->GpusView());
  EXPECT_FALSE(view["devices"][0].contains("mps")) << "no daemon on device 0";
  EXPECT_EQ(view["devices"][1]["mps"], (nlohmann::json{{"state", "down"},
                                                       {"uid", caller_.uid},
                                                       {"control_pid", 0},
                                                       {"clients", 0},
                                                       {"restarts", 2},
                                                       {"pipe_dir", "/mps/dev1/pipe"}}));
  metrics::Snapshot snap = node_->MetricsView();
  ASSERT_EQ(snap.devices.size(), 2u);
  EXPECT_FALSE(snap.devices[0].mps_up.has_value());
  EXPECT_EQ(snap.devices[1].mps_up, std::optional<bool>(false));
  EXPECT_FALSE(snap.devices[1].mps_user.empty());
}

}  // namespace
}  // namespace pinpoint::daemon

namespace pinpoint::daemon {
namespace {

TEST_F(NodeTest, FailedMpsPreparationReleasesNothing) {
  mps_.Fail(Unavailable("no MPS here"));
  JobId a = Submit(Request(1, 4ull << 30));
  node_->Step();
  EXPECT_EQ(store_->Get(a)->reason, Reason::kLaunchFailed);
  EXPECT_TRUE(mps_.released().empty()) << "a client that never was must not be released";
}

}  // namespace
}  // namespace pinpoint::daemon

namespace pinpoint::daemon {
namespace {

// The store's disk fills up (every write, truncate and sync fails with SQLITE_FULL) while full_.
class NodeFullDiskTest : public NodeTest {
 protected:
  bool full_ = false;
  store::testing::FaultyVfs vfs_{[this] { return full_ ? SQLITE_FULL : SQLITE_OK; }};
};

TEST_F(NodeFullDiskTest, EndTheStoreCannotTakeIsAnsweredFromMemoryAndStoredLater) {
  JobId id = Submit(Request(2));
  node_->Step();
  ASSERT_EQ(StateOf(id), JobState::kRunning);
  JobId next = Submit(Request(2));
  full_ = true;
  launcher_.Finish(id, Exited(0));
  EXPECT_EQ(node_->Step(), std::vector<JobId>{id}) << "waiters hear of the end at once";
  EXPECT_EQ(StateOf(id), JobState::kCompleted);
  EXPECT_EQ(store_->Get(id)->state, JobState::kRunning) << "not stored yet";
  auto cancel = node_->Cancel(caller_, {id});
  EXPECT_EQ(cancel.at(0).code(), Code::kFailedPrecondition);
  EXPECT_NE(cancel.at(0).message().find("already ended (completed)"), std::string::npos)
      << cancel.at(0).message();
  EXPECT_TRUE(node_->Step().empty()) << "an end is reported once";
  EXPECT_EQ(StateOf(id), JobState::kCompleted);
  EXPECT_EQ(StateOf(next), JobState::kPending) << "its start could not be recorded either";
  full_ = false;
  EXPECT_TRUE(node_->Step().empty());
  EXPECT_EQ(store_->Get(id)->state, JobState::kCompleted);
  EXPECT_EQ(StateOf(id), JobState::kCompleted);
  EXPECT_EQ(StateOf(next), JobState::kRunning);
}

TEST_F(NodeFullDiskTest, RestartBeforeTheEndIsStoredStillFindsTheRealExit) {
  JobId id = Submit(Request(0));
  node_->Step();
  full_ = true;
  launcher_.Finish(id, Exited(0));
  node_->Step();
  node_.reset();  // the daemon dies before the disk has room again
  full_ = false;
  MakeNode(TwoGpus());
  ASSERT_TRUE(node_->Recover().ok());
  EXPECT_EQ(store_->Get(id)->state, JobState::kCompleted) << "never failed (lost)";
  EXPECT_EQ(store_->Get(id)->exit_code, 0);
}

TEST_F(NodeFullDiskTest, CancelOfAPendingJobThatCannotBeStoredLeavesItPending) {
  JobId big = Submit(Request(2));
  JobId waiting = Submit(Request(2));
  node_->Step();
  full_ = true;
  auto cancel = node_->Cancel(caller_, {waiting});
  EXPECT_EQ(cancel.at(0).code(), Code::kIo);
  EXPECT_EQ(StateOf(waiting), JobState::kPending) << "no end that a restart would undo";
  full_ = false;
  EXPECT_TRUE(node_->Cancel(caller_, {waiting}).at(0).ok());
  EXPECT_EQ(store_->Get(waiting)->state, JobState::kCancelled);
  EXPECT_EQ(StateOf(big), JobState::kRunning);
}

}  // namespace
}  // namespace pinpoint::daemon

namespace pinpoint::daemon {
namespace {

TEST_F(NodeTest, LogsFollowNoLinkInTheJobDirectory) {
  JobId id = Submit(Request(0));
  node_->Step();
  std::string secret = dir_ + "/secret";
  { std::ofstream(secret) << "root's secret"; }
  std::string job_dir = dir_ + "/jobs/" + std::to_string(id);
  ASSERT_EQ(std::system(("mkdir -p " + job_dir).c_str()), 0);
  ASSERT_EQ(::symlink(secret.c_str(), (job_dir + "/stdout").c_str()), 0);
  auto text = node_->Logs(caller_, {id, LogStream::kStdout, 1024});
  EXPECT_FALSE(text.ok() && text->data.find("secret") != std::string::npos)
      << "read through the link";
  EXPECT_FALSE(text.ok());
  { std::ofstream(job_dir + "/stderr") << std::string(5000, 'x') << "tail"; }
  auto tail = node_->Logs(caller_, {id, LogStream::kStderr, 10});
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_EQ(tail->data, "xxxxxxtail") << "bounded to max_bytes";
  EXPECT_EQ(tail->end_offset, 5004u);
}

}  // namespace
}  // namespace pinpoint::daemon

namespace pinpoint::daemon {
namespace {}  // namespace
}  // namespace pinpoint::daemon
