// CPU lists as the kernel writes them, and the host's CPUs read from a /sys of the test's own.
#include "common/cpu_list.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/test_dir.h"

namespace pinpoint {
namespace {

TEST(CpuListTest, ReadsAndWritesTheKernelsForm) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList("5,1-2,2"), (std::vector<int>{1, 2, 5})) << "ascending, each once";
  EXPECT_EQ(*ParseCpuList(""), std::vector<int>{});
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({4}), "4");
  EXPECT_EQ(FormatCpuList({}), "");
  for (const char* bad : {"a", "3-1", "1,,2", "-1", "0-65536", "1-", "1 2"})
    EXPECT_EQ(ParseCpuList(bad).status().code(), Code::kInvalidArgument) << bad;
}

TEST(CpuListTest, TheTopologyIsTheOnlineCpusThisProcessMayUseWithTheirNodes) {
  TestDir sys;
  std::filesystem::create_directories(sys.path() + "/devices/system/cpu");
  std::filesystem::create_directories(sys.path() + "/devices/system/node/node0");
  std::filesystem::create_directories(sys.path() + "/devices/system/node/node1");
  std::filesystem::create_directories(sys.path() + "/devices/system/node/possible");  // not a node
  std::ofstream(sys.path() + "/devices/system/cpu/online") << "0-1023\n";
  std::ofstream(sys.path() + "/devices/system/node/node0/cpulist") << "0\n";
  std::ofstream(sys.path() + "/devices/system/node/node1/cpulist") << "1-1023\n";
  CpuTopology t = ReadCpuTopology(sys.path());
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(mine), &mine), 0);
  ASSERT_EQ(t.cpus.size(), static_cast<size_t>(CPU_COUNT(&mine)))
      << "only those this process may use";
  for (int cpu : t.cpus) EXPECT_TRUE(CPU_ISSET(cpu, &mine)) << cpu;
  for (int cpu : t.cpus) EXPECT_EQ(t.node_of.at(cpu), cpu == 0 ? 0 : 1) << cpu;
  CpuTopology none = ReadCpuTopology(sys.path() + "/absent");
  EXPECT_EQ(none.cpus, t.cpus) << "no /sys: the affinity alone";
  EXPECT_TRUE(none.node_of.empty());
}

TEST(CpuListTest, WithoutTheAffinityTheTopologyIsEveryOnlineCpuAndTheSystemsCanBeTakenOut) {
  TestDir sys;
  std::filesystem::create_directories(sys.path() + "/devices/system/cpu");
  std::ofstream(sys.path() + "/devices/system/cpu/online") << "0-1023\n";
  CpuTopology all = ReadCpuTopology(sys.path(), /*within_affinity=*/false);
  ASSERT_EQ(all.cpus.size(), 1024u) << "pinpointd pinned to CPU 0 still sees every CPU";
  CpuTopology jobs = WithoutCpus(all, {0, 5, 2000});
  ASSERT_EQ(jobs.cpus.size(), 1022u);
  EXPECT_EQ(jobs.cpus.front(), 1);
  EXPECT_EQ(std::count(jobs.cpus.begin(), jobs.cpus.end(), 5), 0);
}

}  // namespace
}  // namespace pinpoint
