// SystemContainerCgroups over a cgroup tree laid out in a test directory (the kernel's files are
// plain files here), and CgroupOf on this test's own process.
#include "launch/container_cgroups.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/test_dir.h"

namespace pinpoint::launch {
namespace {

namespace fs = std::filesystem;

void Group(const std::string& dir, const std::string& procs) {
  fs::create_directories(dir);
  std::ofstream(dir + "/cgroup.procs") << procs;
}

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ContainerCgroupsTest, KeysMapToTheirHierarchysDirectory) {
  TestDir root;
  Group(root.path() + "/unified/machine/c1", "");
  Group(root.path() + "/pids/libpod_parent/c1", "");
  Group(root.path() + "/systemd/libpod_parent/c1", "");
  SystemContainerCgroups cgroups(root.path());
  EXPECT_EQ(cgroups.DirOf("0::/machine/c1"), root.path() + "/unified/machine/c1");
  EXPECT_EQ(cgroups.DirOf("pids:/libpod_parent/c1"), root.path() + "/pids/libpod_parent/c1");
  EXPECT_EQ(cgroups.DirOf("name=systemd:/libpod_parent/c1"),
            root.path() + "/systemd/libpod_parent/c1");
  EXPECT_EQ(cgroups.DirOf("pids:/libpod_parent/c2"), "");
  EXPECT_EQ(cgroups.DirOf("pids:/libpod_parent/../c1"), "") << "a key with '..' names no directory";
}

TEST(ContainerCgroupsTest, ProcessesAreThoseOfTheGroupAndEveryGroupBelow) {
  TestDir root;
  Group(root.path() + "/pids/c1", "10\n11\n");
  Group(root.path() + "/pids/c1/sub", "12\n");
  Group(root.path() + "/pids/c1/sub/deeper", "13\n");
  Group(root.path() + "/pids/c2", "99\n");
  SystemContainerCgroups cgroups(root.path());
  auto pids = cgroups.Processes("pids:/c1");
  ASSERT_TRUE(pids.has_value());
  EXPECT_EQ(Sorted(*pids), (std::vector<int64_t>{10, 11, 12, 13}));
  EXPECT_FALSE(cgroups.Processes("pids:/gone").has_value());
}

// Attack: a container makes a link below its cgroup to another group, or a tree deeper than the
// bound; the walk neither follows the link nor goes past the bound.
TEST(ContainerCgroupsTest, TheWalkFollowsNoLinkAndIsBounded) {
  TestDir root;
  Group(root.path() + "/pids/c1", "10\n");
  Group(root.path() + "/pids/victim", "1234\n");
  fs::create_directory_symlink(root.path() + "/pids/victim", root.path() + "/pids/c1/link");
  std::string deep = root.path() + "/pids/c1";
  for (int i = 0; i < 40; ++i) {
    deep += "/d";
    Group(deep, std::to_string(100 + i) + "\n");
  }
  SystemContainerCgroups cgroups(root.path());
  auto pids = cgroups.Processes("pids:/c1").value();
  EXPECT_EQ(std::count(pids.begin(), pids.end(), 1234), 0) << "the link was followed";
  EXPECT_EQ(std::count(pids.begin(), pids.end(), 139), 0) << "the walk went past 32 levels";
  EXPECT_EQ(std::count(pids.begin(), pids.end(), 131), 1);
}

TEST(ContainerCgroupsTest, SignalOfAGoneCgroupIsOk) {
  TestDir root;
  SystemContainerCgroups cgroups(root.path());
  EXPECT_TRUE(cgroups.Signal("pids:/gone", 15).ok());
}

// Attack: the hook names a process of pinpointd's own cgroup (or the root one): refused, so a
// lease can never stop pinpointd or everything on the node.
TEST(ContainerCgroupsTest, AProcessOfPinpointdsOwnCgroupIsRefused) {
  SystemContainerCgroups cgroups("/sys/fs/cgroup", ::getpid());
  auto key = cgroups.CgroupOf(::getpid());
  ASSERT_FALSE(key.ok()) << *key;
  EXPECT_EQ(key.status().code(), Code::kFailedPrecondition) << key.status().ToString();
  EXPECT_EQ(cgroups.CgroupOf(0).status().code(), Code::kNotFound);
  EXPECT_EQ(cgroups.CgroupOf(-1).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pinpoint::launch
