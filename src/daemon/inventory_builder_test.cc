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

}  // namespace
}  // namespace pinpoint::daemon
