// What a job's cgroup applies and used, read back (docs/enforcement.md). A plain directory stands
// for the cgroup root: the reads are of files, the same as cgroupfs shows them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "launch/cgroup.h"

namespace pinpoint::launch {
namespace {

class CgroupReadbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/pp-cgroup-readback-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    root_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

  std::string root_;
};

TEST_F(CgroupReadbackTest, ReadsTheFirstLineOfEachLimitAndTheUsage) {
  Cgroups cgroups(root_);
  std::string job = cgroups.JobDir(5);
  ASSERT_EQ(::mkdir(job.c_str(), 0755), 0);
  Write(job + "/cpu.max", "200000 100000\n");
  Write(job + "/memory.max", "4294967296\n");
  Write(job + "/memory.peak", "123456\n");
  Write(job + "/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n");
  Cgroups::Limits limits = cgroups.ReadLimits(5);
  EXPECT_EQ(limits.cpu_max, "200000 100000");
  EXPECT_EQ(limits.memory_max, "4294967296");
  EXPECT_EQ(limits.cpuset, "") << "cpusets are off: not read";
  Cgroups::Usage usage = cgroups.ReadUsage(5);
  EXPECT_EQ(usage.cpu_usec, 2500000);
  EXPECT_EQ(usage.mem_peak_bytes, 123456);
}

TEST_F(CgroupReadbackTest, WhatCannotBeReadIsNotReadNotGuessed) {
  Cgroups cgroups(root_);
  EXPECT_EQ(cgroups.ReadLimits(6).cpu_max, "") << "no group";
  EXPECT_EQ(cgroups.ReadUsage(6).cpu_usec, -1);
  std::string job = cgroups.JobDir(7);
  ASSERT_EQ(::mkdir(job.c_str(), 0755), 0);
  Write(job + "/memory.peak", "lots\n");
  Write(job + "/cpu.stat", "user_usec 1\n");
  EXPECT_EQ(cgroups.ReadUsage(7).mem_peak_bytes, -1);
  EXPECT_EQ(cgroups.ReadUsage(7).cpu_usec, -1);
}

TEST_F(CgroupReadbackTest, ALinkInPlaceOfTheGroupOrItsFileIsNotFollowed) {
  Cgroups cgroups(root_);
  std::string elsewhere = root_ + "/elsewhere";
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0755), 0);
  Write(elsewhere + "/cpu.max", "max 100000\n");
  ASSERT_EQ(::symlink(elsewhere.c_str(), cgroups.JobDir(8).c_str()), 0);
  EXPECT_EQ(cgroups.ReadLimits(8).cpu_max, "") << "the group's directory is a link";
  std::string job = cgroups.JobDir(9);
  ASSERT_EQ(::mkdir(job.c_str(), 0755), 0);
  ASSERT_EQ(::symlink((elsewhere + "/cpu.max").c_str(), (job + "/cpu.max").c_str()), 0);
  EXPECT_EQ(cgroups.ReadLimits(9).cpu_max, "") << "the file is a link";
}

TEST_F(CgroupReadbackTest, AHugeFileIsNotReadWhole) {
  Cgroups cgroups(root_);
  std::string job = cgroups.JobDir(10);
  ASSERT_EQ(::mkdir(job.c_str(), 0755), 0);
  Write(job + "/memory.max", std::string(1 << 20, '9'));
  EXPECT_EQ(cgroups.ReadLimits(10).memory_max, "") << "past the bound: refused";
}

}  // namespace
}  // namespace pinpoint::launch
