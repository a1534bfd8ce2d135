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

}  // namespace
}  // namespace pinpoint::partition
