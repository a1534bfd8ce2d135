// NvmlBackend's dynamic MIG on a real GPU, read-only (tests/gpu/mig_dynamic_gpu.sh runs it with
// PINPOINT_REAL_NVML=1; elsewhere it is skipped): on a GPU not in MIG mode a create is refused
// before any NVML create call, a destroy finds nothing, and the GPU is as it was.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu/nvml_backend.h"

namespace pinpoint::gpu {
namespace {

TEST(NvmlRealGpuTest, MakingAnInstanceOnAGpuNotInMigModeIsRefusedAndChangesNothing) {
  if (std::getenv("PINPOINT_REAL_NVML") == nullptr)
    GTEST_SKIP() << "set PINPOINT_REAL_NVML=1 on a GPU machine";
  Result<std::unique_ptr<GpuBackend>> backend = NvmlBackend::Create();
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  Result<std::vector<GpuInfo>> before = (*backend)->Inventory();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  const GpuInfo* gpu = nullptr;
  for (const GpuInfo& g : *before)
    if (!g.mig_enabled) gpu = &g;
  if (gpu == nullptr) GTEST_SKIP() << "every GPU is in MIG mode";
  Result<std::vector<MigProfileInfo>> profiles = (*backend)->MigProfiles(gpu->index);
  ASSERT_TRUE(profiles.ok()) << profiles.status().ToString();
  ASSERT_FALSE(profiles->empty());
  ASSERT_FALSE(profiles->front().placements.empty());
  const MigProfileInfo& p = profiles->front();
  std::cout << "GPU " << gpu->index << " (" << gpu->name << "): create " << p.name
            << " at memory slice " << p.placements.front().start << "\n";
  Result<MigInfo> made =
      (*backend)->CreateMigInstance(gpu->index, p.name, p.placements.front().start);
  ASSERT_FALSE(made.ok());
  std::cout << "  -> " << made.status().ToString() << "\n";
  EXPECT_EQ(made.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(made.status().message(), "GPU " + std::to_string(gpu->index) + ": MIG is disabled");
  Status destroyed = (*backend)->DestroyMigInstance(gpu->index, 1);
  std::cout << "destroy GPU instance 1 -> " << destroyed.ToString() << "\n";
  EXPECT_EQ(destroyed.code(), Code::kNotFound);
  Result<std::vector<GpuInfo>> after = (*backend)->Inventory();
  ASSERT_TRUE(after.ok());
  const GpuInfo& same = (*after)[static_cast<size_t>(gpu->index)];
  EXPECT_FALSE(same.mig_enabled);
  EXPECT_TRUE(same.migs.empty());
}

}  // namespace
}  // namespace pinpoint::gpu
