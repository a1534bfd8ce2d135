// Time limits, dependencies and user limits on a Node of fakes (node.h, job_runner.h).
// Time moves only with the fake clock: no test sleeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "daemon/jobs/fake_users.h"
#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

using launch::ExitStatus;
using ::testing::HasSubstr;

constexpr uint32_t kAliceUid = 1001;
constexpr uint32_t kBobUid = 1002;

ExitStatus Exited(int code) {
  ExitStatus s;
  s.kind = ExitStatus::Kind::kExited;
  s.exit_code = code;
  return s;
}

ExitStatus Signaled(int signal) {
  ExitStatus s;
  s.kind = ExitStatus::Kind::kSignaled;
  s.term_signal = signal;
  return s;
}

class ConstraintsTest : public ServiceFixture {
 protected:
  void SetUp() override {
    users_.AddUser(kAliceUid, kAliceUid, "alice");
    users_.AddUser(kBobUid, kBobUid, "bob");
    users_.AddUser(0, 0, "root");
    alice_.uid = alice_.gid = kAliceUid;
    bob_.uid = bob_.gid = kBobUid;
    Start(Options());
  }
  static NodeOptions Options() {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.launch.cancel_grace_ms = 5000;
    return o;
  }
  void Start(NodeOptions o) { Restart(std::move(o), &users_); }
  static JobRequest Cpu() {
    JobRequest r;
    r.argv = {"train"};
    r.cwd = "/";
    return r;
  }
  static JobRequest SliceOf(uint64_t gib) {
    JobRequest r = Cpu();
    r.gpus = 1;
    r.gpu_mem_bytes = gib << 30;
    return r;
  }
  JobId Submit(const api::Caller& who, JobRequest r) {
    auto job = node_->Submit(who, std::move(r));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  JobRecord Job(JobId id) { return node_->Get(id).value(); }
  // Jobs 1..n of alice, each after the first submitted --afterok the one before it.
  std::vector<JobId> AfterokChain(int n) {
    std::vector<JobId> ids = {Submit(alice_, Cpu())};
    while (static_cast<int>(ids.size()) < n) {
      JobRequest r = Cpu();
      r.afterok = {ids.back()};
      ids.push_back(Submit(alice_, r));
    }
    return ids;
  }
  std::vector<JobId> Step() { return node_->Step(); }

  FakeUserDirectory users_;
  api::Caller alice_, bob_, root_;
};

// --- time limits ------------------------------------------------------------------------------

TEST_F(ConstraintsTest, AJobPastItsLimitIsStoppedAsACancelStopsItAndEndsTimeLimit) {
  launcher_.SetSignalsEndJobs(false);  // a job that ignores SIGTERM
  JobRequest r = SliceOf(4);
  r.time_limit_s = 60;
  JobId id = Submit(alice_, r);
  clock_.AdvanceMs(30'000);  // pending time does not count
  Step();
  ASSERT_EQ(Job(id).state, JobState::kRunning);
  clock_.AdvanceMs(59'999);
  Step();
  EXPECT_TRUE(launcher_.signals().empty()) << "one millisecond before its limit";
  clock_.AdvanceMs(1);
  Step();
  ASSERT_EQ(launcher_.signals().size(), 1u);
  EXPECT_EQ(launcher_.signals()[0], (std::pair<JobId, int>{id, SIGTERM}));
  ASSERT_EQ(mps_.stopped().size(), 1u) << "MPS terminate_client first, as for a cancel";
  JobRecord stopping = Job(id);
  EXPECT_TRUE(stopping.cancel_requested);
  EXPECT_EQ(stopping.stop_reason, Reason::kTimeLimit);
  EXPECT_EQ(store_->Get(id)->stop_reason, Reason::kTimeLimit) << "recorded before it is acted on";
  clock_.AdvanceMs(5000);  // the cancel grace
  Step();
  ASSERT_EQ(launcher_.signals().size(), 2u);
  EXPECT_EQ(launcher_.signals()[1].second, SIGKILL);
  launcher_.Finish(id, Signaled(SIGKILL));
  EXPECT_EQ(Step(), std::vector<JobId>{id});
  JobRecord ended = store_->Get(id).value();
  EXPECT_EQ(ended.state, JobState::kFailed);
  EXPECT_EQ(ended.reason, Reason::kTimeLimit);
  EXPECT_EQ(ended.detail, "ran past its time limit of 1:00 (killed by signal 9 (Killed))");
  EXPECT_EQ(mps_.released().size(), 1u);
}

TEST_F(ConstraintsTest, AJobThatEndsInTimeOrIsCancelledFirstKeepsItsOwnEnd) {
  JobRequest r = Cpu();
  r.time_limit_s = 10;
  JobId done = Submit(alice_, r);
  JobId cancelled = Submit(alice_, r);
  Step();
  launcher_.Finish(done, Exited(0));
  ASSERT_TRUE(node_->Cancel(alice_, {cancelled})[0].ok());
  clock_.AdvanceMs(10'000);
  Step();
  EXPECT_EQ(store_->Get(done)->reason, Reason::kExitedZero);
  EXPECT_EQ(store_->Get(cancelled)->reason, Reason::kCancelled);
  EXPECT_EQ(launcher_.signals().size(), 1u) << "the cancel's SIGTERM only";
}

TEST_F(ConstraintsTest, TheDefaultAppliesWithoutALimitAndTheMaxRefusesMore) {
  NodeOptions o = Options();
  o.admission.default_time_limit_s = 3600;
  o.admission.max_time_limit_s = 7200;
  Start(o);
  JobId plain = Submit(alice_, Cpu());
  EXPECT_EQ(store_->Get(plain)->request.time_limit_s, 3600)
      << "stored with the limit it runs under";
  JobRequest most = Cpu();
  most.time_limit_s = 7200;
  EXPECT_EQ(store_->Get(Submit(alice_, most))->request.time_limit_s, 7200);
  JobRequest over = Cpu();
  over.time_limit_s = 7201;
  for (const api::Caller& who : {alice_, root_}) {
    auto refused = node_->Submit(who, over);
    EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
    EXPECT_EQ(refused.status().message(),
              "time limit 2:00:01 is above 2:00:00, the most this node allows (max_time_limit)");
  }
  EXPECT_EQ(store_->List({})->size(), 2u) << "a refused job is not stored";
  o.admission.default_time_limit_s = 0;
  Start(o);
  EXPECT_EQ(store_->Get(Submit(alice_, Cpu()))->request.time_limit_s, 7200)
      << "no default: the max";
}

TEST_F(ConstraintsTest, ARetryWithTheSameKeyFindsTheJobTheDefaultLimitWasAddedTo) {
  NodeOptions o = Options();
  o.admission.default_time_limit_s = 600;
  Start(o);
  auto first = node_->Submit(alice_, Cpu(), std::string("key-1"));
  auto again = node_->Submit(alice_, Cpu(), std::string("key-1"));
  ASSERT_TRUE(first.ok() && again.ok()) << again.status().ToString();
  EXPECT_EQ(first->id, again->id);
}

TEST_F(ConstraintsTest, AJobAdoptedAfterARestartKeepsItsDeadline) {
  JobRequest r = Cpu();
  r.time_limit_s = 120;
  JobId id = Submit(alice_, r);
  Step();
  clock_.AdvanceMs(100'000);
  Start(Options());  // the fake launcher still runs it: adopted
  ASSERT_EQ(Job(id).state, JobState::kRunning);
  clock_.AdvanceMs(19'999);
  Step();
  EXPECT_TRUE(launcher_.signals().empty());
  clock_.AdvanceMs(1);
  Step();
  ASSERT_EQ(launcher_.signals().size(), 1u) << "120 s after its start, not after the restart";
  Step();
  EXPECT_EQ(store_->Get(id)->reason, Reason::kTimeLimit);
}

// --signal: a training told in time to checkpoint (it goes on: signals here end no job).
TEST_F(ConstraintsTest, ASignalGoesOnceItsSecondsBeforeTheLimitAndNotAgainAfterARestart) {
  launcher_.SetSignalsEndJobs(false);
  JobRequest r = Cpu();
  r.time_limit_s = 600;
  r.signal = SIGUSR1;
  r.signal_before_s = 120;
  JobId id = Submit(alice_, r);
  Step();
  ASSERT_EQ(Job(id).state, JobState::kRunning);
  clock_.AdvanceMs(480'000 - 1);
  Step();
  EXPECT_TRUE(launcher_.signals().empty()) << "not before 8 minutes of its 10";
  clock_.AdvanceMs(1);
  Step();
  using Sent = std::vector<std::pair<JobId, int>>;
  EXPECT_EQ(launcher_.signals(), (Sent{{id, SIGUSR1}}));
  EXPECT_TRUE(launcher_.leader_signals().empty()) << "to its process group, without B:";
  EXPECT_EQ(Job(id).state, JobState::kRunning);
  EXPECT_FALSE(Job(id).cancel_requested) << "a warning, not a stop";
  Step();
  EXPECT_EQ(launcher_.signals().size(), 1u) << "once";
  auto events = store_->Events(id).value();
  ASSERT_EQ(events.back().kind, "signal");
  EXPECT_EQ(events.back().detail, "sent signal 10 to its processes, 120 s before its time limit");
  Start(Options());  // the fake launcher still runs it: adopted
  Step();
  EXPECT_EQ(launcher_.signals().size(), 1u)
      << "its events say it was sent: a restart does not send it again";
  clock_.AdvanceMs(120'000);
  Step();
  EXPECT_EQ(launcher_.signals(), (Sent{{id, SIGUSR1}, {id, SIGTERM}}))
      << "then the limit's own stop";
}

TEST_F(ConstraintsTest, ASignalWithBGoesToTheFirstProcessAloneAndAJobBeingStoppedGetsNone) {
  launcher_.SetSignalsEndJobs(false);
  JobRequest r = Cpu();
  r.time_limit_s = 60;
  r.signal = SIGUSR2;
  r.signal_before_s = 600;  // more than the limit: due at once
  r.signal_leader_only = true;
  JobId first = Submit(alice_, r);
  r.signal_leader_only = false;
  JobId cancelled = Submit(alice_, r);
  launcher_.SetNotStarted(cancelled, true);
  Step();  // they start
  Step();  // the signal was due at the start
  using Sent = std::vector<std::pair<JobId, int>>;
  EXPECT_EQ(launcher_.leader_signals(), (Sent{{first, SIGUSR2}}));
  EXPECT_TRUE(launcher_.signals().empty());
  ASSERT_TRUE(node_->Cancel(alice_, {cancelled}).front().ok());
  launcher_.SetNotStarted(cancelled, false);
  Step();
  EXPECT_EQ(launcher_.signals(), (Sent{{cancelled, SIGTERM}}))
      << "its cancel's SIGTERM, no warning";
}

TEST_F(ConstraintsTest, ASignalWithoutATimeLimitIsRefusedAtSubmit) {
  JobRequest r = Cpu();
  r.signal = SIGUSR1;
  r.signal_before_s = 60;
  auto refused = node_->Submit(alice_, r);
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "--signal is sent before the time limit, and this job has none: give "
            "--time too (this node sets no default_time_limit)");
  NodeOptions o = Options();
  o.admission.default_time_limit_s = 3600;
  Start(o);
  EXPECT_EQ(store_->Get(Submit(alice_, r))->request.signal, SIGUSR1)
      << "the node's default limit will do";
}

// A lease holds its slice no longer than a job would (issue 55): it takes the node's default
// time limit, and is stopped at it (daemon/node/lease_limits_test.cc has the rest).
TEST_F(ConstraintsTest, LeasesTakeTheNodesDefaultTimeLimit) {
  NodeOptions o = Options();
  o.admission.default_time_limit_s = 60;
  Start(o);
  LeaseRequest lease;
  lease.gpu_mem_bytes = 4ull << 30;
  auto opened = node_->OpenLease(alice_, lease);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->lease.request.time_limit_s, 60);
  containers_.SetCgroup(777, std::string("0::/machine/libpod-c1.scope"));
  containers_.SetProcesses("0::/machine/libpod-c1.scope", std::vector<int64_t>{777});
  ASSERT_TRUE(node_->AttachLease(root_, opened->lease.id, 777, kAliceUid).ok());
  clock_.AdvanceMs(59'999);
  Step();
  EXPECT_FALSE(Job(opened->lease.id).cancel_requested);
  clock_.AdvanceMs(1);
  Step();
  EXPECT_TRUE(Job(opened->lease.id).cancel_requested);
  EXPECT_EQ(Job(opened->lease.id).stop_reason, Reason::kTimeLimit);
}

// --- dependencies -----------------------------------------------------------------------------

TEST_F(ConstraintsTest, AnAfterokChainStartsInTurnAndWaitsWithTheReasonDependency) {
  std::vector<JobId> chain = AfterokChain(3);
  JobId a = chain[0], b = chain[1], c = chain[2];
  Step();
  EXPECT_EQ(Job(a).state, JobState::kRunning);
  EXPECT_EQ(Job(b).reason, Reason::kDependency);
  EXPECT_EQ(Job(b).detail, "waits for job " + std::to_string(a) + " to complete (afterok)");
  EXPECT_EQ(Job(c).reason, Reason::kDependency);
  launcher_.Finish(a, Exited(0));
  Step();
  EXPECT_EQ(Job(b).state, JobState::kRunning);
  EXPECT_EQ(Job(c).state, JobState::kPending);
  launcher_.Finish(b, Exited(0));
  Step();
  EXPECT_EQ(Job(c).state, JobState::kRunning) << "b's end came from the store's cache or memory";
}

TEST_F(ConstraintsTest, AFailedDependencyCancelsTheWholeChainInOnePass) {
  std::vector<JobId> chain = AfterokChain(3);
  JobId a = chain[0], b = chain[1], c = chain[2];
  JobRequest r = Cpu();
  r.after = {c};
  JobId d = Submit(alice_, r);  // after: any end of c will do
  Step();
  launcher_.Finish(a, Exited(3));
  std::vector<JobId> ended = Step();
  EXPECT_THAT(ended, ::testing::UnorderedElementsAre(a, b, c)) << "their waiters are answered";
  for (JobId id : {b, c}) {
    JobRecord job = store_->Get(id).value();
    EXPECT_EQ(job.state, JobState::kCancelled) << id;
    EXPECT_EQ(job.reason, Reason::kDependencyNeverSatisfied) << id;
    EXPECT_EQ(job.cancelled_by, "pinpoint");
  }
  EXPECT_EQ(store_->Get(b)->detail,
            "job " + std::to_string(a) + " failed, and afterok needs it to complete");
  EXPECT_EQ(store_->Get(c)->detail,
            "job " + std::to_string(b) + " can never start, and afterok needs it to complete");
  EXPECT_EQ(Job(d).state, JobState::kRunning);
  EXPECT_EQ(launcher_.launches().size(), 2u) << "b and c never ran";
}

TEST_F(ConstraintsTest, AfterIsMetByACancelAndDependenciesOnEndedJobsComeFromTheStore) {
  JobId a = Submit(alice_, Cpu());
  Step();
  ASSERT_TRUE(node_->Cancel(alice_, {a})[0].ok());
  Step();
  ASSERT_EQ(store_->Get(a)->state, JobState::kCancelled);
  Start(Options());  // a is known to the store only
  JobRequest after = Cpu();
  after.after = {a};
  JobId b = Submit(alice_, after);
  Step();
  EXPECT_EQ(Job(b).state, JobState::kRunning);
}

// As Slurm: an afterok on a job that has already ended without completing is refused at submit
// (it could only be cancelled at the next pass), from memory or from the store alike.
TEST_F(ConstraintsTest, AnAfterokThatCanNeverBeMetIsRefusedAtSubmit) {
  JobId failed = Submit(alice_, Cpu());
  JobId done = Submit(alice_, Cpu());
  JobId cancelled = Submit(alice_, Cpu());
  ASSERT_TRUE(node_->Cancel(alice_, {cancelled})[0].ok());
  Step();
  launcher_.Finish(failed, Exited(3));
  launcher_.Finish(done, Exited(0));
  Step();
  for (bool restarted : {false, true}) {
    if (restarted) Start(Options());  // now known to the store only
    JobRequest r = Cpu();
    r.afterok = {done, failed};
    auto refused = node_->Submit(alice_, r);
    EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition) << restarted;
    EXPECT_EQ(refused.status().message(),
              "job " + std::to_string(failed) +
                  " has already ended failed: afterok on it can never be met "
                  "(after waits for any end)");
    r.afterok = {cancelled};
    EXPECT_EQ(node_->Submit(alice_, r).status().message(),
              "job " + std::to_string(cancelled) +
                  " has already ended cancelled: afterok on it can never be met (after waits for "
                  "any end)");
  }
  EXPECT_EQ(store_->List({})->size(), 3u) << "refused jobs are not stored";
  JobRequest r = Cpu();
  r.afterok = {done};
  EXPECT_TRUE(node_->Submit(alice_, r).ok());
  r.afterok.clear();
  r.after = {failed, cancelled};
  EXPECT_TRUE(node_->Submit(alice_, r).ok()) << "after: any end will do";
}

TEST_F(ConstraintsTest, UnknownJobsAndOtherUsersJobsReadAlikeAsNotFound) {
  JobId bobs = Submit(bob_, Cpu());
  JobId alices = Submit(alice_, Cpu());
  for (std::vector<JobId> ids : {std::vector<JobId>{99999}, std::vector<JobId>{alices, bobs}}) {
    JobRequest r = Cpu();
    r.after = ids;
    auto refused = node_->Submit(alice_, r);
    EXPECT_EQ(refused.status().code(), Code::kNotFound);
    EXPECT_EQ(refused.status().message(), "no job " + std::to_string(ids.back()));
    r.after.clear();
    r.afterok = ids;
    EXPECT_EQ(node_->Submit(alice_, r).status().message(), "no job " + std::to_string(ids.back()));
  }
  EXPECT_EQ(store_->List({})->size(), 2u) << "refused jobs are not stored";
  JobRequest r = Cpu();
  r.afterok = {bobs, alices};
  EXPECT_TRUE(node_->Submit(root_, r).ok()) << "root may depend on anyone's job";
  r.as_user = "alice";
  EXPECT_TRUE(node_->Submit(root_, r).ok()) << "root submitting for alice too";
  r = Cpu();
  r.after.assign(kMaxDependencies + 1, alices);
  EXPECT_EQ(node_->Submit(alice_, r).status().code(), Code::kInvalidArgument);
}

TEST_F(ConstraintsTest, AHeldJobWithAFailedDependencyEndsToo) {
  JobId a = Submit(alice_, Cpu());
  JobRequest r = Cpu();
  r.afterok = {a};
  auto held = node_->Submit(alice_, r, std::nullopt, /*hold=*/true);
  ASSERT_TRUE(held.ok());
  Step();
  EXPECT_EQ(Job(held->id).reason, Reason::kHeld) << "held shows before dependency";
  launcher_.Finish(a, Exited(1));
  Step();
  EXPECT_EQ(store_->Get(held->id)->reason, Reason::kDependencyNeverSatisfied);
}

// --- user limits ------------------------------------------------------------------------------

TEST_F(ConstraintsTest, RunningJobsCapOneUserByNameAndItsJobStartsWhenAnotherEnds) {
  NodeOptions o = Options();
  o.pass.user_limits["alice"] = sched::UserLimit{1, std::nullopt};
  Start(o);
  JobId first = Submit(alice_, Cpu());
  JobId second = Submit(alice_, Cpu());
  JobId b1 = Submit(bob_, Cpu());
  JobId b2 = Submit(bob_, Cpu());
  Step();
  EXPECT_EQ(Job(first).state, JobState::kRunning);
  EXPECT_EQ(Job(second).reason, Reason::kUserLimit);
  EXPECT_EQ(Job(second).detail,
            "its user runs 1 job, the most user_limits allows (running_jobs 1)");
  EXPECT_EQ(Job(b1).state, JobState::kRunning);
  EXPECT_EQ(Job(b2).state, JobState::kRunning) << "bob has no entry and there is no default";
  launcher_.Finish(first, Exited(0));
  Step();
  EXPECT_EQ(Job(second).state, JobState::kRunning);
}

TEST_F(ConstraintsTest, GpuMemCountsLeasesAndADemandOverTheCapIsRefusedAtSubmit) {
  NodeOptions o = Options();
  o.pass.default_user_limit.gpu_mem_bytes = 10ull << 30;
  Start(o);
  LeaseRequest lease;
  lease.gpu_mem_bytes = 8ull << 30;
  ASSERT_TRUE(node_->OpenLease(alice_, lease).ok());
  JobId slice = Submit(alice_, SliceOf(4));
  JobId bobs = Submit(bob_, SliceOf(4));
  Step();
  EXPECT_EQ(Job(slice).reason, Reason::kUserLimit);
  EXPECT_THAT(Job(slice).detail,
              HasSubstr("its user's jobs hold 8GiB of device memory; 4GiB more"));
  EXPECT_EQ(Job(bobs).state, JobState::kRunning);
  auto refused = node_->Submit(alice_, SliceOf(11));
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("more than the 10GiB its user may hold at once"));
  lease.gpu_mem_bytes = 3ull << 30;
  auto second_lease = node_->OpenLease(alice_, lease);
  EXPECT_EQ(second_lease.status().code(), Code::kUnavailable)
      << "a lease over the cap is not placed";
  EXPECT_THAT(second_lease.status().message(), HasSubstr("user_limits"));
}

}  // namespace
}  // namespace pinpoint::daemon
