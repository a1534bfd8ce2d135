// "wait" with "ids" through the Service: one reply once the last of the jobs has ended, in the
// order asked, without environments; unknown ids refused before anything is held; the ids held
// by unanswered waits bounded per user and in all, and released when a connection closes.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {
namespace {

using nlohmann::json;

class WaitIdsTest : public ServiceFixture {
 protected:
  void SetUp() override {
    RestartOn(TwoGpus());
    CollectReplies();
  }
  JobId Submit() {
    JobRequest r;
    r.argv = {"true"};
    r.cwd = "/";
    r.env = {{"SECRET", "s3"}};
    auto job = node_->Submit(caller_, r);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  // The reply to a wait for `ids` sent by `caller` on `conn`; null when it is held.
  json Wait(const std::vector<JobId>& ids, api::ConnId conn = 1,
            std::optional<api::Caller> caller = {}) {
    WaitRequest w;
    w.ids = ids;
    std::optional<json> reply = service_->Handle(caller.value_or(caller_), ToJson(w), conn);
    return reply ? *reply : json();
  }
  void End(JobId id) {
    launch::ExitStatus exited;
    exited.kind = launch::ExitStatus::Kind::kExited;
    launcher_.Finish(id, exited);
    service_->JobsEnded(node_->Step());
  }
  static std::vector<JobId> IdsOf(const json& reply) {
    std::vector<JobId> ids;
    for (const auto& job : reply["jobs"]) ids.push_back(job["id"].get<JobId>());
    return ids;
  }
};

TEST_F(WaitIdsTest, OneReplyWhenTheLastEndsInTheOrderAsked) {
  JobId a = Submit(), b = Submit(), c = Submit();
  node_->Step();  // all three run (CPU jobs)
  EXPECT_TRUE(Wait({c, a, b, a}, 7).is_null());
  End(a);
  End(c);
  EXPECT_TRUE(replies_.empty()) << "b still runs";
  EXPECT_EQ(service_->waiting().wait_ids, 4u);
  End(b);
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].first, 7);
  const json& reply = replies_[0].second;
  EXPECT_EQ(reply["ok"], true) << reply.dump();
  EXPECT_EQ(IdsOf(reply), (std::vector<JobId>{c, a, b, a}));
  for (const auto& job : reply["jobs"]) {
    EXPECT_EQ(job["state"], "completed");
    EXPECT_FALSE(job["request"].contains("env")) << "records of several jobs carry no environment";
  }
  auto decoded = FromJson<WaitReply>(reply);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->jobs.size(), 4u);
  EXPECT_EQ(service_->waiting().wait_ids, 0u);
  End(a);  // nothing more to say to anyone
  EXPECT_EQ(replies_.size(), 1u);
}

TEST_F(WaitIdsTest, EndedJobsAreAnsweredAtOnceAndUnknownOnesRefused) {
  JobId a = Submit(), b = Submit();
  node_->Step();
  End(a);
  End(b);
  json done = Wait({b, a});
  EXPECT_EQ(done["ok"], true) << done.dump();
  EXPECT_EQ(IdsOf(done), (std::vector<JobId>{b, a}));
  JobId running = Submit();
  node_->Step();
  json refused = Wait({running, 999});
  EXPECT_EQ(refused["ok"], false);
  EXPECT_EQ(refused["error"]["code"], "not_found");
  EXPECT_EQ(service_->waiting().wait_ids, 0u) << "nothing is held for a refused wait";
}

TEST_F(WaitIdsTest, AClosedConnectionsWaitIsForgotten) {
  JobId a = Submit(), b = Submit();
  node_->Step();
  EXPECT_TRUE(Wait({a, b}, 3).is_null());
  EXPECT_TRUE(Wait({a}, 4).is_null());
  service_->Closed(3);
  EXPECT_EQ(service_->waiting().wait_ids, 1u) << "connection 4 holds its one id";
  End(a);
  End(b);
  ASSERT_EQ(replies_.size(), 1u) << "only connection 4's wait is answered";
  EXPECT_EQ(replies_[0].first, 4);
  EXPECT_EQ(service_->waiting().wait_ids, 0u);
}

// A user who names one running job kWaitMaxIds times per wait, over and over, holds memory in
// the daemon until the bounds stop it; other users and root still wait.
TEST_F(WaitIdsTest, HeldIdsAreBoundedPerUserAndInAll) {
  JobId a = Submit();
  node_->Step();
  std::vector<JobId> many(kWaitMaxIds, a);
  api::ConnId conn = 1;
  size_t held = 0;
  for (; held + kWaitMaxIds <= kWaitMaxHeldIdsPerUid; held += kWaitMaxIds)
    ASSERT_TRUE(Wait(many, conn++).is_null());
  std::vector<JobId> rest(kWaitMaxHeldIdsPerUid - held, a);
  if (!rest.empty()) {
    ASSERT_TRUE(Wait(rest, conn++).is_null());
  }
  json refused = Wait({a}, conn++);
  EXPECT_EQ(refused["error"]["code"], "unavailable") << refused.dump();
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("already waits for"),
            std::string::npos);
  api::Caller root;  // root has no per-user bound, only the node's
  EXPECT_TRUE(Wait({a}, conn++, root).is_null());

  api::Caller other;
  other.uid = 5000;
  size_t waits_of_this_uid = 0;
  while (service_->waiting().wait_ids + kWaitMaxIds <= kWaitMaxHeldIds) {
    if (waits_of_this_uid == kWaitMaxHeldIdsPerUid / kWaitMaxIds) {
      ++other.uid;  // this one holds all it may: the next user
      waits_of_this_uid = 0;
    }
    ASSERT_TRUE(Wait(many, conn++, other).is_null()) << "uid " << other.uid;
    ++waits_of_this_uid;
  }
  ++other.uid;
  refused = Wait(many, conn++, other);
  EXPECT_EQ(refused["error"]["code"], "unavailable") << refused.dump();
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("its most"), std::string::npos);

  for (api::ConnId c = 1; c < conn; ++c) service_->Closed(c);
  EXPECT_EQ(service_->waiting().wait_ids, 0u);
  EXPECT_TRUE(Wait(many, conn++).is_null()) << "closed connections give their share back";
}

// Attack: one request naming an ended job as often as it may. Each distinct id is looked up once;
// the reply still answers every id, in the order asked.
TEST_F(WaitIdsTest, ManyCopiesOfOneIdAreOneLookup) {
  JobId a = Submit();
  node_->Step();
  End(a);
  std::vector<JobId> ids(kWaitMaxIds, a);
  json reply = Wait(ids);
  ASSERT_EQ(reply["ok"], true) << reply.dump().substr(0, 300);
  EXPECT_EQ(IdsOf(reply), ids);
  JobId b = Submit();
  node_->Step();
  ids.back() = b;
  EXPECT_TRUE(Wait(ids, 2).is_null()) << "b runs: held";
  End(b);
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(IdsOf(replies_[0].second), ids);
}

}  // namespace
}  // namespace pinpoint::daemon
