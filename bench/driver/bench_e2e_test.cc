// pinpoint-bench end to end on a simulated one-GPU node: three private pinpointds (exclusive,
// timeslice, mps), a stand-in MPS control daemon for bare-mps, and a "workload" that sleeps and
// reports its work. Asserts what ran where and what was written, never how fast.
#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/driver/proc.h"
#include "common/file_util.h"
#include "common/test_dir.h"
#include "gpu/backend_factory.h"

namespace pinpoint::bench {
namespace {

std::string BinDir() {
  const char* dir = std::getenv("PINPOINT_BENCH_TEST_BIN_DIR");  // daemon binaries built elsewhere
  return dir != nullptr ? dir : PINPOINT_BIN_DIR;
}

// The file's text, or "" when it cannot be read (the assertion on its content then fails).
std::string Slurp(const std::string& path) {
  auto text = ReadFile(path);
  return text.ok() ? *text : "";
}

std::string OnlySubdir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  std::string found;
  while (dirent* e = d ? ::readdir(d) : nullptr) {
    if (std::string(e->d_name).rfind("ppb-", 0) == 0) found = dir + "/" + e->d_name;
  }
  if (d) ::closedir(d);
  return found;
}

TEST(BenchEndToEndTest, WithoutNvmlItFailsWithOneClearLine) {
  std::string why;
  if (gpu::MakeGpuBackend("nvml", &why).ok()) GTEST_SKIP() << "this machine has NVML";
  auto r = RunCommand({PINPOINT_BENCH_PATH, "--n", "1"}, ChildEnvironment(), 30000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_EQ(r->err.rfind("pinpoint bench: needs an NVIDIA GPU with NVML (", 0), 0u) << r->err;
  EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
}

TEST(BenchEndToEndTest, EveryModeOnASimulatedGpu) {
  TestDir dir;
  std::string node = dir.path() + "/node.json";
  std::ofstream(node)
      << R"({"gpus": [{"name": "NVIDIA H100 80GB HBM3", "mem": "80G", "sm_count": 132}]})";
  std::string out = dir.path() + "/out";
  std::vector<std::string> argv = {
      PINPOINT_BENCH_PATH,
      "--backend",
      "simulated-file:" + node,
      "--mps-control",
      PINPOINT_SOURCE_DIR "/tests/fake_mps/nvidia-cuda-mps-control",
      "--bin-dir",
      BinDir(),
      "--workload",
      "cmd",
      "--n",
      "1,2",
      "--reps",
      "1",
      "--settle-ms",
      "0",
      "--sample-ms",
      "20",
      "--no-cgroups",
      "--scratch",
      dir.path(),
      "--keep-scratch",
      "--cuda-version",
      "13.0",
      "--out",
      out,
      "--",
      "sh",
      "-c",
      "echo pipe=$CUDA_MPS_PIPE_DIRECTORY gpu=$CUDA_VISIBLE_DEVICES; "
      "echo pp-cuda first_us=$(date +%s%6N) ready_us=$(date +%s%6N); sleep 0.2; "
      "echo pp-work units=1.5 unit=steps seconds=0.2"};
  auto r = RunCommand(argv, ChildEnvironment(), 240000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->out << r->err;
  EXPECT_NE(r->out.find("warm-up bare-mps: one copy"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("results: " + out + "/results.md"), std::string::npos) << r->out;

  nlohmann::json j = nlohmann::json::parse(Slurp(out + "/results.json"));
  EXPECT_EQ(j["meta"]["gpu_name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["meta"]["cuda"], "13.0");
  std::string uuid = j["meta"]["gpu_uuid"];
  // exclusive, timeslice, mps and bare-mps at N=1 and 2; bare at N=1 only.
  ASSERT_EQ(j["points"].size(), 9u);
  for (const auto& p : j["points"]) {
    EXPECT_EQ(p["error"], "") << p["mode"];
    EXPECT_EQ(p["metrics"]["ok_jobs"], p["n"])
        << p["mode"] << " N=" << p["n"] << ": " << p["jobs"].dump();
    EXPECT_EQ(p["metrics"]["units"], 1.5 * p["n"].get<int>());
    bool pinpoint = p["mode"] != "bare" && p["mode"] != "bare-mps";
    for (const auto& job : p["jobs"]) {
      EXPECT_EQ(job["device"], uuid);
      EXPECT_LE(job["submit_s"].get<double>(), job["start_s"].get<double>());
      EXPECT_LE(job["start_s"].get<double>(), job["first_cuda_s"].get<double>() + 0.001)
          << "its pp-cuda line is read";
      EXPECT_LE(job["first_cuda_s"].get<double>(), job["ready_s"].get<double>());
      EXPECT_LE(job["end_s"].get<double>(), job["known_s"].get<double>() + 0.001);
      EXPECT_EQ(job["submit_call_s"].get<double>() > 0, pinpoint)
          << "only pinpoint's are submitted";
      EXPECT_LT(job["start_s"].get<double>(), job["end_s"].get<double>());
      EXPECT_GE(job["start_s"].get<double>(), p["t0_s"].get<double>() - 0.002);
      EXPECT_LE(job["end_s"].get<double>(), p["t1_s"].get<double>() + 0.002);
    }
    if (p["mode"] == "exclusive" && p["n"] == 2) {
      const auto& jobs = p["jobs"];
      double first_end = std::min(jobs[0]["end_s"].get<double>(), jobs[1]["end_s"].get<double>());
      double second_start =
          std::max(jobs[0]["start_s"].get<double>(), jobs[1]["start_s"].get<double>());
      EXPECT_GE(second_start + 0.002, first_end) << "exclusive runs one job at a time";
    }
  }
  EXPECT_NE(Slurp(out + "/summary.csv").find("\ncmd,bare,1,1,steps,"), std::string::npos);
  EXPECT_NE(Slurp(out + "/results.md").find("## Targets"), std::string::npos);
  EXPECT_NE(Slurp(out + "/results.md").find("## Where the time goes"), std::string::npos);
  ASSERT_EQ(j["breakdown"].size(), 9u) << "one row per mode and N (one repetition each)";
  for (const auto& row : j["breakdown"]) {
    const auto& stages = row["stages"];
    EXPECT_EQ(stages["first_cuda_to_ready_ms"]["count"], row["jobs"]) << row.dump();
    EXPECT_EQ(stages["end_to_known_ms"]["count"].get<int>() > 0,
              row["mode"] != "bare" && row["mode"] != "bare-mps")
        << row.dump();
  }
  EXPECT_NE(Slurp(out + "/meta.txt").find("NVIDIA H100 80GB HBM3, driver simulated, CUDA 13.0"),
            std::string::npos);
  EXPECT_NE(Slurp(out + "/logs/pinpointd-mps.log").find("pinpointd"), std::string::npos);

  std::string scratch = OnlySubdir(dir.path());
  ASSERT_FALSE(scratch.empty());
  std::string commands = Slurp(scratch + "/bm/p/fake_commands");
  EXPECT_NE(commands.find("start"), std::string::npos) << commands;
  EXPECT_NE(commands.find("quit"), std::string::npos)
      << "bare-mps quits the daemon it started: " << commands;
  EXPECT_NE(
      Slurp(scratch + "/bm/cmd-bare-mps-n2-r1-1.out").find("pipe=" + scratch + "/bm/p gpu=" + uuid),
      std::string::npos);
  EXPECT_NE(Slurp(scratch + "/ba/cmd-bare-n1-r1-0.out").find("pipe= gpu=" + uuid),
            std::string::npos);
}

// Two of three GPUs measured: copy i of every batch runs on GPU i mod 2, through pinpoint
// (submitted for that device, as pinpointd has a GPU not measured) and bare (CUDA_VISIBLE_DEVICES,
// one MPS control daemon per GPU for bare-mps). Every GPU of the node measured: through pinpoint
// the copies name no device and pinpointd places them, spreading them over both GPUs (before, each
// copy was submitted for GPU i mod 2, which hid that pinpointd packed them all onto the first).
TEST(BenchEndToEndTest, PinpointPlacesTheCopiesWhenEveryGpuIsMeasured) {
  TestDir dir;
  std::string node = dir.path() + "/node.json";
  std::ofstream(node) << R"({"gpus": [{"name": "NVIDIA H200", "mem": "141G", "sm_count": 132},
                                      {"name": "NVIDIA H200", "mem": "141G", "sm_count": 132}]})";
  std::string out = dir.path() + "/out";
  std::vector<std::string> argv = {PINPOINT_BENCH_PATH,
                                   "--backend",
                                   "simulated-file:" + node,
                                   "--gpu",
                                   "0,1",
                                   "--mps-control",
                                   PINPOINT_SOURCE_DIR "/tests/fake_mps/nvidia-cuda-mps-control",
                                   "--bin-dir",
                                   BinDir(),
                                   "--workload",
                                   "cmd",
                                   "--modes",
                                   "mps",
                                   "--n",
                                   "4",
                                   "--reps",
                                   "1",
                                   "--no-warmup",
                                   "--settle-ms",
                                   "0",
                                   "--sample-ms",
                                   "20",
                                   "--no-cgroups",
                                   "--scratch",
                                   dir.path(),
                                   "--cuda-version",
                                   "13.0",
                                   "--out",
                                   out,
                                   "--",
                                   "sh",
                                   "-c",
                                   "sleep 0.1; echo pp-work units=1 unit=steps seconds=0.1"};
  auto r = RunCommand(argv, ChildEnvironment(), 240000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->out << r->err;
  nlohmann::json j = nlohmann::json::parse(Slurp(out + "/results.json"));
  EXPECT_EQ(j["options"]["pin"], false);
  ASSERT_EQ(j["points"].size(), 1u);
  std::map<std::string, int> per_gpu;
  for (const auto& job : j["points"][0]["jobs"]) {
    EXPECT_TRUE(job["ok"].get<bool>()) << job.dump();
    ++per_gpu[job["device"].get<std::string>()];
  }
  EXPECT_EQ(per_gpu.size(), 2u) << "both GPUs take copies";
  for (const auto& [gpu, copies] : per_gpu) EXPECT_EQ(copies, 2) << gpu;
}

TEST(BenchEndToEndTest, CopiesGoToTwoGpusInTurnInEveryMode) {
  TestDir dir;
  std::string node = dir.path() + "/node.json";
  std::ofstream(node) << R"({"gpus": [{"name": "NVIDIA H200", "mem": "141G", "sm_count": 132},
                                      {"name": "NVIDIA H200", "mem": "141G", "sm_count": 132},
                                      {"name": "NVIDIA H200", "mem": "141G", "sm_count": 132}]})";
  std::string out = dir.path() + "/out";
  std::vector<std::string> argv = {
      PINPOINT_BENCH_PATH,
      "--backend",
      "simulated-file:" + node,
      "--gpu",
      "2,0",
      "--mps-control",
      PINPOINT_SOURCE_DIR "/tests/fake_mps/nvidia-cuda-mps-control",
      "--bin-dir",
      BinDir(),
      "--workload",
      "cmd",
      "--modes",
      "exclusive,mps,bare-mps",
      "--n",
      "4",
      "--reps",
      "1",
      "--no-warmup",
      "--settle-ms",
      "0",
      "--sample-ms",
      "20",
      "--no-cgroups",
      "--scratch",
      dir.path(),
      "--keep-scratch",
      "--cuda-version",
      "13.0",
      "--out",
      out,
      "--",
      "sh",
      "-c",
      "echo pipe=$CUDA_MPS_PIPE_DIRECTORY gpu=$CUDA_VISIBLE_DEVICES; sleep 0.1; "
      "echo pp-work units=1 unit=steps seconds=0.1"};
  auto r = RunCommand(argv, ChildEnvironment(), 240000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->out << r->err;

  nlohmann::json j = nlohmann::json::parse(Slurp(out + "/results.json"));
  EXPECT_EQ(j["meta"]["gpu_indices"], nlohmann::json({0, 2}));
  ASSERT_EQ(j["meta"]["gpu_uuids"].size(), 2u);
  std::string gpu0 = j["meta"]["gpu_uuids"][0], gpu2 = j["meta"]["gpu_uuids"][1];
  EXPECT_NE(gpu0, gpu2);
  ASSERT_EQ(j["points"].size(), 3u);
  for (const auto& p : j["points"]) {
    EXPECT_EQ(p["error"], "") << p["mode"];
    ASSERT_EQ(p["jobs"].size(), 4u) << p["mode"];
    for (int i = 0; i < 4; ++i) {
      const auto& job = p["jobs"][i];
      EXPECT_TRUE(job["ok"].get<bool>()) << p["mode"] << " copy " << i << ": " << job.dump();
      EXPECT_EQ(job["device"], i % 2 == 0 ? gpu0 : gpu2) << p["mode"] << " copy " << i;
    }
    if (p["mode"] == "exclusive") {
      // Copies 0 and 2 share the first GPU, 1 and 3 the other: one at a time on each.
      for (int a : {0, 1}) {
        const auto& first = p["jobs"][a];
        const auto& second = p["jobs"][a + 2];
        double first_end = std::min(first["end_s"].get<double>(), second["end_s"].get<double>());
        double second_start =
            std::max(first["start_s"].get<double>(), second["start_s"].get<double>());
        EXPECT_GE(second_start + 0.002, first_end) << "one copy at a time on each GPU";
      }
    }
  }
  std::string md = Slurp(out + "/results.md");
  EXPECT_NE(md.find("2 x NVIDIA H200"), std::string::npos) << md;
  EXPECT_NE(md.find("GPUs 0 " + gpu0 + ", 2 " + gpu2), std::string::npos) << md;

  std::string scratch = OnlySubdir(dir.path());
  ASSERT_FALSE(scratch.empty());
  for (const std::string& pipe : {scratch + "/bm/p", scratch + "/bm/p1"}) {
    std::string commands = Slurp(pipe + "/fake_commands");
    EXPECT_NE(commands.find("start"), std::string::npos) << pipe << ": " << commands;
    EXPECT_NE(commands.find("quit"), std::string::npos) << pipe << ": " << commands;
  }
  EXPECT_NE(Slurp(scratch + "/bm/cmd-bare-mps-n4-r1-1.out")
                .find("pipe=" + scratch + "/bm/p1 gpu=" + gpu2),
            std::string::npos);
  EXPECT_NE(
      Slurp(scratch + "/bm/cmd-bare-mps-n4-r1-2.out").find("pipe=" + scratch + "/bm/p gpu=" + gpu0),
      std::string::npos);
}

TEST(BenchEndToEndTest, GpusOfTwoModelsAreRefused) {
  TestDir dir;
  std::string node = dir.path() + "/node.json";
  std::ofstream(node) << R"({"gpus": [{"name": "NVIDIA H200", "mem": "141G", "sm_count": 132},
                                      {"name": "NVIDIA A100", "mem": "80G", "sm_count": 108}]})";
  auto r = RunCommand({PINPOINT_BENCH_PATH, "--backend", "simulated-file:" + node, "--gpu", "0,1",
                       "--bin-dir", BinDir(), "--out", dir.path() + "/out"},
                      ChildEnvironment(), 30000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_EQ(r->err,
            "pinpoint bench: GPU 0 (NVIDIA H200) and GPU 1 (NVIDIA A100) are different models; "
            "measure them one at a time\n");
}

}  // namespace
}  // namespace pinpoint::bench
