#include "partition/partition.h"

#include <gtest/gtest.h>

namespace pinpoint::partition {
namespace {

TEST(PartitionTest, AGpuIsWholeAndTakesAnyProfileless) {
  Partition gpu = Partition::Gpu();
  EXPECT_EQ(gpu.kind, Kind::kGpu);
  EXPECT_FALSE(gpu.is_mig());
  EXPECT_FALSE(gpu.is_slot());
  EXPECT_TRUE(gpu.usable());
  EXPECT_TRUE(gpu.Offers(""));
  EXPECT_FALSE(gpu.Offers("1g.10gb")) << "a --mig slice needs an instance of its profile";
}

TEST(PartitionTest, AnInstanceOffersItsProfileOnly) {
  Partition mig = Partition::Instance("3g.40gb");
  EXPECT_TRUE(mig.is_mig());
  EXPECT_FALSE(mig.is_slot()) << "an admin's instance is not pinpoint's to change";
  EXPECT_TRUE(mig.Offers("3g.40gb"));
  EXPECT_TRUE(mig.Offers(""));
  EXPECT_FALSE(mig.Offers("1g.10gb"));
}

TEST(PartitionTest, ASlotIsVacantUntilItHoldsAnInstance) {
  Partition vacant = Partition::Slot(4, "");
  EXPECT_TRUE(vacant.is_mig());
  EXPECT_TRUE(vacant.is_slot());
  EXPECT_EQ(vacant.start, 4);
  EXPECT_TRUE(vacant.vacant);
  EXPECT_FALSE(vacant.usable());
  Partition held = Partition::Slot(4, "3g.40gb");
  EXPECT_FALSE(held.vacant);
  EXPECT_TRUE(held.usable());
  EXPECT_TRUE(held.Offers("3g.40gb"));
}

TEST(PartitionTest, EveryKindHasAName) {
  EXPECT_STREQ(KindName(Kind::kGpu), "gpu");
  EXPECT_STREQ(KindName(Kind::kMigInstance), "mig-instance");
  EXPECT_STREQ(KindName(Kind::kMigSlot), "mig-slot");
}

TEST(PartitionTest, MigActionsHaveOneNameEach) {
  for (MigAction a : {MigAction::kCreate, MigAction::kDestroy}) {
    std::optional<MigAction> back = MigActionFromName(MigActionName(a));
    ASSERT_TRUE(back.has_value()) << MigActionName(a);
    EXPECT_EQ(*back, a);
  }
  EXPECT_FALSE(MigActionFromName("resize").has_value());
  EXPECT_FALSE(MigActionFromName("").has_value());
}

TEST(PartitionTest, SliceRangesOverlapOnlyWhenTheyShareASlice) {
  SliceRange two{2, 4};
  EXPECT_TRUE(two.Overlaps({3, 5}));
  EXPECT_TRUE(two.Overlaps({0, 8}));
  EXPECT_TRUE((SliceRange{0, 8}).Overlaps(two));
  EXPECT_FALSE(two.Overlaps({4, 6})) << "adjacent: [2,4) ends where [4,6) begins";
  EXPECT_FALSE(two.Overlaps({0, 2}));
}

TEST(PartitionTest, TheReserveIsTakenFromADeviceAndAddedToAnAsk) {
  MemoryReserve reserve{.bytes = 512};
  EXPECT_EQ(reserve.Offered(2048), 1536u);
  EXPECT_EQ(reserve.Offered(512), 0u);  // all of it kept back
  EXPECT_EQ(reserve.Offered(100), 0u);  // less than the reserve never wraps
  EXPECT_EQ(reserve.Needed(1536), 2048u);
  EXPECT_EQ(reserve.Offered(reserve.Needed(1000)), 1000u);
  EXPECT_EQ(reserve.Needed(UINT64_MAX - 10), UINT64_MAX);  // saturates, never wraps to small
  EXPECT_EQ(MemoryReserve{}.Offered(7), 7u);
}

TEST(PartitionTest, AProfileOffersTheMostOfItsDevices) {
  ProfileMemory profiles;
  EXPECT_TRUE(profiles.empty());
  EXPECT_EQ(profiles.Most(), 0u);
  EXPECT_EQ(profiles.Names(), "");
  profiles.Add("3g.40gb", 40);
  profiles.Add("1g.10gb", 9);
  profiles.Add("1g.10gb", 10);
  profiles.Add("1g.10gb", 8);  // a smaller one never lowers what the profile offers
  profiles.Add("", 99);        // no name: nothing a slice can ask for
  EXPECT_EQ(profiles.Of("1g.10gb"), std::optional<uint64_t>(10));
  EXPECT_EQ(profiles.Of("3g.40gb"), std::optional<uint64_t>(40));
  EXPECT_EQ(profiles.Of("2g.20gb"), std::nullopt);
  EXPECT_EQ(profiles.Of(""), std::nullopt);
  EXPECT_EQ(profiles.Most(), 40u);
  EXPECT_EQ(profiles.Names(), "1g.10gb, 3g.40gb");
  EXPECT_EQ((ProfileMemory{{"a", 1}, {"b", 2}}).Names(), "a, b");
}

}  // namespace
}  // namespace pinpoint::partition
