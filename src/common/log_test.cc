#include "common/log.h"

#include <gtest/gtest.h>

namespace pinpoint::log {
namespace {

TEST(LogTest, SetLevelTakesTheLevelsNamesAndRefusesAnyOtherWithoutChangingIt) {
  ASSERT_TRUE(SetLevel("warn"));
  EXPECT_FALSE(Enabled(Level::kInfo));
  EXPECT_TRUE(Enabled(Level::kWarn));
  EXPECT_FALSE(SetLevel("loud"));
  EXPECT_FALSE(SetLevel(""));
  EXPECT_FALSE(Enabled(Level::kInfo)) << "a refused name changed the level";
  ASSERT_TRUE(SetLevel("off"));
  EXPECT_FALSE(Enabled(Level::kCritical));
  ASSERT_TRUE(SetLevel("debug"));
  EXPECT_TRUE(Enabled(Level::kDebug));
  ASSERT_TRUE(SetLevel("info"));
  EXPECT_FALSE(Enabled(Level::kDebug));
}

}  // namespace
}  // namespace pinpoint::log
