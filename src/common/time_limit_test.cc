#include "pinpoint/time_limit.h"

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

TEST(ParseTimeLimitTest, SlurmForms) {
  struct Case {
    const char* text;
    int64_t seconds;
  } cases[] = {
      {"90", 90 * 60},                                // M: any number of minutes
      {"5:30", 5 * 60 + 30},                          // M:S
      {"120:00", 120 * 60},                           // minutes first: not capped at 60
      {"1:02:03", 3600 + 2 * 60 + 3},                 // H:M:S
      {"30:00:00", 30 * 3600},                        // hours first: not capped at 24
      {"2-12", 2 * 86400 + 12 * 3600},                // D-H
      {"1-0:30", 86400 + 30 * 60},                    // D-H:M
      {"1-02:03:04", 86400 + 2 * 3600 + 3 * 60 + 4},  // D-H:M:S
      {"0", 0},
      {"0:00:00", 0},
  };
  for (const auto& c : cases) {
    auto parsed = ParseTimeLimit(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, c.seconds) << c.text;
  }
}

TEST(ParseTimeLimitTest, NumberWithAUnit) {
  EXPECT_EQ(*ParseTimeLimit("30s"), 30);
  EXPECT_EQ(*ParseTimeLimit("10m"), 600);
  EXPECT_EQ(*ParseTimeLimit("2h"), 7200);
  EXPECT_EQ(*ParseTimeLimit("1d"), 86400);
  EXPECT_EQ(*ParseTimeLimit("3H"), 3 * 3600);
}

TEST(ParseTimeLimitTest, RefusesAnythingElseWithTheForms) {
  for (const char* text :
       {"",        "5x",      "x",    "abc",    "1.5h", "-5",    "5-", "1:2:3:4", "1:60",
        "1:60:00", "1:00:60", "1-24", "1-2:60", "1--2", "1-2-3", "1:", ":1",      " 5",
        "5 ",      "+5",      "s",    "1hm",    "0x10", "1e3",   "１"}) {
    auto parsed = ParseTimeLimit(text);
    ASSERT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << *parsed;
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("D-H:M:S"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(ParseTimeLimitTest, RefusesLimitsAboveTheMostWithoutOverflow) {
  EXPECT_TRUE(ParseTimeLimit("36500d").ok());
  for (const char* text : {"36501d", "999999999999d", "999999999999", "999999999999:00:00",
                           "36500-23:59:59", "9999999999999"}) {
    auto parsed = ParseTimeLimit(text);
    EXPECT_FALSE(parsed.ok()) << text << " parsed as " << *parsed;
  }
}

TEST(FormatTimeLimitTest, SlurmsWayAndItParsesBack) {
  EXPECT_EQ(FormatTimeLimit(30 * 60), "30:00");
  EXPECT_EQ(FormatTimeLimit(59), "0:59");
  EXPECT_EQ(FormatTimeLimit(5400), "1:30:00");
  EXPECT_EQ(FormatTimeLimit(2 * 86400), "2-00:00:00");
  for (int64_t s : {int64_t{0}, int64_t{1}, int64_t{59}, int64_t{60}, int64_t{3599}, int64_t{3600},
                    int64_t{86399}, int64_t{86400}, int64_t{90061}, kMaxTimeLimitS}) {
    auto back = ParseTimeLimit(FormatTimeLimit(s));
    ASSERT_TRUE(back.ok()) << FormatTimeLimit(s);
    EXPECT_EQ(*back, s) << FormatTimeLimit(s);
  }
}

}  // namespace
}  // namespace pinpoint
