#include "mps/env_only_mps.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/test_dir.h"

namespace pinpoint::mps {
namespace {

TEST(PinnedMemLimitValueTest, WholeMibForDeviceZero) {
  EXPECT_EQ(PinnedMemLimitValue(1ull << 30), "0=1024M");
  EXPECT_EQ(PinnedMemLimitValue((3ull << 29)), "0=1536M");
  EXPECT_EQ(PinnedMemLimitValue(100), "0=1M");
}

TEST(EnvOnlyMpsTest, ClientEnvironmentCarriesDirectoriesAndLimits) {
  TestDir tmp;
  const std::string& root = tmp.path();
  EnvOnlyMps mps(root);
  sharing::Slice slice{.device_index = 0,
                       .device_uuid = "GPU-abc",
                       .uid = 1000,
                       .gid = 1000,
                       .gpu_mem_bytes = 4ull << 30,
                       .gpu_share_pct = 20};
  auto env = mps.Prepare(slice);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->at("CUDA_MPS_PIPE_DIRECTORY"), root + "/GPU-abc/pipe");
  EXPECT_EQ(env->at("CUDA_MPS_LOG_DIRECTORY"), root + "/GPU-abc/log");
  EXPECT_EQ(env->at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=4096M");
  EXPECT_EQ(env->at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "20");

  slice.gpu_share_pct = 0;
  auto no_share = mps.Prepare(slice);
  ASSERT_TRUE(no_share.ok());
  EXPECT_EQ(no_share->count("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), 0u);

  slice.device_uuid = "../escape";
  EXPECT_FALSE(mps.Prepare(slice).ok());
}

}  // namespace
}  // namespace pinpoint::mps
