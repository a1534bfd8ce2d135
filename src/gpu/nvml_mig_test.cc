// NvmlBackend's dynamic MIG (nvml_mig_instances.cc) against the fake NVML's rules and faults
// (tests/fake_nvml/fake_nvml_mig.cc): GPU 1 starts with 1g.10gb (GI 9) at memory slice 0 and
// 3g.40gb (GI 2) at slice 4, each with a process; slices 1-3 are free.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_nvml/fake_nvml_control.h"
#include "gpu/nvml_backend.h"

#ifndef FAKE_NVML_PATH
#error "FAKE_NVML_PATH must name the fake NVML library (see the end of CMakeLists.txt)"
#endif

namespace pinpoint::gpu {
namespace {

using ::testing::HasSubstr;

class NvmlMigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake_.ok()) << "cannot load " << FAKE_NVML_PATH;
    Result<std::unique_ptr<GpuBackend>> backend = NvmlBackend::Create(FAKE_NVML_PATH);
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
  }

  // GPU 1's instances as the inventory lists them: "profile@start#gi" each.
  std::vector<std::string> Layout() {
    Result<std::vector<GpuInfo>> gpus = backend_->Inventory();
    EXPECT_TRUE(gpus.ok()) << gpus.status().ToString();
    std::vector<std::string> out;
    if (!gpus.ok()) return out;
    for (const MigInfo& m : (*gpus)[1].migs)
      out.push_back(m.profile + "@" + std::to_string(m.placement_start) + "#" +
                    std::to_string(m.gpu_instance_id));
    std::sort(out.begin(), out.end());
    return out;
  }

  FakeNvmlControl fake_{FAKE_NVML_PATH};
  std::unique_ptr<GpuBackend> backend_;
};

const std::vector<std::string> kStartLayout = {"1g.10gb@0#9", "3g.40gb@4#2"};

TEST_F(NvmlMigTest, TheInventoryReadsEachInstancesPlacement) { EXPECT_EQ(Layout(), kStartLayout); }

TEST_F(NvmlMigTest, ACreatedInstanceIsListedAndADestroyedOneIsGone) {
  Result<MigInfo> made = backend_->CreateMigInstance(1, "1g.10gb", 2);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->profile, "1g.10gb");
  EXPECT_EQ(made->gpu_instance_id, 1u) << "the lowest free id";
  EXPECT_EQ(made->placement_start, 2);
  EXPECT_EQ(made->sm_count, 16);
  EXPECT_EQ(made->mem_total_bytes, 9984ULL << 20);
  EXPECT_THAT(made->uuid, ::testing::StartsWith("MIG-"));
  EXPECT_EQ(Layout(), (std::vector<std::string>{"1g.10gb@0#9", "1g.10gb@2#1", "3g.40gb@4#2"}));

  ASSERT_TRUE(backend_->DestroyMigInstance(1, 1).ok());
  EXPECT_EQ(Layout(), kStartLayout);
  EXPECT_EQ(fake_.GpuInstanceCount(), 2);
}

TEST_F(NvmlMigTest, ACreateBreakingAPlacementRuleChangesNothing) {
  struct Case {
    std::string profile;
    int start;
    Code code;
    std::string says;
  } cases[] = {
      {"3g.40gb", 2, Code::kFailedPrecondition, "may start at memory slice 0, 4, not 2"},
      {"2g.20gb", 0, Code::kFailedPrecondition,
       "no room for 2g.20gb at memory slice 0"},  // over GI 9
      {"7g.80gb", 0, Code::kFailedPrecondition, "no room"},
      {"9g.99gb", 0, Code::kNotFound, "no MIG profile '9g.99gb'"},
  };
  for (const Case& c : cases) {
    Result<MigInfo> made = backend_->CreateMigInstance(1, c.profile, c.start);
    ASSERT_FALSE(made.ok()) << c.profile;
    EXPECT_EQ(made.status().code(), c.code) << c.profile;
    EXPECT_THAT(made.status().message(), HasSubstr(c.says));
  }
  EXPECT_EQ(Layout(), kStartLayout);
  EXPECT_EQ(fake_.GpuInstanceCount(), 2);
}

TEST_F(NvmlMigTest, NoMoreInstancesOfAProfileThanFit) {
  ASSERT_TRUE(backend_->CreateMigInstance(1, "1g.10gb+me", 1).ok());
  Result<MigInfo> second = backend_->CreateMigInstance(1, "1g.10gb+me", 2);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("no more 1g.10gb+me fit"));
}

TEST_F(NvmlMigTest, AComputeInstanceThatFailsDestroysItsGpuInstance) {
  fake_.FailComputeInstanceCreates(1);
  Result<MigInfo> made = backend_->CreateMigInstance(1, "1g.10gb", 3);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), Code::kUnavailable);
  EXPECT_THAT(made.status().message(), HasSubstr("nvmlGpuInstanceCreateComputeInstance"));
  EXPECT_THAT(made.status().message(), HasSubstr("the new GPU instance was destroyed"));
  EXPECT_EQ(fake_.GpuInstanceCount(), 2) << "no GPU instance left behind";
  EXPECT_EQ(Layout(), kStartLayout);
  // The room is free again.
  EXPECT_TRUE(backend_->CreateMigInstance(1, "1g.10gb", 3).ok());
}

TEST_F(NvmlMigTest, AnInstanceAProcessRunsOnIsNotDestroyed) {
  Status refused = backend_->DestroyMigInstance(1, 2);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("in use by process 4000: not destroyed"));
  EXPECT_EQ(Layout(), kStartLayout);

  fake_.ClearMigProcesses();
  ASSERT_TRUE(backend_->DestroyMigInstance(1, 2).ok());
  EXPECT_EQ(Layout(), (std::vector<std::string>{"1g.10gb@0#9"}));
  // Its room takes the larger profile now.
  Result<MigInfo> made = backend_->CreateMigInstance(1, "4g.40gb", 0);
  EXPECT_EQ(made.status().code(), Code::kFailedPrecondition) << "4g.40gb starts at 0, over GI 9";
  EXPECT_TRUE(backend_->CreateMigInstance(1, "3g.40gb", 4).ok());
}

TEST_F(NvmlMigTest, UnknownInstancesAndGpusWithoutMig) {
  EXPECT_EQ(backend_->DestroyMigInstance(1, 77).code(), Code::kNotFound);
  EXPECT_EQ(backend_->DestroyMigInstance(5, 2).code(), Code::kNotFound);
  Result<MigInfo> on_whole = backend_->CreateMigInstance(0, "1g.10gb", 0);
  ASSERT_FALSE(on_whole.ok());
  EXPECT_EQ(on_whole.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(on_whole.status().message(), HasSubstr("GPU 0: MIG is disabled"));
  EXPECT_EQ(backend_->DestroyMigInstance(0, 1).code(), Code::kNotFound);
}

TEST_F(NvmlMigTest, ALostGpuIsUnavailableAndChangesNothing) {
  fake_.SetLost(1, true);
  EXPECT_EQ(backend_->CreateMigInstance(1, "1g.10gb", 1).status().code(), Code::kUnavailable);
  EXPECT_EQ(backend_->DestroyMigInstance(1, 9).code(), Code::kUnavailable);
  fake_.SetLost(1, false);
  EXPECT_EQ(Layout(), kStartLayout);
}

}  // namespace
}  // namespace pinpoint::gpu
