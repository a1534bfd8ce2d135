#include "gpu/declared_usage.h"

#include <gtest/gtest.h>

#include <string>

namespace pinpoint::gpu {
namespace {

using std::string_literals::operator""s;

// What a process declares on a simulated node: its first visible GPU's memory, and only on the
// node it names (or on every node when it names none), so that simulated nodes side by side on
// one machine, whose GPUs share UUIDs, never hold or kill each other's processes.
TEST(DeclaredGpuMemTest, TheFirstVisibleGpuOfTheNodeItNames) {
  std::string env = "PINPOINT_SIMULATED_GPU_MEM=1G\0CUDA_VISIBLE_DEVICES=GPU-a,GPU-b\0"s;
  EXPECT_EQ(DeclaredGpuMem(env, "GPU-a"), 1ull << 30);
  EXPECT_EQ(DeclaredGpuMem(env, "GPU-a", "/var/lib/a"), 1ull << 30)
      << "names no node: every node's";
  EXPECT_FALSE(DeclaredGpuMem(env, "GPU-b").has_value()) << "the first visible GPU only";
  std::string mine = env + "PINPOINT_SIMULATED_NODE=/var/lib/a\0"s;
  EXPECT_EQ(DeclaredGpuMem(mine, "GPU-a", "/var/lib/a"), 1ull << 30);
  EXPECT_FALSE(DeclaredGpuMem(mine, "GPU-a", "/var/lib/b").has_value()) << "another node's";
  EXPECT_FALSE(DeclaredGpuMem(mine, "GPU-a").has_value());
  EXPECT_FALSE(DeclaredGpuMem("CUDA_VISIBLE_DEVICES=GPU-a\0"s, "GPU-a").has_value())
      << "declares nothing";
  EXPECT_FALSE(
      DeclaredGpuMem("PINPOINT_SIMULATED_GPU_MEM=lots\0CUDA_VISIBLE_DEVICES=GPU-a\0"s, "GPU-a")
          .has_value());
}

}  // namespace
}  // namespace pinpoint::gpu
