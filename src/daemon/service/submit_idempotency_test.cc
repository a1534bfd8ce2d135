// A submit retried with its idempotency key (its reply was lost) gets the first job back instead
// of a second one: through the Node, through the Service (the wire op), and across a restart.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

using nlohmann::json;

class SubmitIdempotencyTest : public ServiceFixture {
 protected:
  void SetUp() override { Restart(); }
  // A new Node and store over the same state directory, as after a daemon restart.
  void Restart() {
    NodeOptions o;
    o.inventory.host.cpus = 8;
    o.inventory.host.mem_bytes = 16ull << 30;
    o.identity.backend_kind = "simulated:test";
    o.identity.simulated = true;
    ServiceFixture::Restart(o);
  }
  static JobRequest Request(std::string arg = "train") {
    JobRequest r;
    r.argv = {"python3", std::move(arg)};
    r.cwd = "/";
    return r;
  }
  json SubmitOp(const std::string& key, bool wait = false) {
    json op{{"op", "submit"}, {"request", ToJson(Request())}, {"idempotency_key", key}};
    if (wait) op["wait"] = true;
    std::optional<json> reply = service_->Handle(caller_, op, /*conn=*/1);
    return reply ? *reply : json{{"deferred", true}};
  }
  size_t StoredJobs() { return store_->List({})->size(); }
};

TEST_F(SubmitIdempotencyTest, RetryWithTheSameKeyReturnsTheFirstJob) {
  auto first = node_->Submit(caller_, Request(), "k-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto retry = node_->Submit(caller_, Request(), "k-1");
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(retry->id, first->id);
  EXPECT_EQ(StoredJobs(), 1u);
  EXPECT_EQ(node_->active_count(), 1u);

  auto other = node_->Submit(caller_, Request(), "k-2");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->id, first->id);
  auto keyless = node_->Submit(caller_, Request());
  auto keyless_again = node_->Submit(caller_, Request());
  EXPECT_NE(keyless->id, keyless_again->id) << "without a key every submit is a new job";
}

TEST_F(SubmitIdempotencyTest, SameKeyFromAnotherUserIsAnotherJob) {
  auto mine = node_->Submit(caller_, Request(), "shared");
  api::Caller other = caller_;
  other.uid = 4343;
  auto theirs = node_->Submit(other, Request(), "shared");
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
  EXPECT_NE(theirs->id, mine->id);
  EXPECT_EQ(StoredJobs(), 2u);
}

TEST_F(SubmitIdempotencyTest, KeyReusedForADifferentRequestIsRefused) {
  auto first = node_->Submit(caller_, Request("a.py"), "k");
  ASSERT_TRUE(first.ok());
  auto other = node_->Submit(caller_, Request("b.py"), "k");
  EXPECT_EQ(other.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("job " + std::to_string(first->id)), std::string::npos);
  EXPECT_EQ(StoredJobs(), 1u);
}

TEST_F(SubmitIdempotencyTest, BadKeysAreRefusedAndNothingIsStored) {
  for (const std::string& key :
       {std::string(), std::string(129, 'k'), std::string("a b"), std::string("new\nline"),
        std::string("nul\0x", 5), std::string("\x1b]0;title\x07"), std::string("caf\xC3\xA9")}) {
    auto job = node_->Submit(caller_, Request(), key);
    EXPECT_EQ(job.status().code(), Code::kInvalidArgument) << key;
  }
  EXPECT_TRUE(node_->Submit(caller_, Request(), std::string(128, 'k')).ok());
  EXPECT_EQ(StoredJobs(), 1u);
}

TEST_F(SubmitIdempotencyTest, KeyHoldsAcrossARestart) {
  auto first = node_->Submit(caller_, Request(), "k");
  ASSERT_TRUE(first.ok());
  Restart();
  auto retry = node_->Submit(caller_, Request(), "k");
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->id, first->id);
  EXPECT_EQ(StoredJobs(), 1u);
}

TEST_F(SubmitIdempotencyTest, WireSubmitTwiceLeavesOnePendingJob) {
  json first = SubmitOp("cli-5f1e");
  json retry = SubmitOp("cli-5f1e");
  ASSERT_TRUE(first["ok"].get<bool>()) << first.dump();
  ASSERT_TRUE(retry["ok"].get<bool>()) << retry.dump();
  EXPECT_EQ(retry["job"]["id"], first["job"]["id"]);
  auto pending = node_->List(false, std::nullopt, 0, 100);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->jobs.size(), 1u);

  json op{{"op", "submit"}, {"request", ToJson(Request())}, {"idempotency_key", 7}};
  json bad = *service_->Handle(caller_, op, 1);
  EXPECT_EQ(bad["error"]["code"], "invalid_argument");
}

TEST_F(SubmitIdempotencyTest, WaitingRetryOfAnEndedJobIsAnsweredAtOnce) {
  json first = SubmitOp("k", /*wait=*/true);
  EXPECT_TRUE(first.contains("deferred")) << "the first submit --wait waits for its job";
  JobId id = node_->List(false, std::nullopt, 0, 100)->jobs.at(0).id;
  EXPECT_EQ(node_->Cancel(caller_, {id}).at(0).code(), Code::kOk);  // pending: ends at once

  json retry = SubmitOp("k", /*wait=*/true);  // the first connection was lost
  ASSERT_FALSE(retry.contains("deferred")) << "nothing would ever answer it";
  EXPECT_EQ(retry["job"]["id"], id);
  EXPECT_EQ(retry["job"]["state"], "cancelled");
}

}  // namespace
}  // namespace pinpoint::daemon
