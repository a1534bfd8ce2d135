// Client::SubmitEach against a real daemon on a simulated node: submits sent back to back on one
// connection are answered one each, in order, even when the requests and replies together are
// far larger than the socket's buffers (sending and reading must interleave, or both sides
// would wait for good); a refused one is answered with its error among the others.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/harness.h"
#include "pinpoint/client.h"
#include "pinpoint/job.h"

namespace pinpoint::testing {
namespace {

class SubmitEachTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.StartDaemon(); }
  static SubmitRequest Job(const std::string& name) {
    SubmitRequest s;
    s.request.name = name;
    s.request.argv = {"sleep", "1000"};
    s.request.cwd = "/";
    // 32 KiB of environment: the reply carries it back, so 64 of them fill both directions.
    s.request.env = {{"PATH", "/usr/bin:/bin"}, {"BIG", std::string(32 * 1024, 'x')}};
    s.request.gpus = 2;  // one runs, the others wait behind it
    return s;
  }
  Harness h_{"simulated:h100x2", "\"cancel_grace_ms\": 500"};
};

TEST_F(SubmitEachTest, ManyLargeSubmitsAreAnsweredInOrder) {
  auto client = Client::Connect(h_.socket());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<SubmitRequest> requests;
  for (int i = 0; i < 64; ++i) requests.push_back(Job("job-" + std::to_string(i)));
  std::vector<Result<SubmitReply>> results = client->SubmitEach(requests);
  ASSERT_EQ(results.size(), requests.size());
  JobId last = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].status().ToString();
    EXPECT_EQ(results[i]->job.request.name, "job-" + std::to_string(i))
        << "the replies are in order";
    EXPECT_GT(results[i]->job.id, last);
    last = results[i]->job.id;
  }
  auto queue = client->Queue(QueueRequest{false, std::nullopt, 1000, 0});
  ASSERT_TRUE(queue.ok()) << queue.status().ToString();
  EXPECT_EQ(queue->total, 64) << "each stored once; the connection still serves";
}

TEST_F(SubmitEachTest, ARefusedSubmitIsAnsweredWithItsErrorAmongTheOthers) {
  auto client = Client::Connect(h_.socket());
  ASSERT_TRUE(client.ok());
  std::vector<SubmitRequest> requests = {Job("a"), Job("b"), Job("c"), Job("d")};
  requests[1].request.argv.clear();  // pinpointd refuses it
  requests[2].wait = true;           // refused before it is sent
  std::vector<Result<SubmitReply>> results = client->SubmitEach(requests);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].status().code(), Code::kInvalidArgument) << results[1].status().ToString();
  EXPECT_EQ(results[2].status().code(), Code::kInvalidArgument);
  EXPECT_NE(results[2].status().message().find("with wait"), std::string::npos);
  ASSERT_TRUE(results[3].ok()) << results[3].status().ToString();
  EXPECT_EQ(results[3]->job.request.name, "d");
  EXPECT_EQ(results[3]->job.id, results[0]->job.id + 1) << "only a and d were stored";
}

}  // namespace
}  // namespace pinpoint::testing
