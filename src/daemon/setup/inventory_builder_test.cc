// BuildInventory: what a node's GPUs and the configuration make of the scheduler's inventory.
#include "daemon/setup/inventory_builder.h"

#include <gtest/gtest.h>

#include "gpu/mig_profiles.h"

namespace pinpoint::daemon {
namespace {

std::vector<gpu::GpuInfo> Gpus(int n) {
  std::vector<gpu::GpuInfo> gpus;
  for (int i = 0; i < n; ++i) {
    gpu::GpuInfo g;
    g.index = i;
    g.uuid = "GPU-" + std::to_string(i);
    g.name = "NVIDIA H100 80GB HBM3";
    g.mem_total_bytes = uint64_t{80} << 30;
    g.sm_count = 132;
    gpus.push_back(g);
  }
  return gpus;
}

// keep_empty_gpus "auto" (the default) keeps one GPU in eight for whole-GPU jobs: none on the
// nodes of two or four GPUs, whose slices spread over every GPU; a count is taken as it is.
TEST(InventoryBuilderTest, KeepEmptyGpusAutoIsOneInEight) {
  Config config;
  for (auto [gpus, kept] : {std::pair{1, 0}, {2, 0}, {4, 0}, {7, 0}, {8, 1}, {16, 2}}) {
    auto inv = BuildInventory(Gpus(gpus), config);
    ASSERT_TRUE(inv.ok()) << inv.status().ToString();
    EXPECT_EQ(inv->keep_empty_gpus, kept) << gpus << " GPUs";
  }
  config.keep_empty_gpus = 3;
  EXPECT_EQ(BuildInventory(Gpus(2), config)->keep_empty_gpus, 3);
  config.keep_empty_gpus = 0;
  EXPECT_EQ(BuildInventory(Gpus(8), config)->keep_empty_gpus, 0);
}

// mig-dynamic (issue 26): a GPU whose MIG is disabled is refused with one line saying who enables
// it; pinpoint never does (a GPU reset). So is an instance named alone, and a GPU whose driver
// lists no profile.
TEST(InventoryBuilderTest, MigDynamicIsRefusedWithOneLineNamingTheGpu) {
  Config config;
  config.gpu_modes["1"] = GpuMode::MigDynamic();
  std::vector<gpu::GpuInfo> gpus = Gpus(2);
  auto off = BuildInventory(gpus, config);
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.status().message(),
            "config: gpu_modes gives GPU 1 (NVIDIA H100 80GB HBM3) mig-dynamic, but MIG is "
            "disabled on it: pinpoint "
            "never turns MIG on (that needs a GPU reset); an administrator enables it (nvidia-smi "
            "-i 1 -mig 1) or the "
            "GPU gets another mode");
  gpus[1].mig_enabled = true;
  gpus[1].migs.push_back({"MIG-1", "1g.10gb", 1, 0, uint64_t{10} << 30, 16, 0});
  EXPECT_EQ(BuildInventory(gpus, config).status().message(),
            "config: gpu_modes gives GPU 1 (NVIDIA H100 80GB HBM3) mig-dynamic, but its driver "
            "lists no MIG profile "
            "pinpoint could make");
  config.gpu_modes.clear();
  config.gpu_modes["MIG-1"] = GpuMode::MigDynamic();
  EXPECT_EQ(BuildInventory(gpus, config).status().message(),
            "config: gpu_modes gives MIG instance MIG-1 mig-dynamic, a mode of a whole GPU (name "
            "GPU 1 instead)");
  config.gpu_modes.clear();
  EXPECT_TRUE(BuildInventory(gpus, config).ok()) << "without it, the MIG layout serves as it is";
}

// A mig-dynamic GPU is one device per memory slice an instance may start at: the instance there,
// or a vacant slot as large as the largest instance that could start there. Indices follow.
TEST(InventoryBuilderTest, AMigDynamicGpuIsItsSlots) {
  Config config;
  config.gpu_modes["0"] = GpuMode::MigDynamic();
  std::vector<gpu::GpuInfo> gpus = Gpus(2);
  gpus[0].name = "NVIDIA A100-SXM4-80GB";
  gpus[0].mig_enabled = true;
  gpus[0].migs.push_back({"MIG-3g", "3g.40gb", 2, 0, uint64_t{40320} << 20, 42, 4});
  std::map<int, std::vector<gpu::MigProfileInfo>> profiles = {{0, gpu::A100MigProfileInfos()}};
  auto inv = BuildInventory(gpus, config, profiles);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ(inv->devices.size(), 8u) << "slots 0-6, then GPU 1";
  for (int i = 0; i < 7; ++i) {
    const sched::Device& d = inv->devices[static_cast<size_t>(i)];
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.partition.kind, partition::Kind::kMigSlot);
    EXPECT_EQ(d.partition.start, i);
    EXPECT_TRUE(d.partition.is_mig());
    EXPECT_EQ(d.partition.vacant, i != 4) << i;
    EXPECT_EQ(d.partition.profile, i == 4 ? "3g.40gb" : "") << i;
  }
  EXPECT_EQ(inv->devices[4].uuid, "MIG-3g");
  EXPECT_EQ(inv->devices[4].name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  EXPECT_EQ(inv->devices[4].mem_bytes, uint64_t{40320} << 20);
  EXPECT_EQ(inv->devices[0].name, "NVIDIA A100-SXM4-80GB MIG slot 0 (vacant)");
  EXPECT_EQ(inv->devices[0].uuid, "");
  EXPECT_EQ(inv->devices[0].mem_bytes, gpu::A100MigProfile("7g.80gb")->mem_total_bytes);
  EXPECT_EQ(inv->devices[1].mem_bytes, gpu::A100MigProfile("1g.10gb")->mem_total_bytes);
  EXPECT_EQ(inv->devices[7].gpu_index, 1);
  EXPECT_EQ(inv->devices[7].partition.kind, partition::Kind::kGpu);
  EXPECT_EQ(inv->devices[7].partition.start, -1);

  gpus[0].migs[0].placement_start = -1;  // NVML did not say where it is
  auto unplaced = BuildInventory(gpus, config, profiles);
  ASSERT_FALSE(unplaced.ok());
  EXPECT_NE(unplaced.status().message().find("MIG instance MIG-3g has no placement NVML reports"),
            std::string::npos)
      << unplaced.status().message();
}

}  // namespace
}  // namespace pinpoint::daemon
