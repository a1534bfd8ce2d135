// A GPU process of a user, in no job, on the GPUs of that user's job that ended: the real
// pinpointd on a simulated node (which finds GPU processes by their declared usage,
// PINPOINT_SIMULATED_GPU_MEM and CUDA_VISIBLE_DEVICES) keeps the GPUs from the next job, names
// the process everywhere a person looks, keeps the hold across a restart, and kills the process
// at the settle deadline (docs/security.md).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/spawn.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

constexpr int kDeadlineMs = 120'000;

class GpuHoldTest : public ::testing::Test {
 protected:
  void Start(int settle_deadline_s) {
    h_ = std::make_unique<Harness>(
        "simulated:h100x2",
        "\"watch_interval_ms\": 100, \"settle_deadline_s\": " + std::to_string(settle_deadline_s));
    h_->StartDaemon();
  }
  json Json(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--json"};
    all.insert(all.end(), args.begin(), args.end());
    CliResult r = h_->Cli(all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }
  // Asks until `done` holds; each answer is a round trip to the daemon, no sleeping.
  json Until(const std::vector<std::string>& args, const std::function<bool(const json&)>& done) {
    json reply;
    for (int i = 0; i < 20000; ++i) {
      reply = Json(args);
      if (done(reply)) return reply;
    }
    ADD_FAILURE() << "condition never held: " << reply.dump() << "\n" << h_->daemon_log();
    return reply;
  }
  // A "CUDA process" of this user, in no job, on GPU 0: a sleep that declares 1 GiB on it.
  pid_t LooseProcessOnGpu0() {
    std::string uuid = Json({"gpus"})["devices"][0]["uuid"].get<std::string>();
    std::vector<std::string> env = EnvironmentWith("PINPOINT_SIMULATED_GPU_MEM", "1G");
    env.push_back("CUDA_VISIBLE_DEVICES=" + uuid);
    env.push_back("PINPOINT_SIMULATED_NODE=" + h_->dir() + "/state");  // this test's node alone
    auto pid = Spawn({.argv = {"sleep", "3600"}, .env = env, .new_session = true});
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    return pid.ok() ? *pid : -1;
  }
  // Submits `args` and waits for its end; its id.
  int64_t RunToEnd(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"submit", "--wait"};
    all.insert(all.end(), args.begin(), args.end());
    json r = Json(all);
    return r.is_object() && r.contains("id") ? r["id"].get<int64_t>() : 0;
  }
  int64_t Submit(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"submit"};
    all.insert(all.end(), args.begin(), args.end());
    json r = Json(all);
    return r.is_object() && r.contains("id") ? r["id"].get<int64_t>() : 0;
  }
  static bool HasEvent(const json& show, const std::string& kind) {
    for (const auto& e : show["events"])
      if (e["kind"] == kind) return true;
    return false;
  }
  static bool HeldOn0(const json& gpus) { return gpus["devices"][0].contains("holds"); }

  std::unique_ptr<Harness> h_;
};

TEST_F(GpuHoldTest, TheNextJobWaitsEveryViewNamesTheHolderAndARestartKeepsTheHold) {
  Start(3600);
  pid_t loose = LooseProcessOnGpu0();
  ASSERT_GT(loose, 0);
  int64_t ended = RunToEnd({"--gpus", "2", "--", "true"});
  ASSERT_GT(ended, 0);
  int64_t next = Submit({"--gpus", "2", "--", "true"});
  std::string holder = "held by process " + std::to_string(loose) + " of ";
  json waiting = Until({"show", std::to_string(next)}, [&](const json& j) {
    return j["job"]["detail"].get<std::string>().find(holder) != std::string::npos;
  });
  EXPECT_EQ(waiting["job"]["state"], "pending");
  EXPECT_NE(waiting["job"]["detail"].get<std::string>().find("in no job, since job " +
                                                             std::to_string(ended)),
            std::string::npos);
  json gpus = Json({"gpus"});
  ASSERT_TRUE(HeldOn0(gpus)) << gpus.dump();
  EXPECT_EQ(gpus["devices"][0]["holds"][0]["pids"], json::array({loose}));
  EXPECT_EQ(gpus["devices"][0]["holds"][0]["job"], ended);
  EXPECT_EQ(gpus["devices"][0]["holds"][0]["deadline_ms"].get<int64_t>() -
                gpus["devices"][0]["holds"][0]["since_ms"].get<int64_t>(),
            3'600'000);
  CliResult table = h_->Cli({"gpus"});
  EXPECT_NE(table.out.find("held after their job ended"), std::string::npos) << table.out;
  EXPECT_TRUE(HasEvent(Json({"show", std::to_string(ended)}), "gpu-held"));

  h_->KillDaemon();  // a restart does not hand the GPUs on
  h_->StartDaemon();
  json since = gpus["devices"][0]["holds"][0]["since_ms"];
  gpus = Until({"gpus"}, HeldOn0);
  EXPECT_EQ(gpus["devices"][0]["holds"][0]["since_ms"], since)
      << "the deadline runs from the job's end";
  EXPECT_EQ(Json({"show", std::to_string(next)})["job"]["state"], "pending");

  ::kill(loose, SIGKILL);
  ASSERT_TRUE(WaitChild(loose, kDeadlineMs).has_value());
  Until({"show", std::to_string(next)},
        [](const json& j) { return j["job"]["state"] == "completed"; });
  EXPECT_TRUE(HasEvent(Json({"show", std::to_string(ended)}), "gpu-released"));
  EXPECT_FALSE(HeldOn0(Json({"gpus"})));
}

TEST_F(GpuHoldTest, AtTheDeadlinePinpointdKillsTheProcessAndTheNextJobRuns) {
  Start(0);  // killed at the first poll after the end
  pid_t loose = LooseProcessOnGpu0();
  ASSERT_GT(loose, 0);
  int64_t ended = RunToEnd({"--gpus", "2", "--", "true"});
  ASSERT_GT(ended, 0);
  std::optional<int> status = WaitChild(loose, kDeadlineMs);
  ASSERT_TRUE(status.has_value()) << "pinpointd did not kill it";
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << *status;
  int64_t next = Submit({"--gpus", "2", "--", "true"});
  Until({"show", std::to_string(next)},
        [](const json& j) { return j["job"]["state"] == "completed"; });
  json history = Until({"show", std::to_string(ended)},
                       [](const json& j) { return HasEvent(j, "gpu-released"); });
  EXPECT_TRUE(HasEvent(history, "gpu-hold-killed"));
  EXPECT_NE(h_->daemon_log().find("held its GPUs past the settle deadline: sent SIGKILL"),
            std::string::npos);
}

}  // namespace
}  // namespace pinpoint::testing
