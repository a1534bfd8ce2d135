#include "bench/driver/pinpoint_runner.h"

#include <gtest/gtest.h>

namespace pinpoint::bench {
namespace {

using nlohmann::json;

TEST(MakeDaemonConfigTest, PathsModeAndBenchmarkSettings) {
  BenchOptions o;
  o.backend = "nvml";
  o.cgroups = false;
  o.mps_control = "/usr/local/nvidia/bin/nvidia-cuda-mps-control";
  json defaults = {{"state_dir", "/var/lib/pinpoint"}, {"host_cpus", 0}};
  json c = MakeDaemonConfig(defaults, Mode::kTimeslice, {"/t/ts/st", "/t/ts/s", "/t/ts/m"}, o);
  EXPECT_EQ(c["state_dir"], "/t/ts/st");
  EXPECT_EQ(c["socket_path"], "/t/ts/s");
  EXPECT_EQ(c["mps_dir"], "/t/ts/m");
  EXPECT_EQ(c["default_mode"], "timeslice");
  EXPECT_EQ(c["backend"], "nvml");
  EXPECT_EQ(c["cgroups"], false);
  EXPECT_EQ(c["mps_control"], "/usr/local/nvidia/bin/nvidia-cuda-mps-control");
  EXPECT_EQ(c["mps_idle_quit_ms"], 0);
  EXPECT_GE(c["host_cpus"].get<int>(), 4096);
  EXPECT_FALSE(c.contains("metrics_listen")) << "this daemon has no such setting";
  defaults["metrics_listen"] = "127.0.0.1:9473";
  c = MakeDaemonConfig(defaults, Mode::kMps, {"/a", "/b", "/c"}, o);
  EXPECT_EQ(c["metrics_listen"], "") << "several daemons run at once: no port for any";
  o.daemon_set = {"poll_interval_ms=10", "mps_dir=/x", "cgroups=true"};
  c = MakeDaemonConfig(defaults, Mode::kMps, {"/a", "/b", "/c"}, o);
  EXPECT_EQ(c["poll_interval_ms"], 10);
  EXPECT_EQ(c["mps_dir"], "/x") << "a value that is not JSON is a string";
  EXPECT_EQ(c["cgroups"], true);
}

TEST(CopyRequestsTest, OneSliceOfTheWorkloadsSizePerCopyNamedAfterTheBatch) {
  Workload w;
  w.argv = {"/bin/pp-busy", "--iters", "5"};
  w.gpu_mem_bytes = 1ull << 30;
  BenchOptions o;
  o.cpus = 2;
  std::vector<JobRequest> copies =
      CopyRequests(w, o, "busy-mps-n4-r1", 4, {{"PATH", "/usr/bin"}}, "/home/a");
  ASSERT_EQ(copies.size(), 4u);
  EXPECT_EQ(copies[0].name, "busy-mps-n4-r1-0");
  EXPECT_EQ(copies[3].name, "busy-mps-n4-r1-3");
  for (const JobRequest& r : copies) {
    EXPECT_EQ(r.argv, w.argv);
    EXPECT_EQ(r.gpus, 1);
    EXPECT_EQ(r.gpu_mem_bytes, 1ull << 30);
    EXPECT_EQ(r.gpu_share_pct, 0);
    EXPECT_EQ(r.cpus, 2);
    EXPECT_EQ(r.cwd, "/home/a");
    EXPECT_EQ(r.env.at("PATH"), "/usr/bin");
    EXPECT_TRUE(ValidateRequest(r).ok()) << "pinpointd takes it as it is";
  }
  o.gpu_share_pct = 25;
  EXPECT_EQ(CopyRequests(w, o, "x", 1, {}, "/")[0].gpu_share_pct, 25);
  EXPECT_TRUE(copies[0].devices.empty()) << "no devices given: pinpointd chooses";
}

TEST(CopyRequestsTest, CopiesGoToTheDevicesInTurn) {
  Workload w;
  w.argv = {"/bin/pp-busy"};
  w.gpu_mem_bytes = 1ull << 30;
  std::vector<JobRequest> copies = CopyRequests(w, BenchOptions{}, "t", 5, {}, "/", {3, 1});
  ASSERT_EQ(copies.size(), 5u);
  std::vector<std::vector<int>> devices;
  for (const JobRequest& r : copies) devices.push_back(r.devices);
  EXPECT_EQ(devices, (std::vector<std::vector<int>>{{3}, {1}, {3}, {1}, {3}}));
  EXPECT_TRUE(ValidateRequest(copies[0]).ok());
}

}  // namespace
}  // namespace pinpoint::bench
