#include "cli/time_range.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

namespace pinpoint::cli {
namespace {

constexpr int64_t kNow = 1'717'243'200'000;  // 2024-06-01T12:00:00Z

class TimeRangeTest : public ::testing::Test {
 protected:
  // Local time is UTC here, so that dates have one meaning on every machine.
  void SetUp() override {
    const char* tz = ::getenv("TZ");
    if (tz != nullptr) saved_ = tz;
    had_ = tz != nullptr;
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
  void TearDown() override {
    if (had_)
      ::setenv("TZ", saved_.c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(TimeRangeTest, AcceptsDatesTimesAndRelativeAges) {
  EXPECT_EQ(ParseWhen("2024-06-01", kNow, "--since").value(), 1'717'200'000'000);
  EXPECT_EQ(ParseWhen("2024-06-01T12:00", kNow, "--since").value(), kNow);
  EXPECT_EQ(ParseWhen("7d", kNow, "--since").value(), kNow - 7 * 86'400'000);
  EXPECT_EQ(ParseWhen("24h", kNow, "--since").value(), kNow - 24 * 3'600'000);
}

TEST_F(TimeRangeTest, TakesLocalTime) {
  ::setenv("TZ", "UTC-2", 1);  // two hours east of UTC (POSIX signs are reversed)
  ::tzset();
  EXPECT_EQ(ParseWhen("2024-06-01T14:00", kNow, "--since").value(), kNow);
}

TEST_F(TimeRangeTest, RefusesWhatIsNoTime) {
  for (const char* bad : {"", "yesterday", "2024-6-1", "2024-02-30", "2024-13-01",
                          "2024-06-01T24:00", "2024-06-01T12:60", "2024-06-01 12:00", "0d", "7w",
                          "-7d", "1000000d", "7d ", "2024-06-01T12:00:00"}) {
    auto when = ParseWhen(bad, kNow, "--until");
    ASSERT_FALSE(when.ok()) << bad;
    EXPECT_EQ(when.status().code(), Code::kInvalidArgument);
    EXPECT_NE(when.status().message().find("--until '"), std::string::npos)
        << when.status().message();
  }
}

}  // namespace
}  // namespace pinpoint::cli
