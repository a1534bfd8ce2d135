// `logs` with tail_lines and follow through the Service: the daemon holds a follower until its
// job writes or ends, reads only the job's own files (never through a link) and bounded, and
// holds a bounded number of followers.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/root_reserve.h"
#include "daemon/service/service_fixture.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {
namespace {

using nlohmann::json;

class LogsFollowTest : public ServiceFixture {
 protected:
  void SetUp() override {
    RestartOn(TwoGpus());
    CollectReplies();
    JobRequest r;
    r.argv = {"/bin/true"};
    r.cwd = "/";
    id_ = node_->Submit(caller_, r).value().id;
    node_->Step();  // running
    job_dir_ = dir_.path() + "/jobs/" + std::to_string(id_);
    ::mkdir((dir_.path() + "/jobs").c_str(), 0755);
    ::mkdir(job_dir_.c_str(), 0755);
  }
  void Append(const std::string& text, const std::string& stream = "stdout") {
    std::ofstream(job_dir_ + "/" + stream, std::ios::app) << text;
  }
  // The reply to `request` from `caller`, sent on connection `conn`; null when held.
  json Send(const LogsRequest& request, api::ConnId conn = 1,
            std::optional<api::Caller> caller = {}) {
    std::optional<json> reply = service_->Handle(caller.value_or(caller_), ToJson(request), conn);
    return reply ? *reply : json();
  }
  LogsRequest Follow(uint64_t from) {
    LogsRequest r{id_};
    r.from_offset = from;
    r.follow = true;
    return r;
  }
  void EndJob() {
    launch::ExitStatus exited;
    exited.kind = launch::ExitStatus::Kind::kExited;
    launcher_.Finish(id_, exited);
    service_->JobsEnded(node_->Step());
  }

  JobId id_ = 0;
  std::string job_dir_;
};

TEST_F(LogsFollowTest, TailLinesKeepsTheLastLines) {
  Append("one\ntwo\nthree\n");
  LogsRequest r{id_};
  r.tail_lines = 2;
  json reply = Send(r);
  EXPECT_EQ(reply["data"], "two\nthree\n");
  EXPECT_EQ(reply["end_offset"], 14);
  EXPECT_EQ(reply["ended"], false);
}

TEST_F(LogsFollowTest, AHugeSingleLineIsReadInBoundedPieces) {
  Append(std::string(3 * kLogsMaxBytes, 'x'));
  LogsRequest tail{id_};
  tail.tail_lines = 1;
  tail.max_bytes = kLogsMaxBytes;
  json reply = Send(tail);
  EXPECT_EQ(reply["data"].get<std::string>().size(), kLogsMaxBytes)
      << "the tail of one line is bounded";
  LogsRequest follow = Follow(0);
  follow.max_bytes = kLogsMaxBytes;
  reply = Send(follow);
  EXPECT_EQ(reply["data"].get<std::string>().size(), kLogsMaxBytes);
  EXPECT_EQ(reply["end_offset"], kLogsMaxBytes);
}

TEST_F(LogsFollowTest, AFollowerIsAnsweredWhenTheJobWritesAndWhenItEnds) {
  Append("first\n");
  json reply = Send(Follow(0));
  EXPECT_EQ(reply["data"], "first\n") << "what exists is answered at once";
  EXPECT_TRUE(Send(Follow(6)).is_null()) << "nothing new: held";
  service_->PollFollowers();
  EXPECT_TRUE(replies_.empty());
  Append("second\xE2\x82");  // a character cut in two waits for its rest
  service_->PollFollowers();
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].second["data"], "second");
  EXPECT_EQ(replies_[0].second["end_offset"], 12);
  EXPECT_EQ(replies_[0].second["ended"], false);
  EXPECT_EQ(service_->waiting().followers, 0u);

  EXPECT_TRUE(Send(Follow(12)).is_null());
  Append("\xAC\n");
  EndJob();
  service_->PollFollowers();
  ASSERT_EQ(replies_.size(), 2u);
  EXPECT_EQ(replies_[1].second["data"], "\xE2\x82\xAC\n");
  EXPECT_EQ(replies_[1].second["ended"], true) << "the job ended and its output is all read";
  EXPECT_EQ(replies_[1].second["end_offset"], 16);
  reply = Send(Follow(16));
  EXPECT_EQ(reply["ended"], true) << "a follower of an ended job is answered at once";
  EXPECT_EQ(reply["data"], "");
}

TEST_F(LogsFollowTest, AFileReplacedByALinkWhileFollowedIsNeverRead) {
  std::string secret = dir_.path() + "/shadow";
  std::ofstream(secret) << "root:$6$secret";
  Append("hello\n");
  EXPECT_TRUE(Send(Follow(6)).is_null());
  ASSERT_EQ(::unlink((job_dir_ + "/stdout").c_str()), 0);
  ASSERT_EQ(::symlink(secret.c_str(), (job_dir_ + "/stdout").c_str()), 0);
  service_->PollFollowers();
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].second["ok"], false) << replies_[0].second.dump();
  EXPECT_EQ(replies_[0].second.dump().find("secret"), std::string::npos);
  // The job directory itself swapped for a link to another directory: refused too.
  ASSERT_EQ(std::system(("rm -rf " + job_dir_).c_str()), 0);
  ASSERT_EQ(::symlink(dir_.path().c_str(), job_dir_.c_str()), 0);
  json reply = Send(Follow(0));
  EXPECT_EQ(reply["ok"], false) << reply.dump();
}

TEST_F(LogsFollowTest, FollowersAreBoundedPerUserAndInAll) {
  api::ConnId conn = 1;
  for (size_t i = 0; i < kLogsMaxFollowersPerUid; ++i)
    EXPECT_TRUE(Send(Follow(0), conn++).is_null());
  json refused = Send(Follow(0), conn++);
  EXPECT_EQ(refused["ok"], false);
  EXPECT_EQ(refused["error"]["code"], "unavailable");
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("already follows"),
            std::string::npos);
  // The node's last followers are root's (common/root_reserve.h): once users could have filled
  // them, a user is refused and root is not.
  api::Caller root;  // root has no per-user cap
  while (service_->waiting().followers < CapFor(kLogsMaxFollowers, false))
    ASSERT_TRUE(Send(Follow(0), conn++, root).is_null());
  refused = Send(Follow(0), conn++);
  EXPECT_NE(
      refused["error"]["message"].get<std::string>().find("the most for users other than root"),
      std::string::npos)
      << refused.dump();
  while (service_->waiting().followers < kLogsMaxFollowers)
    ASSERT_TRUE(Send(Follow(0), conn++, root).is_null());
  refused = Send(Follow(0), conn++, root);
  EXPECT_EQ(refused["error"]["code"], "unavailable");
  service_->Closed(1);  // a closed connection's follower is forgotten
  EXPECT_EQ(service_->waiting().followers, kLogsMaxFollowers - 1);
}

TEST_F(LogsFollowTest, AnotherUsersLogsAreRefused) {
  api::Caller other;
  other.uid = 5151;
  json reply = Send(Follow(0), 1, other);
  EXPECT_EQ(reply["error"]["code"], "permission_denied");
  EXPECT_EQ(service_->waiting().followers, 0u);
}

TEST_F(LogsFollowTest, FollowNeedsAnOffsetAndTailGoesAlone) {
  json j = ToJson(LogsRequest{id_});
  j["follow"] = true;
  EXPECT_EQ(service_->Handle(caller_, j, 1).value()["error"]["code"], "invalid_argument");
  j = ToJson(Follow(0));
  j["tail_lines"] = 3;
  EXPECT_EQ(service_->Handle(caller_, j, 1).value()["error"]["code"], "invalid_argument");
  j = ToJson(LogsRequest{id_});
  j["tail_lines"] = kLogsMaxTailLines + 1;
  EXPECT_EQ(service_->Handle(caller_, j, 1).value()["error"]["code"], "invalid_argument");
}

}  // namespace
}  // namespace pinpoint::daemon
