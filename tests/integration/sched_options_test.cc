// submit --time, --after, --afterok and the configuration's user_limits, through the real CLI
// and daemon on a simulated node. Jobs end by themselves or are waited for, never slept on.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

class SchedOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.StartDaemon(); }
  Harness h_{"simulated:h100x2", R"("cancel_grace_ms": 2000, "max_time_limit": "1h")"};
};

TEST_F(SchedOptionsTest, BadInputIsOneLineAndNeverStoresAJob) {
  std::string many;
  for (int i = 1; i <= 65; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    const char* message;
  } cases[] = {
      {{"submit", "--time", "5x", "--", "true"},
       2,
       "pinpoint: --time: invalid time limit '5x' (minutes, M:S"},
      {{"submit", "--time", "0", "--", "true"}, 2, "pinpoint: --time must be more than 0"},
      {{"submit", "--time", "2h", "--", "true"},
       6,
       "pinpoint: time limit 2:00:00 is above 1:00:00, the most this node allows (max_time_limit)"},
      {{"submit", "--after", "abc", "--", "true"}, 2, "pinpoint: --after: 'abc' is not a job id"},
      {{"submit", "--afterok", "1,,2", "--", "true"}, 2, "pinpoint: --afterok: '' is not a job id"},
      {{"submit", "--after", "99999", "--", "true"}, 4, "pinpoint: no job 99999"},
      {{"submit", "--afterok", many, "--", "true"},
       2,
       "pinpoint: too many dependencies: 65 job ids, at most 64"},
  };
  for (const auto& c : cases) {
    auto r = h_.Cli(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args[1] << " " << c.args[2] << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << r.err;
  }
  auto q = h_.Cli({"--json", "queue", "--all"});
  ASSERT_EQ(q.exit_code, 0) << q.err << " (the daemon must still answer)";
  EXPECT_EQ(json::parse(q.out).size(), 0u);
}

TEST_F(SchedOptionsTest, AJobPastItsTimeLimitEndsTimeLimitAndShowSaysWhy) {
  ASSERT_EQ(h_.Cli({"submit", "--time", "0:01", "--", "sleep", "600"}).exit_code, 0);
  auto wait = h_.Cli({"wait", "1"});
  EXPECT_EQ(wait.exit_code, 1);
  EXPECT_EQ(wait.out,
            "job 1 failed: ran past its time limit of 0:01 (killed by signal 15: Terminated)\n");
  auto show = h_.Cli({"show", "1"});
  EXPECT_NE(show.out.find("detail:   ran past its time limit of 0:01 (killed by signal 15"),
            std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("limit:    runs at most 0:01"), std::string::npos) << show.out;
  auto listed = json::parse(h_.Cli({"--json", "queue", "--all"}).out);
  EXPECT_EQ(listed[0]["request"]["time_limit_s"], 1);
}

TEST_F(SchedOptionsTest, AJobWithoutALimitGetsTheMaxAsItHasNoDefault) {
  ASSERT_EQ(h_.Cli({"submit", "--", "true"}).exit_code, 0);
  EXPECT_EQ(h_.Cli({"wait", "1"}).exit_code, 0);
  auto shown = json::parse(h_.Cli({"--json", "show", "1"}).out);
  EXPECT_EQ(shown["job"]["request"]["time_limit_s"], 3600);
}

TEST_F(SchedOptionsTest, AfterokRunsOnSuccessAndAFailureCancelsTheChain) {
  // Held until the chain is in: an afterok on a job that has already failed is refused at submit.
  ASSERT_EQ(h_.Cli({"submit", "--hold", "--", "true"}).exit_code, 0);           // 1
  ASSERT_EQ(h_.Cli({"submit", "--afterok", "1", "--", "false"}).exit_code, 0);  // 2: runs, fails
  ASSERT_EQ(h_.Cli({"submit", "--afterok", "2", "--", "true"}).exit_code, 0);   // 3: never starts
  ASSERT_EQ(h_.Cli({"submit", "--afterok", "3", "--", "true"}).exit_code, 0);   // 4: nor this
  ASSERT_EQ(h_.Cli({"submit", "--after", "2", "--", "true"}).exit_code, 0);     // 5: runs
  ASSERT_EQ(h_.Cli({"release", "1"}).exit_code, 0);
  auto wait = h_.Cli({"wait", "1", "2", "3", "5"});
  EXPECT_EQ(wait.out,
            "job 1 completed (exit code 0)\n"
            "job 2 failed (exit code 1)\n"
            "job 3 cancelled (job 2 failed, and afterok needs it to complete)\n"
            "job 5 completed (exit code 0)\n");
  // The pass that found 2 failed cancelled 3 and 4 together.
  auto wait4 = h_.Cli({"wait", "4"});
  EXPECT_EQ(wait4.out,
            "job 4 cancelled (job 3 can never start, and afterok needs it to complete)\n");
  // Now 2 has failed: a new afterok on it is refused with the reason, and nothing is stored.
  auto refused = h_.Cli({"submit", "--afterok", "2", "--", "true"});
  EXPECT_EQ(refused.exit_code, 6) << refused.err;
  EXPECT_EQ(refused.err,
            "pinpoint: job 2 has already ended failed: afterok on it can never be met (after waits "
            "for any end)\n");
  EXPECT_EQ(h_.Cli({"show", "6"}).exit_code, 4) << "no job 6";
}

TEST_F(SchedOptionsTest, APendingDependentShowsTheReasonDependency) {
  ASSERT_EQ(h_.Cli({"submit", "--", "sleep", "600"}).exit_code, 0);
  ASSERT_EQ(h_.Cli({"submit", "--after", "1", "--", "true"}).exit_code, 0);
  auto queue = h_.Cli({"queue"});
  EXPECT_NE(queue.out.find("dependency: waits for job 1 to end (after)"), std::string::npos)
      << queue.out;
  ASSERT_EQ(h_.Cli({"cancel", "1"}).exit_code, 0);
  EXPECT_EQ(h_.Cli({"wait", "2"}).out, "job 2 completed (exit code 0)\n");
}

TEST(SchedUserLimitsTest, TheSecondJobWaitsForTheFirstOfItsUser) {
  Harness h{"simulated:h100x2",
            R"("user_limits": {"default": {"running_jobs": 1, "gpu_mem": "40GiB"}})"};
  h.StartDaemon();
  ASSERT_EQ(h.Cli({"submit", "--", "sleep", "600"}).exit_code, 0);
  ASSERT_EQ(h.Cli({"submit", "--", "true"}).exit_code, 0);
  auto queue = h.Cli({"queue"});
  EXPECT_NE(queue.out.find(
                "user-limit: its user runs 1 job, the most user_limits allows (running_jobs 1)"),
            std::string::npos)
      << queue.out;
  auto whole = h.Cli({"submit", "--gpus", "1", "--", "true"});
  EXPECT_EQ(whole.exit_code, 6) << whole.err;
  EXPECT_NE(whole.err.find("its user may hold at once (user_limits gpu_mem)"), std::string::npos)
      << whole.err;
  ASSERT_EQ(h.Cli({"cancel", "1"}).exit_code, 0);
  EXPECT_EQ(h.Cli({"wait", "2"}).out, "job 2 completed (exit code 0)\n");
}

}  // namespace
}  // namespace pinpoint::testing
