#include "daemon/node/occupant.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "cdi/fake_lease_specs.h"
#include "daemon/jobs/fake_users.h"
#include "launch/fake_launcher.h"

namespace pinpoint::daemon {
namespace {

JobRecord RunningRecord(JobId id, JobKind kind) {
  JobRecord r;
  r.id = id;
  r.kind = kind;
  r.uid = ::getuid();
  r.gid = ::getgid();
  r.user = "alice";
  r.state = JobState::kRunning;
  r.start_ms = 1000;
  r.request.argv = {"train", "--epochs", "3"};
  r.request.cwd = "/";
  return r;
}

class OccupantTest : public ::testing::Test {
 protected:
  OccupantTest() {
    options_.identity.state_dir = "/var/lib/pinpoint";
    options_.identity.daemon_uid = ::getuid();
    options_.launch.lease_attach_timeout_ms = 500;
  }
  NodeOptions options_;
  launch::FakeLauncher launcher_;
  FakeUserDirectory users_;
  launch::FakeContainerCgroups containers_;
  cdi::FakeLeaseSpecs specs_;
  sharing::Backends sharing_;  // no backend: no client paths to mount
};

TEST_F(OccupantTest, AJobRunsUnderItsSupervisorWithTheEnvironmentGiven) {
  ShimOccupant shim(&options_, &launcher_, nullptr, &users_);
  JobRecord job = RunningRecord(7, JobKind::kJob);
  job.request.output_path = "out-%j.txt";
  auto started = shim.Start(job, {"CUDA_VISIBLE_DEVICES=GPU-0", "PINPOINT_JOB_ID=7"});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_TRUE(*started) << "a supervisor runs it: its pid is recorded";
  ASSERT_EQ(launcher_.launches().size(), 1u);
  const launch::LaunchSpec& spec = launcher_.launches()[0];
  EXPECT_EQ(spec.argv, job.request.argv);
  EXPECT_EQ(spec.env,
            (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=GPU-0", "PINPOINT_JOB_ID=7"}));
  EXPECT_EQ(spec.job_dir, "/var/lib/pinpoint/jobs/7");
  EXPECT_EQ(spec.stdout_path, "/out-7.txt");
  EXPECT_EQ(spec.stderr_path, spec.stdout_path);
  EXPECT_NE(job.pid, 0);
  EXPECT_FALSE(shim.Poll(job, 0).has_value()) << "it runs";
  ASSERT_TRUE(shim.Signal(job, SIGTERM).ok());
  EXPECT_EQ(launcher_.signals().back(), (std::pair<JobId, int>{7, SIGTERM}));
  launch::ExitStatus done;
  done.kind = launch::ExitStatus::Kind::kExited;
  launcher_.Finish(7, done);
  auto end = shim.Poll(job, 0);
  ASSERT_TRUE(end.has_value());
  ASSERT_TRUE(end->exit.has_value());
  EXPECT_EQ(end->exit->kind, launch::ExitStatus::Kind::kExited);
}

TEST_F(OccupantTest, AJobThatCannotStartEndsLaunchFailedWithTheReason) {
  ShimOccupant shim(&options_, &launcher_, nullptr, &users_);
  launcher_.FailLaunches(IoError("exec: no such file"));
  JobRecord job = RunningRecord(8, JobKind::kJob);
  auto started = shim.Start(job, {});
  ASSERT_FALSE(started.ok());
  OccupantEnd end = shim.LaunchFailed(started.status().message());
  ASSERT_TRUE(end.exit.has_value());
  EXPECT_EQ(end.exit->kind, launch::ExitStatus::Kind::kLaunchFailed);
  EXPECT_NE(end.exit->error.find("exec: no such file"), std::string::npos);
}

TEST_F(OccupantTest, ALeaseHasNoSupervisorAndEndsWhenNoContainerAttachesInTime) {
  LeaseOccupant lease(&options_, &options_.inventory, &containers_, &specs_, &sharing_);
  JobRecord job = RunningRecord(9, JobKind::kLease);
  auto started = lease.Start(job, {"CUDA_VISIBLE_DEVICES=GPU-0", "HOME=/root"});
  ASSERT_TRUE(started.ok());
  EXPECT_FALSE(*started) << "nothing to poll by pid";
  EXPECT_TRUE(launcher_.launches().empty());
  EXPECT_EQ(lease.EditsOf(9).env,
            (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "GPU-0"}}))
      << "only what a container needs";
  EXPECT_FALSE(lease.Poll(job, 1499).has_value());
  auto end = lease.Poll(job, 1500);
  ASSERT_TRUE(end.has_value());
  EXPECT_FALSE(end->exit.has_value());
  EXPECT_EQ(end->cause, Reason::kLeaseNotAttached);
  EXPECT_EQ(lease.LaunchFailed("x").cause, Reason::kLaunchFailed);
}

TEST_F(OccupantTest, AnAttachedLeaseEndsWhenItsCgroupEmptiesAndItsSpecGoesWithIt) {
  LeaseOccupant lease(&options_, &options_.inventory, &containers_, &specs_, &sharing_);
  JobRecord job = RunningRecord(10, JobKind::kLease);
  ASSERT_TRUE(lease.Start(job, {"CUDA_VISIBLE_DEVICES=GPU-0"}).ok());
  job.lease_cgroup = "/kubepods/pod1";
  containers_.SetProcesses(job.lease_cgroup, std::vector<int64_t>{4242});
  EXPECT_FALSE(lease.Poll(job, 1'000'000).has_value()) << "attached: no deadline";
  EXPECT_EQ(lease.Processes(job), std::vector<int64_t>{4242});
  ASSERT_TRUE(lease.Signal(job, SIGTERM).ok());
  EXPECT_EQ(containers_.signals.back(), (std::pair<std::string, int>{"/kubepods/pod1", SIGTERM}));
  containers_.SetProcesses(job.lease_cgroup, std::vector<int64_t>{});
  auto end = lease.Poll(job, 1'000'000);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->cause, Reason::kLeaseEmptied);
  lease.Release(job);
  EXPECT_EQ(specs_.removed, std::vector<JobId>{10});
  EXPECT_TRUE(lease.EditsOf(10).env.empty());
}

TEST_F(OccupantTest, ALeaseCancelledBeforeAnyContainerEndsCancelled) {
  LeaseOccupant lease(&options_, &options_.inventory, &containers_, &specs_, &sharing_);
  JobRecord job = RunningRecord(11, JobKind::kLease);
  job.cancel_requested = true;
  auto end = lease.Poll(job, 1001);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->cause, Reason::kCancelled);
  EXPECT_TRUE(lease.Signal(job, SIGKILL).ok()) << "nothing attached: nothing to signal";
  EXPECT_TRUE(containers_.signals.empty());
}

}  // namespace
}  // namespace pinpoint::daemon
