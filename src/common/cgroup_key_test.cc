#include "common/cgroup_key.h"

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

constexpr char kHybrid[] =
    "9:name=systemd:/libpod_parent/libpod-f5\n8:pids:/libpod_parent/libpod-f5\n"
    "4:memory:/libpod_parent/libpod-f5\n0::/libpod_parent/libpod-f5\n";

TEST(CgroupKeyTest, TheV2PathFirstThenV1Hierarchies) {
  EXPECT_EQ(ContainerCgroupKey(kHybrid).value(), "0::/libpod_parent/libpod-f5");
  EXPECT_EQ(ContainerCgroupKey("8:pids:/libpod_parent/c\n4:memory:/x\n0::/\n").value(),
            "pids:/libpod_parent/c");
}

TEST(CgroupKeyTest, TheRootCgroupIsRefused) {
  auto key = ContainerCgroupKey("8:pids:/\n0::/\n");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().code(), Code::kFailedPrecondition);
}

TEST(CgroupKeyTest, DotDotAndControlCharactersAreRefused) {
  EXPECT_EQ(ContainerCgroupKey("0::/a/../b\n").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ContainerCgroupKey("0::/a/\x1b[2J\n").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ContainerCgroupKey("0::relative\n").status().code(), Code::kInvalidArgument);
}

TEST(CgroupKeyTest, MembershipIsTheCgroupOrBelowInTheSameHierarchy) {
  EXPECT_TRUE(InCgroup(kHybrid, "pids:/libpod_parent/libpod-f5"));
  EXPECT_TRUE(InCgroup("0::/libpod_parent/libpod-f5/sub\n", "0::/libpod_parent/libpod-f5"));
  EXPECT_FALSE(InCgroup("0::/libpod_parent/libpod-f55\n", "0::/libpod_parent/libpod-f5"));
  EXPECT_FALSE(InCgroup("4:memory:/libpod_parent/libpod-f5\n", "pids:/libpod_parent/libpod-f5"));
  EXPECT_FALSE(InCgroup(kHybrid, "0::/"));
}

TEST(CgroupKeyTest, KeysSplitIntoHierarchyAndPath) {
  std::string h, p;
  ASSERT_TRUE(SplitCgroupKey("0::/a/b", &h, &p));
  EXPECT_EQ(h + " " + p, "0: /a/b");
  ASSERT_TRUE(SplitCgroupKey("name=systemd:/a", &h, &p));
  EXPECT_EQ(h + " " + p, "name=systemd /a");
  EXPECT_FALSE(SplitCgroupKey("pids:/", &h, &p));
  EXPECT_FALSE(SplitCgroupKey("garbage", &h, &p));
}

}  // namespace
}  // namespace pinpoint
