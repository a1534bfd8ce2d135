#include "pinpoint/job.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace pinpoint {
namespace {

JobRequest TwoGpus() {
  JobRequest r;
  r.argv = {"true"};
  r.cwd = "/";
  r.gpus = 2;
  return r;
}

TEST(JobRequestTest, DevicesNameOneDistinctIndexPerGpu) {
  JobRequest r = TwoGpus();
  EXPECT_TRUE(ValidateRequest(r).ok());
  r.devices = {3, 1};
  EXPECT_TRUE(ValidateRequest(r).ok());
  r.devices = {1};
  EXPECT_EQ(ValidateRequest(r).message(),
            "devices must name one device per GPU (2 GPUs, 1 devices)");
  r.devices = {1, 1};
  EXPECT_EQ(ValidateRequest(r).message(), "devices must be distinct");
  r.devices = {-1, 0};
  EXPECT_EQ(ValidateRequest(r).message(), "device indices must not be negative");
}

TEST(OutputPathTest, ArrayPlaceholdersNameTheArrayAndTheTask) {
  ArrayTask task{12, 3, 4, 1, 4, 2};
  EXPECT_EQ(OutputPathFor("out-%A_%a-%j.txt", 14, "alice", "tr", "/w", task), "/w/out-12_3-14.txt");
  // A job not in an array: %A is its own id and %a is 0.
  EXPECT_EQ(OutputPathFor("out-%A_%a.txt", 7, "alice", "tr", "/w/"), "/w/out-7_0.txt");
  // Slurm's %J (job.step: a job has no step) and %N (the node's name).
  EXPECT_EQ(OutputPathFor("%N-%J.out", 7, "alice", "tr", "/w", {}, "node1"), "/w/node1-7.out");
  JobRequest r = TwoGpus();
  r.output_path = "%A_%a.%j.%J.%N.%u.%x.%%";
  EXPECT_TRUE(ValidateRequest(r).ok());
  r.error_path = "%b";
  EXPECT_EQ(
      ValidateRequest(r).message(),
      "-e (error_path): '%b' is not a placeholder (%j or %J job id, %u user, %x job name, %A array "
      "id, %a array task index, %N node name, %% a percent sign)");
}

// A reason without a word would reach people and the API as "unknown".
TEST(ReasonTest, EveryReasonHasItsOwnWord) {
  std::set<std::string> words;
  for (int i = 0; i <= static_cast<int>(kLastReason); ++i) {
    auto reason = static_cast<Reason>(i);
    std::string word = ReasonName(reason);
    EXPECT_NE(word, "unknown") << i;
    EXPECT_TRUE(words.insert(word).second) << word << " names two reasons";
    EXPECT_EQ(ReasonFromName(word), reason) << word;
  }
  EXPECT_EQ(ReasonName(Reason::kNone), std::string(""));
  EXPECT_EQ(ReasonFromName("exit-0"), Reason::kExitedZero);
  EXPECT_FALSE(ReasonFromName("Exit-0").has_value());
}

TEST(ArrayTaskTest, SurvivesJson) {
  ArrayTask task{12, 3, 4, 1, 4, 2};
  auto back = ArrayTaskFromJson(ToJson(task));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, task);
  EXPECT_FALSE(ArrayTaskFromJson(nlohmann::json{{"index", "3"}}).ok());
}

TEST(JobRequestTest, DevicesSurviveJson) {
  JobRequest r = TwoGpus();
  r.devices = {3, 1};
  auto back = RequestFromJson(ToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->devices, (std::vector<int>{3, 1}));
  nlohmann::json j = ToJson(r);
  j["devices"] = {"0"};
  EXPECT_EQ(RequestFromJson(j).status().code(), Code::kInvalidArgument);
  j.erase("devices");
  ASSERT_TRUE(RequestFromJson(j).ok());  // requests of older clients have no devices
  EXPECT_TRUE(RequestFromJson(j)->devices.empty());
}

TEST(AllocationTest, ModeIsNamedOnTheWire) {
  for (SharingMode mode : {SharingMode::kExclusive, SharingMode::kTimeslice, SharingMode::kMps}) {
    Allocation a{2, "GPU-x", 1024, 25, mode};
    nlohmann::json j = ToJson(a);
    EXPECT_EQ(j["mode"], SharingModeName(mode));
    auto back = AllocationFromJson(j);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, a);
  }
  EXPECT_STREQ(SharingModeName(SharingMode::kMps), "mps");
  EXPECT_EQ(SharingModeFromName("timeslice"), SharingMode::kTimeslice);
  EXPECT_EQ(SharingModeFromName("MPS"), std::nullopt);
  auto bad = AllocationFromJson({{"mode", "shared"}});
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "allocation.mode is not a known allocation mode");
}

}  // namespace
}  // namespace pinpoint

namespace pinpoint {
namespace {

// Slurm's GPU types against NVML's model names: each word of the type begins a word of the model.
TEST(GpuModelMatchesTest, EachWordOfTheTypeIsInTheModel) {
  EXPECT_TRUE(GpuModelMatches("a100", "NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(GpuModelMatches("A100_80G", "NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(GpuModelMatches("nvidia_h100_80gb_hbm3", "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(GpuModelMatches("h100", "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(GpuModelMatches("a100", "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(GpuModelMatches("100", "NVIDIA H100 80GB HBM3")) << "a word's beginning, not a part";
  EXPECT_FALSE(GpuModelMatches("v100", "Tesla V1000"));
  EXPECT_FALSE(GpuModelMatches("", "NVIDIA H100"));
  EXPECT_FALSE(GpuModelMatches("__", "NVIDIA H100"));
}

}  // namespace
}  // namespace pinpoint
