// `logs -f` and `report --since/--csv` through the real daemon and CLI on a simulated node.
#include <gtest/gtest.h>

#include <fstream>
#include <future>

#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

class LogsReportTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.StartDaemon(); }
  Harness h_{"simulated:h100x2"};
};

TEST_F(LogsReportTest, FollowPrintsOutputUntilTheJobEnds) {
  std::string go = h_.dir() + "/go";
  // The job prints one line, waits for the test's file, then prints another and ends.
  auto submit = h_.Cli({"submit", "--", "sh", "-c",
                        "echo first; while [ ! -e " + go + " ]; do sleep 0.05; done; echo second"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  auto follow = std::async(std::launch::async, [&] { return h_.Cli({"logs", "-f", "1"}); });
  std::ofstream(go) << "";
  CliResult r = follow.get();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "first\nsecond\n")
      << "what was there, then what came, and an exit once the job ended";
  auto tail = h_.Cli({"logs", "--tail", "1", "1"});
  EXPECT_EQ(tail.out, "second\n");
  auto bad = h_.Cli({"logs", "--tail", "0", "1"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST_F(LogsReportTest, ReportCsvOfADateRangeKeepsHostileNamesInTheirCells) {
  auto run = h_.Cli({"submit", "--wait", "--name", "=cmd|' /C calc'!A0,\"x\"", "--", "true"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto csv = h_.Cli({"report", "--csv", "--jobs", "--since", "1d"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("id,user,name,state,", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("\r\n1,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",\"'=cmd|' /C calc'!A0,\"\"x\"\"\",completed,"), std::string::npos)
      << csv.out;
  auto none = h_.Cli({"report", "--csv", "--until", "2000-01-01"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("\r\n"), none.out.rfind("\r\n(all),0,"))
      << "no user rows before 2000: " << none.out;
  auto per_user = h_.Cli({"report", "--csv", "--since", "2000-01-01T00:00"});
  EXPECT_NE(per_user.out.find("(all),1,"), std::string::npos) << per_user.out;
  auto bad = h_.Cli({"report", "--since", "yesterday"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--since 'yesterday' is not a time"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace pinpoint::testing
