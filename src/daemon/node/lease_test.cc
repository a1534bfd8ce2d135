// Leases on a Node of fakes (node.h, docs/containers.md): placement, attach rules, ends, stops.
#include <gtest/gtest.h>
#include <signal.h>

#include "daemon/jobs/lifecycle.h"
#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

constexpr char kCgroup[] = "0::/machine/libpod-c1.scope";

class LeaseTest : public ServiceFixture {
 protected:
  void SetUp() override {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.launch.lease_attach_timeout_ms = 60000;
    Restart(o);
    root_.uid = 0;
    root_.gid = 0;
  }
  LeaseRequest Slice() {
    LeaseRequest r;
    r.gpus = 1;
    r.gpu_mem_bytes = 5ull << 30;
    r.gpu_share_pct = 20;
    return r;
  }
  JobId Open() {
    auto opened = node_->OpenLease(caller_, Slice());
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? opened->lease.id : 0;
  }
  JobId OpenAttached() {
    JobId id = Open();
    containers_.SetCgroup(777, std::string(kCgroup));
    containers_.SetProcesses(kCgroup, std::vector<int64_t>{777, 778});
    EXPECT_TRUE(node_->AttachLease(root_, id, 777, caller_.uid).ok());
    return id;
  }
  JobRecord Record(JobId id) { return node_->Get(id).value(); }
  // Restarts the node with GPU 1 time-sliced; a slice request for it (no SM share there).
  LeaseRequest TimeslicedGpu1() {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.inventory.devices[1].mode = SharingMode::kTimeslice;
    o.launch.lease_attach_timeout_ms = 60000;
    Restart(o);
    LeaseRequest r = Slice();
    r.gpu_share_pct = 0;
    r.devices = {1};
    return r;
  }
  api::Caller root_;
};

// Attack: a user's lease attached to a cgroup where root's process runs; the user's close_lease
// would then kill it. Refused with one line; a cgroup of the user's processes alone is taken.
TEST_F(LeaseTest, AUsersLeaseTakesNoCgroupWhereAnotherUsersProcessRuns) {
  JobId id = Open();
  containers_.SetCgroup(777, std::string(kCgroup));
  containers_.SetProcesses(kCgroup, std::vector<int64_t>{777, 778});
  containers_.SetUids(777, caller_.uid);
  containers_.SetUids(778, 0);
  auto refused = node_->AttachLease(root_, id, 777, caller_.uid);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("holds process 778 of uid 0"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find('\n'), std::string::npos);
  EXPECT_TRUE(Record(id).lease_cgroup.empty()) << "nothing attached";
  ASSERT_TRUE(node_->CloseLease(caller_, id).ok());
  EXPECT_TRUE(containers_.signals.empty()) << "root's process was never signalled";
  JobId again = Open();
  containers_.SetUids(778, caller_.uid);
  EXPECT_TRUE(node_->AttachLease(root_, again, 777, caller_.uid).ok());
}

TEST_F(LeaseTest, OpenPlacesAtOnceAndGivesTheContainersEdits) {
  auto opened = node_->OpenLease(caller_, Slice());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->lease.kind, JobKind::kLease);
  EXPECT_EQ(opened->lease.state, JobState::kRunning);
  ASSERT_EQ(opened->lease.allocations.size(), 1u);
  EXPECT_EQ(opened->edits.env.at("CUDA_VISIBLE_DEVICES"), opened->lease.allocations[0].uuid);
  EXPECT_EQ(opened->edits.env.at("PINPOINT_JOB_ID"), std::to_string(opened->lease.id));
  // The MPS client environment is the MPS control's (FakeMps: pipe directory and memory limit).
  EXPECT_EQ(opened->edits.env.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=5120M");
  const std::string pipe = opened->edits.env.at("CUDA_MPS_PIPE_DIRECTORY");
  EXPECT_EQ(opened->edits.mounts, (std::vector<LeaseMount>{{pipe, pipe, false}}));
  ASSERT_EQ(mps_.prepared().size(), 1u);
  EXPECT_EQ(mps_.prepared()[0].gpu_share_pct, 20);
}

// Leases are counted apart from jobs in the metrics, and labelled as such.
TEST_F(LeaseTest, TheMetricsTellLeasesFromJobs) {
  JobId lease = Open();
  JobRequest job;
  job.argv = {"true"};
  job.cwd = "/";
  job.gpus = 1;
  job.gpu_mem_bytes = 1ull << 30;
  ASSERT_TRUE(node_->Submit(caller_, job).ok());
  node_->Step();
  metrics::Snapshot snap = node_->MetricsView();
  EXPECT_EQ(snap.sched.leases_running, 1);
  EXPECT_EQ(snap.sched.running, 1);
  bool seen = false;
  for (const auto& j : snap.jobs) {
    if (j.id == lease) {
      seen = true;
      EXPECT_EQ(j.kind, "lease");
    } else {
      EXPECT_EQ(j.kind, "job");
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(LeaseTest, ALeaseThatDoesNotFitNowIsRefusedAndLeavesNothingRunning) {
  LeaseRequest whole;
  whole.gpus = 2;
  ASSERT_TRUE(node_->OpenLease(caller_, whole).ok());
  auto second = node_->OpenLease(caller_, Slice());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  node_->Step();
  auto page = node_->List(false, std::nullopt, 0, 100).value();
  EXPECT_EQ(page.total, 1) << "only the first lease is active";
}

// Attack on the daemon's loop: opening a lease is one socket request; it places the lease alone
// (sched::PlaceOne) and starts no other user's job inside it. Those start at the next pass.
TEST_F(LeaseTest, OpeningALeaseStartsNoOtherJob) {
  api::Caller other;
  other.uid = 5555;
  other.gid = 5555;
  JobRecord job = node_->Submit(other, GpuSlice()).value();
  JobId lease = Open();
  EXPECT_EQ(Record(lease).state, JobState::kRunning);
  EXPECT_TRUE(launcher_.launches().empty()) << "a job was launched inside open_lease";
  EXPECT_EQ(Record(job.id).state, JobState::kPending);
  node_->Step();
  EXPECT_EQ(Record(job.id).state, JobState::kRunning);
  ASSERT_EQ(launcher_.launches().size(), 1u);
}

// What the last pass held back for a waiting job is not the lease's to take.
TEST_F(LeaseTest, ALeaseNeverTakesWhatIsHeldForAWaitingJob) {
  JobId slice = Open();
  JobRequest both;
  both.argv = {"true"};
  both.cwd = "/";
  both.gpus = 2;
  JobRecord waiting = node_->Submit(caller_, both).value();
  node_->Step();
  ASSERT_EQ(Record(waiting.id).state, JobState::kPending);
  auto refused = node_->OpenLease(caller_, Slice());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_NE(refused.status().message().find("held for job " + std::to_string(waiting.id)),
            std::string::npos)
      << refused.status().message();
  ASSERT_TRUE(node_->CloseLease(caller_, slice).ok());
  node_->Step();
  EXPECT_EQ(Record(waiting.id).state, JobState::kRunning);
}

// MPS control daemons start asynchronously (they never hold the loop): a lease placed on a
// device whose daemon is still starting waits for it, its open_lease answered once it runs.
TEST_F(LeaseTest, ALeaseWhoseMpsDaemonIsStartingIsAnsweredOnceItRuns) {
  CollectReplies();
  mps_.Fail(FailedPrecondition("the MPS control daemon of device 0 is starting"));
  nlohmann::json open{
      {"op", "open_lease"},
      {"request", {{"gpus", 1}, {"gpu_mem_bytes", 5ull << 30}, {"gpu_share_pct", 20}}}};
  EXPECT_FALSE(service_->Handle(caller_, open, /*conn=*/9).has_value()) << "deferred, not refused";
  node_->Step();
  service_->PollStartingLeases();
  EXPECT_TRUE(replies_.empty()) << "still starting";
  mps_.Fail(Status::Ok());
  node_->Step();
  service_->PollStartingLeases();
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].first, 9u);
  EXPECT_EQ(replies_[0].second["lease"]["state"], "running") << replies_[0].second.dump();
  EXPECT_EQ(replies_[0].second["edits"]["env"]["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=5120M");
}

TEST_F(LeaseTest, ALeaseWhoseMpsDaemonNeverStartsIsGivenUpWithOneLine) {
  CollectReplies();
  mps_.Fail(FailedPrecondition("the MPS control daemon of device 0 is starting"));
  nlohmann::json open{{"op", "open_lease"},
                      {"request", {{"gpus", 1}, {"gpu_mem_bytes", 5ull << 30}}}};
  EXPECT_FALSE(service_->Handle(caller_, open, /*conn=*/4).has_value());
  clock_.AdvanceMs(kLeaseStartTimeoutMs);
  node_->Step();
  service_->PollStartingLeases();
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].second["error"]["code"], "unavailable") << replies_[0].second.dump();
  std::string message = replies_[0].second["error"]["message"];
  EXPECT_NE(message.find("not started within 30 s"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  node_->Step();
  EXPECT_EQ(node_->List(false, std::nullopt, 0, 100)->total, 0) << "nothing stays behind";
}

// A restart does not forget a lease that waits for its MPS daemon: it is still given up in time.
TEST_F(LeaseTest, AStartingLeaseIsGivenUpAfterARestartToo) {
  mps_.Fail(FailedPrecondition("the MPS control daemon of device 0 is starting"));
  auto opened = node_->OpenLease(caller_, Slice());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ASSERT_EQ(opened->lease.state, JobState::kPending);
  NodeOptions o;
  o.inventory = TwoGpus();
  Restart(o);
  clock_.AdvanceMs(kLeaseStartTimeoutMs);
  node_->Step();
  EXPECT_EQ(Record(opened->lease.id).reason, Reason::kLeaseNotPlaced);
  EXPECT_EQ(Record(opened->lease.id).state, JobState::kCancelled);
}

TEST_F(LeaseTest, OnlyRootMayAttach) {
  JobId id = Open();
  containers_.SetCgroup(777, std::string(kCgroup));
  auto attach = node_->AttachLease(caller_, id, 777, std::nullopt);
  ASSERT_FALSE(attach.ok());
  EXPECT_EQ(attach.status().code(), Code::kPermissionDenied);
  EXPECT_TRUE(Record(id).lease_cgroup.empty());
}

TEST_F(LeaseTest, AContainerOfAnotherUidIsRefused) {
  JobId id = Open();
  containers_.SetCgroup(777, std::string(kCgroup));
  auto attach = node_->AttachLease(root_, id, 777, 0u);
  ASSERT_FALSE(attach.ok());
  EXPECT_EQ(attach.status().code(), Code::kPermissionDenied);
}

// pinpoint-k8s opens leases as root for pods of any uid: on a time-sliced device any container
// may attach, under MPS only a container of the lease's uid (root's server would leave it hung).
TEST_F(LeaseTest, ARootLeaseTakesAContainerOfAnyUidOnlyWithoutMps) {
  LeaseRequest timesliced = TimeslicedGpu1();
  auto open_ts = node_->OpenLease(root_, timesliced);
  ASSERT_TRUE(open_ts.ok()) << open_ts.status().ToString();
  ASSERT_EQ(open_ts->lease.allocations.at(0).mode, SharingMode::kTimeslice);
  containers_.SetCgroup(777, std::string(kCgroup));
  auto attached = node_->AttachLease(root_, open_ts->lease.id, 777, 1001u);
  EXPECT_TRUE(attached.ok()) << attached.status().ToString();

  LeaseRequest mps = Slice();
  mps.devices = {0};
  auto open_mps = node_->OpenLease(root_, mps);
  ASSERT_TRUE(open_mps.ok()) << open_mps.status().ToString();
  ASSERT_EQ(open_mps->lease.allocations.at(0).mode, SharingMode::kMps);
  containers_.SetCgroup(888, std::string("0::/kubepods/pod2"));
  auto refused = node_->AttachLease(root_, open_mps->lease.id, 888, 1001u);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied);
  EXPECT_TRUE(node_->AttachLease(root_, open_mps->lease.id, 888, 0u).ok());
}

// A user's lease, even time-sliced, takes only that user's container: closing it stops the
// container's processes, which must not be another user's.
TEST_F(LeaseTest, AUsersTimeslicedLeaseRefusesAnotherUidsContainer) {
  LeaseRequest timesliced = TimeslicedGpu1();
  auto opened = node_->OpenLease(caller_, timesliced);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  containers_.SetCgroup(777, std::string(kCgroup));
  EXPECT_EQ(node_->AttachLease(root_, opened->lease.id, 777, caller_.uid + 1).status().code(),
            Code::kPermissionDenied);
}

TEST_F(LeaseTest, ARefusedCgroupIsNotAttached) {
  JobId id = Open();
  containers_.SetCgroup(1, FailedPrecondition("pid 1: it is in the root cgroup"));
  auto attach = node_->AttachLease(root_, id, 1, std::nullopt);
  ASSERT_FALSE(attach.ok());
  EXPECT_EQ(attach.status().code(), Code::kFailedPrecondition);
}

TEST_F(LeaseTest, AttachingASecondCgroupOrOneAnotherLeaseHoldsIsRefused) {
  JobId first = OpenAttached();
  containers_.SetCgroup(900, std::string("0::/machine/libpod-c2.scope"));
  EXPECT_EQ(node_->AttachLease(root_, first, 900, std::nullopt).status().code(),
            Code::kFailedPrecondition);
  EXPECT_TRUE(node_->AttachLease(root_, first, 777, std::nullopt).ok())
      << "the same cgroup again is fine";
  JobId second = Open();
  EXPECT_EQ(node_->AttachLease(root_, second, 777, std::nullopt).status().code(),
            Code::kFailedPrecondition);
}

TEST_F(LeaseTest, AJobIsNoLease) {
  JobRequest job;
  job.argv = {"true"};
  job.cwd = "/";
  auto submitted = node_->Submit(caller_, job).value();
  EXPECT_EQ(node_->AttachLease(root_, submitted.id, 777, std::nullopt).status().code(),
            Code::kNotFound);
  EXPECT_EQ(node_->CloseLease(caller_, submitted.id).status().code(), Code::kNotFound);
}

TEST_F(LeaseTest, AnotherUserCannotCloseIt) {
  JobId id = OpenAttached();
  api::Caller other;
  other.uid = 5555;
  other.gid = 5555;
  EXPECT_EQ(node_->CloseLease(other, id).status().code(), Code::kPermissionDenied);
  EXPECT_EQ(Record(id).state, JobState::kRunning);
}

TEST_F(LeaseTest, CloseOfAnEmptyContainerEndsItAndTwiceIsFine) {
  JobId id = OpenAttached();
  containers_.SetProcesses(kCgroup, std::vector<int64_t>{});
  auto closed = node_->CloseLease(root_, id);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->state, JobState::kCompleted);
  EXPECT_EQ(closed->reason, Reason::kLeaseClosed);
  node_->Step();
  auto again = node_->CloseLease(root_, id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->reason, Reason::kLeaseClosed);
}

// The daemon removes an ended lease's CDI spec through LeaseSpecs, whatever ended it; a job's
// end removes none, and a spec that cannot be removed does not keep the lease from ending.
TEST_F(LeaseTest, AnEndedLeasesSpecIsRemovedOnce) {
  JobId closed = OpenAttached();
  containers_.SetProcesses(kCgroup, std::vector<int64_t>{});
  ASSERT_TRUE(node_->CloseLease(root_, closed).ok());
  EXPECT_EQ(lease_specs_.removed, std::vector<JobId>{closed});
  ASSERT_TRUE(node_->CloseLease(root_, closed).ok());
  EXPECT_EQ(lease_specs_.removed.size(), 1u) << "closing an ended lease again removes nothing";

  JobRecord job = node_->Submit(caller_, GpuSlice()).value();
  node_->Step();
  ASSERT_TRUE(node_->Cancel(caller_, {job.id})[0].ok());
  node_->Step();
  EXPECT_EQ(lease_specs_.removed.size(), 1u) << "a job has no spec";

  lease_specs_.fail = true;
  JobId unattached = Open();
  clock_.AdvanceMs(60000);
  node_->Step();
  EXPECT_EQ(Record(unattached).reason, Reason::kLeaseNotAttached)
      << "ended although its spec stayed";
  EXPECT_EQ(lease_specs_.removed.back(), unattached);
}

TEST_F(LeaseTest, CloseWithProcessesLeftStopsTheCgroup) {
  JobId id = OpenAttached();
  auto closed = node_->CloseLease(caller_, id);
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(closed->cancel_requested);
  ASSERT_FALSE(containers_.signals.empty());
  EXPECT_EQ(containers_.signals.back(), std::make_pair(std::string(kCgroup), SIGTERM));
  containers_.SetProcesses(kCgroup, std::nullopt);
  node_->Step();
  EXPECT_EQ(Record(id).state, JobState::kCancelled);
}

TEST_F(LeaseTest, ALeaseEndsWhenItsCgroupEmpties) {
  JobId id = OpenAttached();
  node_->Step();
  EXPECT_EQ(Record(id).state, JobState::kRunning);
  containers_.SetProcesses(kCgroup, std::vector<int64_t>{});
  node_->Step();
  EXPECT_EQ(Record(id).state, JobState::kCompleted);
  EXPECT_EQ(Record(id).reason, Reason::kLeaseEmptied);
}

TEST_F(LeaseTest, ALeaseNeverAttachedEndsAfterTheTimeout) {
  JobId id = Open();
  clock_.AdvanceMs(59999);
  node_->Step();
  EXPECT_EQ(Record(id).state, JobState::kRunning);
  clock_.AdvanceMs(1);
  node_->Step();
  EXPECT_EQ(Record(id).state, JobState::kCompleted);
  EXPECT_EQ(Record(id).reason, Reason::kLeaseNotAttached);
}

TEST_F(LeaseTest, CancelKillsTheCgroupAfterTheGrace) {
  JobId id = OpenAttached();
  ASSERT_TRUE(node_->Cancel(caller_, {id}).front().ok());
  EXPECT_EQ(containers_.signals.back().second, SIGTERM);
  clock_.AdvanceMs(node_->options().launch.cancel_grace_ms);
  node_->Step();
  EXPECT_EQ(containers_.signals.back(), std::make_pair(std::string(kCgroup), SIGKILL));
}

TEST_F(LeaseTest, ALeaseSurvivesARestartAttached) {
  JobId id = OpenAttached();
  NodeOptions o = node_->options();
  o.inventory = node_->devices();
  Restart(o);
  EXPECT_EQ(Record(id).state, JobState::kRunning);
  EXPECT_EQ(Record(id).lease_cgroup, kCgroup);
  EXPECT_EQ(Record(id).kind, JobKind::kLease);
  containers_.SetProcesses(kCgroup, std::vector<int64_t>{});
  node_->Step();
  EXPECT_EQ(Record(id).reason, Reason::kLeaseEmptied);
}

TEST(LeaseEndTest, DecidedByTheRules) {
  JobRecord lease;
  lease.kind = JobKind::kLease;
  EXPECT_EQ(lifecycle::DecideLeaseEnd(lease, Reason::kLeaseEmptied, false, 5).state,
            JobState::kCompleted);
  EXPECT_EQ(lifecycle::DecideLeaseEnd(lease, Reason::kLeaseEmptied, true, 5).reason,
            Reason::kGpuFault);
  lease.stop_reason = Reason::kGpuMemExceeded;
  EXPECT_EQ(lifecycle::DecideLeaseEnd(lease, Reason::kLeaseEmptied, false, 5).reason,
            Reason::kGpuMemExceeded);
  lease.stop_reason = Reason::kNone;
  lease.cancel_requested = true;
  EXPECT_EQ(lifecycle::DecideLeaseEnd(lease, Reason::kLeaseClosed, false, 5).state,
            JobState::kCancelled);
}

}  // namespace
}  // namespace pinpoint::daemon
