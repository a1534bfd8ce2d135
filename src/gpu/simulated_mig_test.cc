// The simulated node's MIG (simulated_backend.h): profiles and placements as an A100 80GB's
// driver lists them, and instances made and destroyed only by the rules NVML enforces.
#include <gtest/gtest.h>

#include <set>

#include "gpu/simulated_backend.h"

namespace pinpoint::gpu {
namespace {

std::unique_ptr<SimulatedBackend> Node(const char* preset) {
  return std::move(SimulatedBackend::FromPreset(preset)).value();
}

std::vector<MigInfo> Migs(SimulatedBackend& b, int gpu) {
  return b.Inventory().value()[static_cast<size_t>(gpu)].migs;
}

TEST(SimulatedMigTest, AnA100ListsItsDriversProfilesAndPlacements) {
  auto node = Node("a100x8");
  auto profiles = node->MigProfiles(0);
  ASSERT_TRUE(profiles.ok()) << profiles.status().ToString();
  ASSERT_EQ(profiles->size(), 6u);
  EXPECT_EQ((*profiles)[0].name, "1g.10gb");
  EXPECT_EQ((*profiles)[0].instance_count, 7);
  EXPECT_EQ((*profiles)[3].name, "3g.40gb");
  EXPECT_EQ((*profiles)[3].placements, (std::vector<MigProfileInfo::Placement>{{0, 4}, {4, 4}}));
  EXPECT_TRUE(Node("h100x2")->MigProfiles(0)->empty()) << "no table for it: none";
  EXPECT_EQ(node->MigProfiles(8).status().code(), Code::kNotFound);
}

TEST(SimulatedMigTest, APresetsLayoutHasThePlacementsADriverGivesIt) {
  auto node = Node("a100x8-mig");  // GPU 0: 3g.40gb + 2x 2g.20gb, GPU 1: 7x 1g.10gb
  std::vector<MigInfo> gpu0 = Migs(*node, 0);
  ASSERT_EQ(gpu0.size(), 3u);
  EXPECT_EQ(gpu0[0].placement_start, 4) << "the 3g takes the upper half, the 2g's the lower";
  EXPECT_EQ(gpu0[1].placement_start, 0);
  EXPECT_EQ(gpu0[2].placement_start, 2);
  std::vector<MigInfo> gpu1 = Migs(*node, 1);
  for (size_t i = 0; i < gpu1.size(); ++i) EXPECT_EQ(gpu1[i].placement_start, static_cast<int>(i));
}

TEST(SimulatedMigTest, InstancesAreMadeAndDestroyedByTheDriversRules) {
  auto node = Node("a100x8-mig");
  EXPECT_EQ(node->CreateMigInstance(2, "1g.10gb", 0).status().code(), Code::kFailedPrecondition)
      << "MIG disabled";
  EXPECT_EQ(node->CreateMigInstance(1, "1g.10gb", 6).status().message(),
            "GPU 1 has 7 instances of 1g.10gb already, as many as fit");
  EXPECT_EQ(node->CreateMigInstance(1, "1g.20gb", 4).status().message(),
            "GPU 1: memory slices 4-5 are taken by GPU instance 5");
  EXPECT_EQ(node->CreateMigInstance(1, "1g.5gb", 0).status().code(), Code::kNotFound);
  ASSERT_TRUE(node->DestroyMigInstance(1, 7).ok());
  EXPECT_EQ(node->DestroyMigInstance(1, 7).code(), Code::kNotFound);
  EXPECT_EQ(node->CreateMigInstance(1, "1g.10gb", 7).status().message(),
            "GPU 1: 1g.10gb may start at memory slice 0, 1, 2, 3, 4, 5, 6, not 7");
  auto made = node->CreateMigInstance(1, "1g.10gb", 6);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->gpu_instance_id, 7u) << "the lowest id free";
  EXPECT_EQ(made->placement_start, 6);
  EXPECT_EQ(made->mem_total_bytes, uint64_t{9984} << 20);
  EXPECT_EQ(Migs(*node, 1).back().uuid, made->uuid) << "the inventory lists it";
  EXPECT_NE(made->uuid, Migs(*node, 1).front().uuid);
  // GPU 0: the 3g at 4 and the 2g's at 0 and 2; a 3g.40gb at 0 needs both 2g's gone.
  EXPECT_EQ(node->CreateMigInstance(0, "3g.40gb", 0).status().code(), Code::kFailedPrecondition);
  ASSERT_TRUE(node->DestroyMigInstance(0, 2).ok());
  ASSERT_TRUE(node->DestroyMigInstance(0, 3).ok());
  EXPECT_EQ(node->CreateMigInstance(0, "3g.40gb", 2).status().code(), Code::kFailedPrecondition)
      << "no placement";
  ASSERT_TRUE(node->CreateMigInstance(0, "3g.40gb", 0).ok());
  EXPECT_EQ(node->CreateMigInstance(0, "7g.80gb", 0).status().code(), Code::kFailedPrecondition);
}

// An instance id is reused once its instance is gone, as NVML's are; a UUID never is, not even
// by the next start of the simulated node.
TEST(SimulatedMigTest, ANewInstanceNeverRepeatsAnEarlierOnesUuid) {
  std::set<std::string> seen;
  for (int start = 0; start < 2; ++start) {
    auto node = Node("a100x8-mig");
    for (const MigInfo& m : Migs(*node, 1))
      seen.insert(m.uuid);  // the preset's, the same each start
    for (int round = 0; round < 3; ++round) {
      ASSERT_TRUE(node->DestroyMigInstance(1, 7).ok());
      auto made = node->CreateMigInstance(1, "1g.10gb", 6);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      EXPECT_EQ(made->gpu_instance_id, 7u);
      EXPECT_TRUE(seen.insert(made->uuid).second) << "repeated: " << made->uuid;
    }
  }
}

TEST(SimulatedMigTest, AnInstanceAProcessRunsOnIsNotDestroyed) {
  auto node = Node("a100x8-mig");
  GpuProcess p;
  p.pid = 4242;
  p.gpu_instance_id = 3;
  p.compute_instance_id = 0;
  ASSERT_TRUE(node->SetProcesses(1, {p}).ok());
  EXPECT_EQ(node->DestroyMigInstance(1, 3).message(),
            "MIG GPU 1 instance 3 is in use by process 4242: not destroyed");
  EXPECT_EQ(Migs(*node, 1).size(), 7u);
  ASSERT_TRUE(node->SetProcesses(1, {}).ok());
  EXPECT_TRUE(node->DestroyMigInstance(1, 3).ok());
}

TEST(SimulatedMigTest, ACreateThatFailsHalfWayLeavesTheLayoutAsItWas) {
  auto node = Node("a100x8-mig");
  ASSERT_TRUE(node->DestroyMigInstance(1, 1).ok());
  std::vector<MigInfo> before = Migs(*node, 1);
  node->FailCreatesHalfWay(1);
  auto failed = node->CreateMigInstance(1, "1g.10gb", 0);
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  EXPECT_EQ(Migs(*node, 1).size(), before.size()) << "the GPU instance was destroyed again";
  EXPECT_TRUE(node->CreateMigInstance(1, "1g.10gb", 0).ok()) << "the next create goes through";
}

}  // namespace
}  // namespace pinpoint::gpu
