// 200 jobs of mixed sizes through the CLI; pinpointd is SIGKILLed mid-run and restarted; every
// job must end exactly once, in the state its program asked for.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "integration/harness.h"
#include "launch/shim.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

constexpr int kJobs = 200;

std::vector<std::string> SizeArgs(int i) {
  switch (i % 5) {
    case 0:
      return {"--gpu-mem", "4G"};
    case 1:
      return {"--gpu-mem", "10G", "--gpu-share", "25%"};
    case 2:
      return {"--gpus", "1"};
    case 3:
      return {"--gpus", "2"};
    default:
      return {};
  }
}

int ExpectedExit(int i) { return i % 10 == 7 ? 3 : 0; }

TEST(RestartTest, EveryJobEndsExactlyOnceAcrossDaemonKill) {
  Harness h("simulated:h100x2", "\"cancel_grace_ms\": 2000");
  h.StartDaemon();
  std::string runs = h.dir() + "/runs";
  std::string fifo = h.dir() + "/release";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);

  // Job 1 blocks on a FIFO, so it is certainly running when the daemon dies.
  auto first = h.Cli({"submit", "--name", "held", "--", "sh", "-c",
                      "echo $PINPOINT_JOB_ID >> " + runs + "; read x < " + fifo});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // Job 2 completes before the kill.
  auto second = h.Cli({"submit", "--wait", "--", "sh", "-c", "echo $PINPOINT_JOB_ID >> " + runs});
  ASSERT_EQ(second.exit_code, 0) << second.err << second.out;

  std::map<int, int> expected_exit{{1, 0}, {2, 0}};
  for (int i = 3; i <= kJobs; ++i) {
    std::vector<std::string> args = {"submit", "--name", "job" + std::to_string(i)};
    for (auto& a : SizeArgs(i)) args.push_back(a);
    args.insert(args.end(), {"--", "sh", "-c",
                             "echo $PINPOINT_JOB_ID >> " + runs + "; sleep 0.02; exit " +
                                 std::to_string(ExpectedExit(i))});
    auto r = h.Cli(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(r.out, "submitted job " + std::to_string(i) + "\n");
    expected_exit[i] = ExpectedExit(i);
  }

  h.KillDaemon();
  h.StartDaemon();
  EXPECT_NE(h.daemon_log().find("running adopted"), std::string::npos);
  {
    std::ofstream release(fifo);  // opens once job 1 is reading: no sleeping
    release << "go\n";
  }
  std::vector<std::string> wait_args = {"wait"};
  for (int i = 1; i <= kJobs; ++i) wait_args.push_back(std::to_string(i));
  auto waited = h.Cli(wait_args);
  EXPECT_EQ(waited.exit_code, 1) << "some jobs exit 3 on purpose: " << waited.err;

  auto listing = h.Cli({"--json", "queue", "--all", "--limit", "1000"});
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  json jobs = json::parse(listing.out);
  ASSERT_EQ(jobs.size(), static_cast<size_t>(kJobs));
  for (const auto& job : jobs) {
    int id = job["id"].get<int>();
    int want = expected_exit.at(id);
    ASSERT_EQ(job["state"], want == 0 ? "completed" : "failed") << job.dump();
    ASSERT_EQ(job["exit_code"], want) << job.dump();
  }

  std::map<int, int> run_count;
  std::ifstream in(runs);
  int id;
  while (in >> id) ++run_count[id];
  ASSERT_EQ(run_count.size(), static_cast<size_t>(kJobs));
  for (const auto& [job, count] : run_count)
    EXPECT_EQ(count, 1) << "job " << job << " ran " << count << " times";

  auto held = h.Cli({"--json", "show", "1"});
  json shown = json::parse(held.out);
  bool adopted = false;
  for (const auto& e : shown["events"]) adopted |= e["kind"] == "adopt";
  EXPECT_TRUE(adopted) << shown.dump();
}

// pinpointd stays away longer than daemon_away_limit_s: nothing enforces the running job's limits
// any more, so its supervisor ends it; the next start says so in its log and the job's record
// says why.
TEST(RestartTest, AJobWhoseDaemonStaysAwayIsEndedAndTheNextStartSaysSo) {
  Harness h("simulated:h100x2", "\"daemon_away_limit_s\": 1");
  h.StartDaemon();
  std::string fifo = h.dir() + "/up";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto submitted = h.Cli({"submit", "--", "sh", "-c", "echo $$ > " + fifo + "; exec sleep 1000"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  int64_t job = 0;
  {
    std::ifstream up(fifo);  // blocks until the job writes: it runs
    up >> job;
  }
  ASSERT_GT(job, 0);
  auto stat = ReadProcStat(job);
  ASSERT_TRUE(stat.has_value());
  int64_t shim = stat->session;  // the job's supervisor made its session
  ASSERT_GT(shim, 0);

  std::string lock = h.dir() + "/state/private/pinpointd.lock";
  EXPECT_EQ(launch::ProbeDaemonLock(lock), launch::DaemonLock::kHeld)
      << "a running pinpointd holds it";
  h.KillDaemon();
  ASSERT_TRUE(WaitForExit(shim, 120'000))
      << "the supervisor outlived the limit with its daemon away";
  EXPECT_FALSE(ProcessAlive(job));
  h.StartDaemon();
  EXPECT_NE(h.daemon_log().find("job 1: ended while pinpointd was down: no pinpointd ran for"),
            std::string::npos)
      << h.daemon_log();
  auto shown = h.Cli({"show", "1"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("killed by signal 15 (Terminated): no pinpointd ran for"),
            std::string::npos)
      << shown.out;
}

}  // namespace
}  // namespace pinpoint::testing
