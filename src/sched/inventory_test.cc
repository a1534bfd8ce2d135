#include "sched/inventory.h"

#include <gtest/gtest.h>

namespace pinpoint::sched {
namespace {

TEST(SharingModeTest, NamesRoundTrip) {
  for (SharingMode mode : {SharingMode::kExclusive, SharingMode::kTimeslice, SharingMode::kMps}) {
    auto parsed = SharingModeFromName(SharingModeName(mode));
    ASSERT_TRUE(parsed.has_value()) << SharingModeName(mode);
    EXPECT_EQ(*parsed, mode);
  }
  EXPECT_STREQ(SharingModeName(SharingMode::kTimeslice), "timeslice");
}

TEST(SharingModeTest, UnknownNames) {
  for (const char* name : {"", "MPS", "shared", "exclusive "}) {
    EXPECT_FALSE(SharingModeFromName(name).has_value()) << name;
  }
}

}  // namespace
}  // namespace pinpoint::sched
