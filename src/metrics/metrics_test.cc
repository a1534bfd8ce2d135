#include "metrics/metrics.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdio.h>
#include <sys/wait.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/test_dir.h"
#include "metrics/http_server.h"

namespace pinpoint::metrics {
namespace {

Snapshot Example() {
  Snapshot s;
  GpuMetrics g;
  g.gpu_index = 0;
  g.uuid = "GPU-0000";
  g.name = "NVIDIA H100 80GB HBM3";
  g.sampled = true;
  g.mem_used_bytes = 12ull << 30;
  g.mem_total_bytes = 80ull << 30;
  g.utilization_pct = 73;
  g.power_mw = 312'500;
  g.energy_mj = 123'456'789;
  g.idle_energy_mj = 4500.5;
  GpuMetrics lost = g;
  lost.gpu_index = 1;
  lost.uuid = "GPU-0001";
  lost.sampled = false;
  s.gpus = {g, lost};
  DeviceMetrics d;
  d.index = 0;
  d.gpu_index = 0;
  d.uuid = "GPU-0000";
  d.mode = SharingMode::kMps;
  d.slices = 2;
  d.mem_allocated_bytes = 16ull << 30;
  d.share_allocated_pct = 40;
  d.mps_up = true;
  d.mps_user = "ana";
  DeviceMetrics d1 = d;
  d1.index = 1;
  d1.gpu_index = 1;
  d1.mps_up.reset();
  d1.mode = SharingMode::kExclusive;
  s.devices = {d, d1};
  JobMetrics j;
  j.id = 7;
  j.user = "ana \"quoted\"\\";
  j.state = "running";
  j.gpu_mem_request_bytes = 8ull << 30;
  j.usage.samples = 3;
  j.usage.gpu_mem_now_bytes = 5ull << 30;
  j.usage.gpu_mem_peak_bytes = 6ull << 30;
  j.usage.energy_mj = 900'000;
  JobMetrics p;
  p.id = 8;
  p.user = "bo";
  p.state = "pending";
  JobMetrics lease;
  lease.id = 9;
  lease.user = "root";
  lease.state = "running";
  lease.kind = "lease";
  s.jobs = {j, p, lease};
  s.sched.pending = 1;
  s.sched.running = 1;
  s.sched.leases_running = 1;
  s.sched.suspended = 1;
  s.sched.suspended_host_bytes = 4ull << 30;
  s.sched.starts_total = 12;
  s.sched.jobs_by_qos[{"scavenger", "pending"}] = 3;
  s.sched.ended_total[{"failed", "gpu-mem-exceeded"}] = 1;
  s.sched.ended_total[{"completed", "exit-0"}] = 10;
  s.watcher_polls_total = 99;
  s.watcher_last_poll_seconds = 0.0042;
  s.jobs_purged_total = 31;
  s.mig = MigMetrics{};
  s.mig->changes_total[{"create", "ok"}] = 4;
  s.mig->changes_total[{"destroy", "failed"}] = 1;
  s.mig->instances[{1, "3g.40gb"}] = 2;
  return s;
}

TEST(MetricsTest, CarriesTheDocumentedNames) {
  std::string text = Render(Example());
  for (const char* name :
       {"pinpoint_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-0000\",name=\"NVIDIA H100 80GB "
        "HBM3\"} 12884901888",
        "pinpoint_gpu_memory_total_bytes{",
        "pinpoint_gpu_utilization_ratio{gpu=\"0\"",
        "pinpoint_gpu_power_watts{gpu=\"0\",uuid=\"GPU-0000\",name=\"NVIDIA H100 80GB HBM3\"} "
        "312.5",
        "pinpoint_gpu_energy_joules_total{gpu=\"0\",uuid=\"GPU-0000\",name=\"NVIDIA H100 80GB "
        "HBM3\"} 123456.789",
        "pinpoint_gpu_up{gpu=\"1\",uuid=\"GPU-0001\",name=\"NVIDIA H100 80GB HBM3\"} 0",
        "pinpoint_device_slices{device=\"0\",gpu=\"0\",uuid=\"GPU-0000\",mode=\"mps\"} 2",
        "pinpoint_mps_server_up{device=\"0\",gpu=\"0\",uuid=\"GPU-0000\",mode=\"mps\",user=\"ana\"}"
        " 1",
        "pinpoint_job_gpu_memory_bytes{job=\"7\",user=\"ana \\\"quoted\\\"\\\\\"} 5368709120",
        "pinpoint_job_gpu_memory_peak_bytes{job=\"7\"",
        "pinpoint_job_energy_joules_total{job=\"7\"",
        "pinpoint_job_state{job=\"8\",user=\"bo\",state=\"pending\",kind=\"job\"} 1",
        "pinpoint_queue_length 1",
        "pinpoint_job_state{job=\"9\",user=\"root\",state=\"running\",kind=\"lease\"} 1",
        "pinpoint_jobs_running 1",
        "pinpoint_leases_running 1",
        "pinpoint_jobs_suspended 1",
        "pinpoint_jobs_suspended_host_memory_bytes 4294967296",
        "pinpoint_qos_jobs{qos=\"scavenger\",state=\"pending\"} 3",
        "pinpoint_job_starts_total 12",
        "pinpoint_jobs_ended_total{state=\"failed\",reason=\"gpu-mem-exceeded\"} 1",
        "pinpoint_watcher_polls_total 99",
        "pinpoint_jobs_purged_total 31",
        "pinpoint_mig_changes_total{action=\"create\",result=\"ok\"} 4",
        "pinpoint_mig_changes_total{action=\"destroy\",result=\"failed\"} 1",
        "pinpoint_mig_instances{gpu=\"1\",profile=\"3g.40gb\"} 2"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name << "\n" << text;
  }
  // A GPU the last poll could not read has no readings, only its up=0 and static facts.
  EXPECT_EQ(text.find("pinpoint_gpu_power_watts{gpu=\"1\""), std::string::npos);
  // A pending job has no usage series.
  EXPECT_EQ(text.find("pinpoint_job_gpu_memory_bytes{job=\"8\""), std::string::npos);
  EXPECT_EQ(text.find("pinpoint_mps_server_up{device=\"1\""), std::string::npos);
}

// Runs `promtool check metrics` on `text`; returns its exit status and output.
std::pair<int, std::string> Promtool(const std::string& text) {
  TestDir dir;
  std::string in = dir.path() + "/metrics.txt";
  std::ofstream(in) << text;
  std::string cmd =
      "timeout 120 promtool check metrics < " + in + " 2>&1";  // a deadline, never a hang
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[512];
  while (size_t n = ::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(MetricsTest, PassesPromtool) {
  // promtool comes from Debian's prometheus package (scripts/install-deps.sh); a missing one
  // fails here rather than skipping the check.
  auto [status, out] = Promtool(Render(Example()));
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "") << "promtool lint findings";
  Snapshot empty;
  std::tie(status, out) = Promtool(Render(empty));
  EXPECT_EQ(status, 0) << out;
}

TEST(MetricsTest, PromtoolCatchesABrokenExposition) {
  // The check above can fail: promtool rejects a counter without _total and a bad line.
  auto [status, out] = Promtool("# TYPE foo counter\nfoo 1\nnot a sample line\n");
  EXPECT_NE(status, 0) << out;
}

TEST(MetricsServerTest, ServesThePublishedText) {
  auto server = MetricsServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Publish("pinpoint_queue_length 3\n");
  httplib::Client client("127.0.0.1", (*server)->port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "pinpoint_queue_length 3\n");
  EXPECT_NE(res->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
  EXPECT_EQ(client.Get("/nothing")->status, 404);
}

TEST(MetricsServerTest, BadOrBusyAddressesAreErrors) {
  EXPECT_EQ(MetricsServer::Start("localhost").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MetricsServer::Start("127.0.0.1:99999").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MetricsServer::Start("::1:80").status().code(), Code::kInvalidArgument);
  auto first = MetricsServer::Start("127.0.0.1:0");
  ASSERT_TRUE(first.ok());
  auto second = MetricsServer::Start("127.0.0.1:" + std::to_string((*first)->port()));
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  auto parsed = ParseListenAddress("[::1]:9473");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->first, "::1");
  EXPECT_EQ(parsed->second, 9473);
}

}  // namespace
}  // namespace pinpoint::metrics

namespace pinpoint::metrics {
namespace {

// The example Grafana dashboard asks only for metrics that exist, in queries promtool accepts.
TEST(GrafanaDashboardTest, QueriesUseRenderedMetricsAndParse) {
  std::ifstream in(std::string(PINPOINT_SOURCE_DIR) + "/docs/grafana/pinpoint-node.json");
  ASSERT_TRUE(in.good());
  nlohmann::json dash = nlohmann::json::parse(in);
  std::string rendered = Render(Example());
  std::string rules = "groups:\n  - name: dashboard\n    rules:\n";
  int queries = 0;
  for (const auto& panel : dash["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"].get<std::string>();
      for (size_t at = expr.find("pinpoint_"); at != std::string::npos;
           at = expr.find("pinpoint_", at + 1)) {
        size_t end = expr.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", at);
        std::string name = expr.substr(at, end - at);
        EXPECT_NE(rendered.find("# TYPE " + name + " "), std::string::npos)
            << name << " in " << expr;
        at = end - 1;
      }
      for (size_t v; (v = expr.find("$instance")) != std::string::npos;) expr.replace(v, 9, ".*");
      rules += "      - record: dashboard:q" + std::to_string(queries++) + "\n        expr: '" +
               expr + "'\n";
    }
  }
  EXPECT_GE(queries, 10);
  TestDir dir;
  std::ofstream(dir.path() + "/rules.yml") << rules;
  std::string cmd = "timeout 120 promtool check rules " + dir.path() + "/rules.yml 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (size_t n = ::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out << rules;
}

}  // namespace
}  // namespace pinpoint::metrics
