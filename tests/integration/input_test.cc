// Requests from a hostile client (raw protocol, not our CLI) and what root's CLI then prints;
// the queue listing's pages. A real daemon on a simulated node.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "common/raw_control.h"
#include "integration/harness.h"
#include "pinpoint/client.h"
#include "pinpoint/job.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

class InputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.StartDaemon();
    auto client = Client::Connect(h_.socket());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::make_unique<Client>(std::move(client).value());
  }
  JobRequest Blocked() {  // waits behind a job holding both GPUs
    JobRequest r;
    r.argv = {"sleep", "1000"};
    r.cwd = "/";
    r.env = {{"PATH", "/usr/bin:/bin"}, {"BIG_SETTING", std::string(200, 's')}};
    r.gpus = 1;
    return r;
  }
  Result<json> Submit(const JobRequest& r) {
    return client_->Call({{"op", "submit"}, {"request", ToJson(r)}});
  }
  void HoldBothGpus() {
    JobRequest r = Blocked();
    r.gpus = 2;
    ASSERT_TRUE(Submit(r).ok());
  }

  Harness h_{"simulated:h100x2", "\"cancel_grace_ms\": 500"};
  std::unique_ptr<Client> client_;
};

TEST_F(InputTest, ForbiddenBytesAreRefusedNamingTheField) {
  struct Case {
    const char* field;
    void (*spoil)(JobRequest&);
  } cases[] = {
      {"name", [](JobRequest& r) { r.name = "x\n7  root  backup  running"; }},
      {"name", [](JobRequest& r) { r.name = "\x1b]0;owned\x07"; }},
      {"argv[1]", [](JobRequest& r) { r.argv[1] = std::string("10\0 && rm -rf ~", 15); }},
      {"cwd", [](JobRequest& r) { r.cwd = std::string("/tmp\0/home", 10); }},
      {"env[LD_PRELOAD]", [](JobRequest& r) { r.env["LD_PRELOAD"] = std::string("\0x", 2); }},
      {"env: variable name", [](JobRequest& r) { r.env["A=B"] = "x"; }},
  };
  for (const auto& c : cases) {
    JobRequest r = Blocked();
    c.spoil(r);
    auto reply = Submit(r);
    ASSERT_FALSE(reply.ok()) << c.field;
    EXPECT_EQ(reply.status().code(), Code::kInvalidArgument) << reply.status().ToString();
    EXPECT_EQ(reply.status().message().rfind(c.field, 0), 0u) << reply.status().message();
  }
  auto all = client_->Call({{"op", "queue"}, {"all", true}});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE((*all)["jobs"].empty()) << "nothing refused was stored";
  auto cli = h_.Cli({"submit", "--name", "two\nlines", "--", "true"});
  EXPECT_EQ(cli.exit_code, 2) << cli.err;
  EXPECT_EQ(CountLines(cli.err), 1) << cli.err;
}

TEST_F(InputTest, RootsQueueAndShowPrintNoRawControlBytes) {
  HoldBothGpus();
  JobRequest r = Blocked();
  r.argv = {"sleep", "\x1b]0;you are owned\x07", "a\nb\x1b[2J",
            "\xc2\x9b"
            "31m"};  // argv may hold them
  auto job = Submit(r);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = std::to_string((*job)["job"]["id"].get<int64_t>());
  auto queue = h_.Cli({"queue"});
  ASSERT_EQ(queue.exit_code, 0) << queue.err;
  EXPECT_FALSE(HasRawControl(queue.out, /*newline_ok=*/true)) << queue.out;
  EXPECT_EQ(CountLines(queue.out), 4) << queue.out;  // header, 2 jobs, the simulated-node line
  auto show = h_.Cli({"show", id});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_FALSE(HasRawControl(show.out, /*newline_ok=*/true)) << show.out;
  EXPECT_NE(show.out.find("command:  sleep '\\x1b]0;you are owned\\x07' a\\nb\\x1b[2J \\u009b31m"),
            std::string::npos)
      << show.out;
}

TEST_F(InputTest, QueuePagesAndOmitsEnvironments) {
  HoldBothGpus();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Submit(Blocked()).ok());
  auto page = client_->Call({{"op", "queue"}, {"limit", 2}, {"offset", 1}});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ((*page)["total"], 6);
  EXPECT_EQ((*page)["more"], 3);
  ASSERT_EQ((*page)["jobs"].size(), 2u);
  EXPECT_EQ((*page)["jobs"][0]["id"], 2);
  EXPECT_FALSE((*page)["jobs"][0]["request"].contains("env")) << "listings carry no environment";
  auto show = client_->Call({{"op", "show"}, {"id", 2}});
  EXPECT_EQ((*show)["job"]["request"]["env"]["BIG_SETTING"].get<std::string>().size(), 200u)
      << "show has it";
  auto too_many = client_->Call({{"op", "queue"}, {"limit", kQueueMaxLimit + 1}});
  EXPECT_EQ(too_many.status().code(), Code::kInvalidArgument);

  auto cli = h_.Cli({"queue", "--limit", "4"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("... 2 more jobs: pinpoint queue --offset 4"), std::string::npos)
      << cli.out;
  auto next = h_.Cli({"--json", "queue", "--limit", "4", "--offset", "4"});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(json::parse(next.out).size(), 2u);
  EXPECT_EQ(next.err, "") << "the last page has no more-line";
}

}  // namespace
}  // namespace pinpoint::testing
