// BuildInventory: what a node's GPUs and the configuration make of the scheduler's inventory.
#include "daemon/inventory_builder.h"

#include <gtest/gtest.h>

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
// it; pinpoint never does (a GPU reset). A GPU in MIG mode is refused too while making and
// destroying instances is not built, and so is an instance named alone.
TEST(InventoryBuilderTest, MigDynamicIsRefusedWithOneLineNamingTheGpu) {
  Config config;
  config.gpu_modes["1"] = kMigDynamicMode;
  std::vector<gpu::GpuInfo> gpus = Gpus(2);
  auto off = BuildInventory(gpus, config);
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.status().message(),
            "config: gpu_modes gives GPU 1 (NVIDIA H100 80GB HBM3) mig-dynamic, but MIG is disabled on it: pinpoint "
            "never turns MIG on (that needs a GPU reset); an administrator enables it (nvidia-smi -i 1 -mig 1) or the "
            "GPU gets another mode");
  gpus[1].mig_enabled = true;
  gpus[1].migs.push_back({"MIG-1", "1g.10gb", 1, 0, uint64_t{10} << 30, 16});
  auto on = BuildInventory(gpus, config);
  ASSERT_FALSE(on.ok());
  EXPECT_NE(on.status().message().find("not in this release yet"), std::string::npos) << on.status().message();
  config.gpu_modes.clear();
  config.gpu_modes["MIG-1"] = kMigDynamicMode;
  EXPECT_EQ(BuildInventory(gpus, config).status().message(),
            "config: gpu_modes gives MIG instance MIG-1 mig-dynamic, a mode of a whole GPU (name GPU 1 instead)");
  config.gpu_modes.clear();
  EXPECT_TRUE(BuildInventory(gpus, config).ok()) << "without it, the MIG layout serves as it is";
}

}  // namespace
}  // namespace pinpoint::daemon
