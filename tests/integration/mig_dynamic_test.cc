// mig-dynamic through the real pinpointd and CLI on a simulated node of one A100 80GB in MIG mode
// (docs/scheduling.md "Dynamic MIG"): a slice no instance holds gets one made, and runs on it;
// `pinpoint gpus` shows the slots and the changes. Jobs are waited for, never slept on.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/test_dir.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

// GPU 0: 3g.40gb at memory slice 4, 2g.20gb at 0 and 2 (the driver's placements for that layout).
std::string NodeFile(const std::string& dir) {
  std::string path = dir + "/node.json";
  std::ofstream(path)
      << R"({"gpus": [{"name": "NVIDIA A100-SXM4-80GB", "mem": "80G", "sm_count": 108,
    "mig": [{"profile": "3g.40gb"}, {"profile": "2g.20gb"}, {"profile": "2g.20gb"}]}]})";
  return path;
}

class MigDynamicDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.StartDaemon(); }
  TestDir files_;
  Harness h_{
      "simulated-file:" + NodeFile(files_.path()),
      R"("gpu_modes": {"0": "mig-dynamic"}, "mig_min_idle_s": 0, "mig_min_lifetime_s": 0, "host_cpus": 8)"};
};

TEST_F(MigDynamicDaemonTest, ASliceNoInstanceHoldsGetsOneMadeAndRunsOnIt) {
  auto gpus = h_.Cli({"--json", "gpus"});
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  json before = json::parse(gpus.out);
  ASSERT_EQ(before["devices"].size(), 7u) << "one slot per memory slice an instance may start at";
  int vacant = 0;
  for (const json& d : before["devices"]) vacant += d["mig_slot"]["vacant"].get<bool>() ? 1 : 0;
  EXPECT_EQ(vacant, 4);
  EXPECT_FALSE(before.contains("mig_changes"));

  // 70 GiB: only a 7g.80gb holds it, which needs the GPU's three idle instances gone.
  auto run = h_.Cli({"submit", "--wait", "--gpu-mem", "70G", "--", "true"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto show = h_.Cli({"--json", "show", "1"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  json job = json::parse(show.out)["job"];
  EXPECT_EQ(job["state"], "completed");
  ASSERT_EQ(job["allocations"].size(), 1u);
  EXPECT_EQ(job["allocations"][0]["device_index"], 0) << "slot 0, where a 7g.80gb starts";

  json after = json::parse(h_.Cli({"--json", "gpus"}).out);
  const json& slot0 = after["devices"][0];
  EXPECT_EQ(slot0["uuid"], job["allocations"][0]["uuid"]);
  EXPECT_NE(slot0["name"].get<std::string>().find("MIG 7g.80gb"), std::string::npos)
      << slot0.dump();
  EXPECT_FALSE(slot0["mig_slot"]["vacant"].get<bool>());
  ASSERT_TRUE(after.contains("mig_changes"));
  int destroys = 0, creates = 0;
  for (const json& c : after["mig_changes"]) {
    EXPECT_EQ(c["result"], "ok") << c.dump();
    destroys += c["action"] == "destroy" ? 1 : 0;
    if (c["action"] == "create") {
      ++creates;
      EXPECT_EQ(c["profile"], "7g.80gb");
      EXPECT_EQ(c["for_job"], 1);
    }
  }
  EXPECT_EQ(destroys, 3);
  EXPECT_EQ(creates, 1);
  auto text = h_.Cli({"gpus"});
  EXPECT_NE(text.out.find("MIG changes (mig-dynamic), oldest first:"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("create 7g.80gb at memory slice 0"), std::string::npos) << text.out;
  EXPECT_NE(h_.daemon_log().find("MIG: GPU 0: made 7g.80gb at memory slice 0"), std::string::npos);

  // --mig: an instance of the profile the user names, all of its memory; bad names are refused.
  auto named = h_.Cli({"submit", "--wait", "--mig", "1g.10gb", "--", "true"});
  ASSERT_EQ(named.exit_code, 0) << named.out << named.err;
  json two = json::parse(h_.Cli({"--json", "show", "2"}).out)["job"];
  EXPECT_EQ(two["request"]["mig_profile"], "1g.10gb");
  EXPECT_GT(two["request"]["gpu_mem_bytes"].get<uint64_t>(), 9ull << 30);
  bool on_it = false;
  json now = json::parse(h_.Cli({"--json", "gpus"}).out);
  for (const json& d : now["devices"])
    on_it = on_it || (d["uuid"] == two["allocations"][0]["uuid"] &&
                      d["name"].get<std::string>().find("1g.10gb") != std::string::npos);
  EXPECT_TRUE(on_it) << h_.Cli({"gpus"}).out;
  auto unknown = h_.Cli({"submit", "--mig", "9g.99gb", "--", "true"});
  EXPECT_EQ(unknown.exit_code, 6) << unknown.err;
  EXPECT_NE(unknown.err.find("its profiles: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"),
            std::string::npos)
      << unknown.err;
  auto two_gpus = h_.Cli({"submit", "--mig", "1g.10gb", "--gpus", "2", "--", "true"});
  EXPECT_EQ(two_gpus.exit_code, 2) << two_gpus.err;
  EXPECT_EQ(CountLines(two_gpus.err), 1) << two_gpus.err;

  // A slice larger than any instance the GPU could make is refused at submit, with one line.
  auto too_big = h_.Cli({"submit", "--gpu-mem", "90G", "--", "true"});
  EXPECT_EQ(too_big.exit_code, 6) << too_big.err;
  EXPECT_EQ(CountLines(too_big.err), 1) << too_big.err;
}

}  // namespace
}  // namespace pinpoint::testing
