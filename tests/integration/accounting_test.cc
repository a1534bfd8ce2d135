// Accounting end to end on a simulated node: the watcher's usage reaches `pinpoint show`,
// `report` and `top`, and the Prometheus endpoint serves metrics that pass promtool.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

class AccountingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.StartDaemon();
    fifo_ = h_.dir() + "/go";
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);
  }
  json Show(int64_t id) {
    auto r = h_.Cli({"--json", "show", std::to_string(id)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  // Asks until `done(job)` holds; each answer is a round trip to the daemon, no sleeping.
  json ShowUntil(int64_t id, const std::function<bool(const json&)>& done) {
    json job;
    for (int i = 0; i < 20000; ++i) {
      job = Show(id);
      if (done(job)) return job;
    }
    ADD_FAILURE() << "condition never held: " << job.dump();
    return job;
  }
  std::string Metrics() {
    auto v = h_.Cli({"--json", "version"});
    json version = json::parse(v.out);
    EXPECT_TRUE(version["daemon"]["metrics_port"].is_number()) << v.out;
    httplib::Client client("127.0.0.1", version["daemon"]["metrics_port"].get<int>());
    auto res = client.Get("/metrics");
    EXPECT_TRUE(res);
    return res ? res->body : "";
  }

  // Scrapes until the text holds every one of `names` (pinpointd publishes at most once a second);
  // each try is a round trip, no sleeping.
  std::string MetricsWith(const std::vector<std::string>& names) {
    std::string text;
    for (int i = 0; i < 20000; ++i) {
      text = Metrics();
      bool all = true;
      for (const auto& name : names) all = all && text.find(name) != std::string::npos;
      if (all) return text;
    }
    return text;
  }

  Harness h_{"simulated:h100x2", "\"watch_interval_ms\": 100"};
  std::string fifo_;
};

TEST_F(AccountingTest, UsageMetricsReportAndTopOfARunningAndAnEndedJob) {
  auto sub = h_.Cli({"--json", "submit", "--gpu-mem", "6G", "--gpu-share", "25%", "--name", "train",
                     "--", "sh", "-c", "read x < " + fifo_});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  int64_t id = json::parse(sub.out)["id"].get<int64_t>();
  json running = ShowUntil(id, [](const json& j) {
    return j["job"]["state"] == "running" && j["job"]["usage"]["samples"].get<int64_t>() >= 3;
  });
  EXPECT_EQ(running["job"]["usage"]["final"], false);

  std::vector<std::string> names = {
      "pinpoint_gpu_memory_total_bytes{gpu=\"0\"",
      "pinpoint_device_slices{device=\"0\"",
      "pinpoint_job_state{job=\"" + std::to_string(id) + "\"",
      "pinpoint_queue_length 0",
      "pinpoint_jobs_running 1",
      "pinpoint_job_starts_total 1",
      "pinpoint_watcher_polls_total",
      "pinpoint_job_gpu_memory_peak_bytes{job=\"" + std::to_string(id) + "\""};
  std::string text = MetricsWith(names);
  for (const std::string& name : names)
    EXPECT_NE(text.find(name), std::string::npos) << name << "\n" << text;
  std::ofstream(h_.dir() + "/metrics.txt") << text;
  std::string cmd = "timeout 120 promtool check metrics < " + h_.dir() + "/metrics.txt 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string lint;
  char buf[256];
  while (size_t n = ::fread(buf, 1, sizeof(buf), p)) lint.append(buf, n);
  int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << lint;
  EXPECT_EQ(lint, "");

  // `q` on its input quits after the first frame (of up to 50, 0.1 s apart).
  auto quit = h_.Cli({"top", "--count", "50", "--interval", "0.1"}, "q");
  EXPECT_EQ(quit.exit_code, 0) << quit.err;
  size_t frames = 0;
  for (size_t at = quit.out.find("SIMULATED"); at != std::string::npos;
       at = quit.out.find("SIMULATED", at + 1))
    ++frames;
  EXPECT_EQ(frames, 1u) << quit.out;
  auto top = h_.Cli({"top", "--count", "1"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("SIMULATED"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("train"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("25%"), std::string::npos) << top.out;

  std::ofstream(fifo_) << "go\n";
  json ended = ShowUntil(id, [](const json& j) { return j["job"]["usage"]["final"] == true; });
  EXPECT_EQ(ended["job"]["state"], "completed");
  EXPECT_GE(ended["job"]["usage"]["samples"].get<int64_t>(), 3);
  EXPECT_NE(ended["advice"]["text"].get<std::string>(), "");
  auto shown = h_.Cli({"show", std::to_string(id)});
  EXPECT_NE(shown.out.find("gpu mem:"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("advice:"), std::string::npos) << shown.out;

  // What it really had (docs/enforcement.md): one entry per resource, none disagreeing with what
  // it asked, on the simulated node as on a real one.
  std::vector<std::string> resources;
  for (const json& e : ended["job"]["enforcement"]) {
    resources.push_back(e["resource"].get<std::string>());
    EXPECT_NE(e["verdict"], "disagrees") << e.dump();
  }
  EXPECT_EQ(resources, (std::vector<std::string>{"devices", "gpu_mem", "gpu_share", "gpu_priority",
                                                 "cpus", "mem", "time"}));
  EXPECT_NE(shown.out.find("enforcement (asked / applied"), std::string::npos) << shown.out;

  auto report = h_.Cli({"--json", "report"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  json r = json::parse(report.out);
  EXPECT_EQ(r["total"]["jobs"], 1);
  EXPECT_EQ(r["total"]["slice_jobs"], 1);
  int64_t verdicts = 0;
  for (const auto& [verdict, count] : r["total"]["verdicts"].items())
    verdicts += count.get<int64_t>();
  EXPECT_EQ(verdicts, 7) << r.dump();
  auto table = h_.Cli({"report"});
  EXPECT_NE(table.out.find("(all)"), std::string::npos) << table.out;
  std::string ended_line = "pinpoint_jobs_ended_total{state=\"completed\",reason=\"exit-0\"} 1";
  EXPECT_NE(MetricsWith({ended_line}).find(ended_line), std::string::npos);
  std::string agreed = "pinpoint_enforcement_disagreements_total{resource=\"gpu_mem\"} 0";
  EXPECT_NE(MetricsWith({agreed}).find(agreed), std::string::npos);
}

TEST(AccountingConfigTest, BusyMetricsPortDoesNotStopTheDaemon) {
  httplib::Server holder;
  int port = holder.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  Harness h("simulated:h100x2", "\"metrics_listen\": \"127.0.0.1:" + std::to_string(port) + "\"");
  h.StartDaemon();
  auto v = h.Cli({"--json", "version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_TRUE(json::parse(v.out)["daemon"]["metrics_port"].is_null()) << v.out;
  EXPECT_NE(h.daemon_log().find("metrics endpoint off"), std::string::npos) << h.daemon_log();
}

}  // namespace
}  // namespace pinpoint::testing
