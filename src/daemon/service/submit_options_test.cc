// The daemon's side of submit's options: hold and release (with the scheduler passing held jobs
// over), env_deny, and logs for a job whose output goes to a file of its own.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {
namespace {

class SubmitOptionsTest : public ServiceFixture {
 protected:
  void SetUp() override {
    NodeOptions o;
    o.inventory = TwoGpus();
    Restart(o);
    root_.uid = 0;
  }
  JobRequest Whole() {
    JobRequest r;
    r.argv = {"true"};
    r.cwd = "/home/alice";
    r.gpus = 1;
    return r;
  }
  JobId Submit(const api::Caller& caller, JobRequest r, bool hold = false) {
    auto job = node_->Submit(caller, std::move(r), std::nullopt, hold);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  JobRecord Get(JobId id) { return node_->Get(id).value(); }
  std::vector<std::string> EventKinds(JobId id) {
    std::vector<std::string> kinds;
    auto events = node_->Events(id);
    if (events.ok())
      for (const auto& e : *events) kinds.push_back(e.kind);
    return kinds;
  }

  api::Caller root_;
};

TEST_F(SubmitOptionsTest, HeldJobIsNeverStartedUntilReleased) {
  JobId held = Submit(caller_, Whole(), /*hold=*/true);
  JobId other = Submit(caller_, Whole());
  node_->Step();
  EXPECT_EQ(Get(held).state, JobState::kPending);
  EXPECT_EQ(Get(held).hold, Hold::kUser);
  EXPECT_EQ(Get(held).reason, Reason::kHeld);
  EXPECT_EQ(Get(held).detail, "held by its owner: pinpoint release " + std::to_string(held));
  EXPECT_EQ(Get(other).state, JobState::kRunning);
  EXPECT_EQ(launcher_.launches().size(), 1u);

  EXPECT_TRUE(node_->ReleaseJobs(caller_, {held})[0].ok());
  node_->Step();
  EXPECT_EQ(Get(held).state, JobState::kRunning);
  EXPECT_EQ(Get(held).hold, Hold::kNone);
  EXPECT_EQ(EventKinds(held), (std::vector<std::string>{"submit", "release", "start"}));
}

TEST_F(SubmitOptionsTest, RootsHoldIsReleasedByRootOnlyAndSurvivesARestart) {
  JobId id = Submit(caller_, Whole());
  EXPECT_TRUE(node_->HoldJobs(caller_, {id})[0].ok());
  EXPECT_TRUE(node_->HoldJobs(root_, {id})[0].ok());
  EXPECT_EQ(Get(id).hold, Hold::kRoot);
  NodeOptions o;
  o.inventory = TwoGpus();
  Restart(o);
  node_->Step();
  EXPECT_EQ(Get(id).state, JobState::kPending) << "the hold is stored";
  EXPECT_EQ(Get(id).detail, "held by root: only root can release it");
  Status s = node_->ReleaseJobs(caller_, {id})[0];
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "job " + std::to_string(id) + " is held by root: only root can release it");
  EXPECT_TRUE(node_->ReleaseJobs(root_, {id})[0].ok());
  node_->Step();
  EXPECT_EQ(Get(id).state, JobState::kRunning);
}

TEST_F(SubmitOptionsTest, HoldErrorsPerJob) {
  JobId running = Submit(caller_, Whole());
  node_->Step();
  api::Caller stranger;
  stranger.uid = 5555;
  JobId pending = Submit(caller_, Whole(), true);
  std::vector<Status> out = node_->HoldJobs(caller_, {running, 999});
  EXPECT_EQ(out[0].code(), Code::kFailedPrecondition);
  EXPECT_EQ(out[1].code(), Code::kNotFound);
  EXPECT_EQ(node_->HoldJobs(stranger, {pending})[0].code(), Code::kPermissionDenied);
  EXPECT_EQ(node_->ReleaseJobs(stranger, {pending})[0].code(), Code::kPermissionDenied);
  EXPECT_EQ(Get(pending).hold, Hold::kUser) << "unchanged";
}

TEST_F(SubmitOptionsTest, EnvDenyIsDroppedBeforeTheStoreAndNamedInTheHistory) {
  JobRequest r = Whole();
  r.env = {{"PATH", "/usr/bin"}, {"HF_TOKEN", "hf_secret"}, {"Wandb_Api_Key", "k"}};
  JobId id = Submit(caller_, r);
  auto stored = store_->Get(id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->request.env, (std::map<std::string, std::string>{{"PATH", "/usr/bin"}}));
  auto events = node_->Events(id).value();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, "env-dropped");
  EXPECT_EQ(events[1].detail,
            "not stored (they match the node's env_deny): HF_TOKEN, Wandb_Api_Key");
}

TEST_F(SubmitOptionsTest, EnvDenyFromTheConfiguration) {
  NodeOptions o;
  o.inventory = TwoGpus();
  o.admission.env_deny = {"SITE_*"};
  Restart(o);
  JobRequest r = Whole();
  r.env = {{"SITE_X", "1"}, {"HF_TOKEN", "kept: not in this node's list"}};
  JobId id = Submit(caller_, r);
  EXPECT_EQ(store_->Get(id)->request.env,
            (std::map<std::string, std::string>{{"HF_TOKEN", "kept: not in this node's list"}}));
}

TEST_F(SubmitOptionsTest, OutputFilesGoToTheLaunchAndLogsSaysWhereTheyAre) {
  JobRequest r = Whole();
  r.name = "tr";
  r.output_path = "logs/%x-%j.out";
  JobId id = Submit(caller_, r);
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), 1u);
  std::string want = "/home/alice/logs/tr-" + std::to_string(id) + ".out";
  EXPECT_EQ(launcher_.launches()[0].stdout_path, want);
  EXPECT_EQ(launcher_.launches()[0].stderr_path, want) << "stderr goes with stdout without -e";
  for (LogStream stream : {LogStream::kStdout, LogStream::kStderr}) {
    LogsRequest request;
    request.id = id;
    request.stream = stream;
    auto logs = node_->Logs(caller_, request);
    EXPECT_EQ(logs.status().code(), Code::kFailedPrecondition);
    EXPECT_EQ(logs.status().message(), "job " + std::to_string(id) + " writes its " +
                                           LogStreamName(stream) + " to " + want +
                                           " (submit -o/-e): read it there");
  }
  JobRequest e = Whole();
  e.error_path = "/tmp/err-%u-%%";
  JobId only_err = Submit(caller_, e);
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), 2u);
  EXPECT_EQ(launcher_.launches()[1].stdout_path, "");
  EXPECT_EQ(launcher_.launches()[1].stderr_path, "/tmp/err-uid 4242-%");
  LogsRequest out_of_only_err;
  out_of_only_err.id = only_err;
  EXPECT_TRUE(node_->Logs(caller_, out_of_only_err).ok());
}

TEST_F(SubmitOptionsTest, BadOutputPatternsAreRefusedAtSubmit) {
  for (const char* pattern : {"out-%b", "dir/", "x%", "%Q"}) {
    JobRequest r = Whole();
    r.output_path = pattern;
    auto job = node_->Submit(caller_, r);
    EXPECT_EQ(job.status().code(), Code::kInvalidArgument) << pattern;
  }
}

}  // namespace
}  // namespace pinpoint::daemon
