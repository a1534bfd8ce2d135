#include "gpu/declared_usage.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "common/spawn.h"

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

bool Lists(DeclaredUsage& usage, int64_t pid) {
  for (const GpuProcess& p : usage.For("GPU-decl-test", ""))
    if (p.pid == pid) return true;
  return false;
}

// Each program's environment is read once (a node of many processes with large environments cost
// the watcher a read of each, twice a second); a process that runs another program (an exec lays
// out a new environment) is read again, so what the new program declares is seen.
TEST(DeclaredUsageTest, AProgramIsReadOnceAndAnExecAgain) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  SpawnSpec s;
  s.argv = {"sh", "-c",
            "read line; exec env PINPOINT_SIMULATED_GPU_MEM=1G CUDA_VISIBLE_DEVICES=GPU-decl-test "
            "sleep 1000"};
  s.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  s.in = SpawnStream::Fd(fds[0]);
  auto pid = Spawn(s);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ::close(fds[0]);
  DeclaredUsage usage;
  EXPECT_FALSE(Lists(usage, *pid)) << "the shell declares nothing";
  ASSERT_EQ(::write(fds[1], "go\n", 3), 3);
  ::close(fds[1]);
  // The exec comes when the shell has read its line: looked at until then, within a deadline.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool listed = false;
  while (!listed && std::chrono::steady_clock::now() < deadline) listed = Lists(usage, *pid);
  EXPECT_TRUE(listed) << "the program it exec'd declares 1G: not seen after the exec";
  ::kill(*pid, SIGKILL);
  WaitChild(*pid, 60'000);
}

}  // namespace
}  // namespace pinpoint::gpu
