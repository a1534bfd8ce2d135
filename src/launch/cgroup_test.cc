// A job's cgroup (Cgroups), over a directory that stands in for cgroupfs: what is written to
// which control file for a job with CPUs of its own and for one that shares them.
#include "launch/cgroup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/file_util.h"
#include "common/test_dir.h"

namespace pinpoint::launch {
namespace {

std::string Control(const std::string& dir, const char* file) {
  auto text = ReadFile(dir + "/" + file);
  return text.ok() ? *text : "(none)";
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(root_.path() + "/cgroup.controllers") << "cpuset cpu io memory pids\n";
  }
  TestDir root_;
};

TEST_F(CgroupTest, AJobThatSharesCpusIsKeptOffTheSystemsAndHeldByItsQuota) {
  Cgroups groups(root_.path() + "/pinpoint");
  ASSERT_TRUE(groups.Probe().ok());
  ASSERT_TRUE(groups.cpusets());
  auto own = groups.CreateJobGroup(1, 2, 1 << 30, {2, 3}, {1, 2, 3});
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(Control(*own, "cpuset.cpus"), "2-3");
  EXPECT_EQ(Control(*own, "cpu.max"), "max");
  EXPECT_EQ(Control(*own, "memory.max"), std::to_string(1 << 30));
  auto shares = groups.CreateJobGroup(2, 2, 0, {}, {1, 2, 3});
  ASSERT_TRUE(shares.ok()) << shares.status().ToString();
  EXPECT_EQ(Control(*shares, "cpuset.cpus"), "1-3") << "never CPU 0, the system's";
  EXPECT_EQ(Control(*shares, "cpu.max"), "200000 100000");
  auto anywhere = groups.CreateJobGroup(3, 1, 0);
  ASSERT_TRUE(anywhere.ok());
  EXPECT_EQ(Control(*anywhere, "cpuset.cpus"), "(none)") << "no system CPUs: the parent's";
  EXPECT_EQ(Control(*anywhere, "cpu.max"), "100000 100000");
}

// A suspend charges the job's checkpointed device memory to its own cgroup (issue 56): its
// memory.max is raised, then put back. The control file is opened without following a link: one
// that is a link is refused and its target left alone.
TEST_F(CgroupTest, AJobsMemoryMaxIsRaisedAndPutBackAndALinkIsNotFollowed) {
  Cgroups groups(root_.path() + "/pinpoint");
  ASSERT_TRUE(groups.Probe().ok());
  auto dir = groups.CreateJobGroup(4, 1, 1 << 30);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  ASSERT_EQ(Control(*dir, "memory.max"), "1073741824");
  ASSERT_TRUE(groups.SetMemoryMax(4, 9ull << 30).ok());
  EXPECT_EQ(Control(*dir, "memory.max"), "9663676416");
  ASSERT_TRUE(groups.SetMemoryMax(4, 1 << 30).ok());
  EXPECT_EQ(Control(*dir, "memory.max"), "1073741824");
  EXPECT_FALSE(groups.SetMemoryMax(5, 1 << 30).ok()) << "no such job's cgroup";
  std::string target = root_.path() + "/elsewhere";
  std::ofstream(target) << "untouched";
  std::filesystem::remove(*dir + "/memory.max");
  std::filesystem::create_symlink(target, *dir + "/memory.max");
  EXPECT_FALSE(groups.SetMemoryMax(4, 9ull << 30).ok());
  EXPECT_EQ(Control(root_.path(), "elsewhere"), "untouched");
}

}  // namespace
}  // namespace pinpoint::launch
