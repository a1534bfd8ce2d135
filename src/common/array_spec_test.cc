#include "pinpoint/array_spec.h"

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

std::vector<int> Range(int first, int last, int step = 1) {
  std::vector<int> out;
  for (int i = first; i <= last; i += step) out.push_back(i);
  return out;
}

struct GoodCase {
  const char* text;
  std::vector<int> indices;
  int limit;
  const char* formatted;  // FormatArraySpec of the result
};

TEST(ArraySpecTest, ParsesSlurmSyntax) {
  const GoodCase cases[] = {
      {"1-100", Range(1, 100), 0, "1-100"},
      {"0-15:4", {0, 4, 8, 12}, 0, "0-12:4"},
      {"1,3,5-7", {1, 3, 5, 6, 7}, 0, "1-5:2,6-7"},
      {"7", {7}, 0, "7"},
      {"0", {0}, 0, "0"},
      {"1-10%2", Range(1, 10), 2, "1-10%2"},
      {"5-5", {5}, 0, "5"},
      {"5,1,3", {1, 3, 5}, 0, "1-5:2"},     // sorted, as Slurm's bitmap
      {"1-3,2-4", {1, 2, 3, 4}, 0, "1-4"},  // duplicates merged
      {"0-10:20", {0}, 0, "0"},             // a step past the end leaves the start
      {"1,3", {1, 3}, 0, "1,3"},
      {"007", {7}, 0, "7"},
      {"999999", {999999}, 0, "999999"},
      {"0-9999", Range(0, 9999), 0, "0-9999"},         // the most tasks
      {"1-4%10000", Range(1, 4), 10000, "1-4%10000"},  // K above the task count is allowed
      {"0-999999:100", Range(0, 999900, 100), 0, "0-999900:100"},
  };
  for (const auto& c : cases) {
    auto spec = ParseArraySpec(c.text);
    ASSERT_TRUE(spec.ok()) << c.text << ": " << spec.status().message();
    EXPECT_EQ(spec->indices, c.indices) << c.text;
    EXPECT_EQ(spec->limit, c.limit) << c.text;
    EXPECT_EQ(FormatArraySpec(*spec), c.formatted) << c.text;
    auto again = ParseArraySpec(FormatArraySpec(*spec));
    ASSERT_TRUE(again.ok()) << c.formatted;
    EXPECT_EQ(*again, *spec) << c.text << " does not survive its own format";
  }
}

struct BadCase {
  const char* text;
  const char* says;  // part of the one error line
};

TEST(ArraySpecTest, RefusesWithOneLineSayingWhy) {
  const BadCase cases[] = {
      {"", "give task indices"},
      {"5-1", "range 5-1 ends before it starts"},
      {"1-", "has no end"},
      {"-5", "'-5' is not an index"},
      {"a", "'a' is not an index"},
      {"1-b", "'b' is not an index"},
      {"1,,2", "an empty item"},
      {"1,", "an empty item"},
      {"%4", "an empty item"},
      {"1-10%0", "%0 would run no task"},
      {"1-10%", "%K needs a whole number"},
      {"1-10%x", "%K needs a whole number"},
      {"1-10%2%3", "%K needs a whole number"},
      {"1-10%10001", "%K is at most 10000"},
      {"1-10%99999999999999999999999", "%K is at most 10000"},
      {"1000000", "index 1000000 is above 999999"},
      {"99999999999999999999999999", "index 99999999999999999999... is above 999999"},
      {"0-99999999999999999999", "is above 999999"},
      {"0-10000", "more than 10000 tasks"},  // 10001 tasks
      {"0-9999,10000", "more than 10000 tasks"},
      {"0-9999,0-9999", "more than 10000 tasks"},  // duplicates count against the bound
      {"0-999999", "more than 10000 tasks"},
      {"0-15:0", "a step must be at least 1"},
      {"0-15:", "step '' is not a whole number"},
      {"0-15:-1", "step '-1' is not a whole number"},
      {"3:2", "a step (:S) needs a range"},
      {"1:2-3", "is not an index"},
      {"1-2-3", "'2-3' is not an index"},
      {" 1", "is not an index"},
      {"1 ", "is not an index"},
      {"+1", "is not an index"},
      {"1\n2", "'1\\n2' is not an index"},  // escaped: one line
  };
  for (const auto& c : cases) {
    auto spec = ParseArraySpec(c.text);
    ASSERT_FALSE(spec.ok()) << "'" << c.text << "' was accepted";
    EXPECT_EQ(spec.status().code(), Code::kInvalidArgument) << c.text;
    const std::string& m = spec.status().message();
    EXPECT_NE(m.find(c.says), std::string::npos) << c.text << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.rfind("invalid array '", 0), 0u) << m;
  }
}

TEST(ArraySpecTest, QuotesALongSpecCutShort) {
  std::string text(5000, '1');
  auto spec = ParseArraySpec(text);
  ASSERT_FALSE(spec.ok());
  EXPECT_LT(spec.status().message().size(), 200u) << spec.status().message();
}

TEST(ArraySpecTest, ListsOfManyItemsParseBackThemselves) {
  ArraySpec spec;
  for (int i = 0; i < kMaxArrayTasks; ++i) spec.indices.push_back(i * 3 + (i % 7 == 0 ? 1 : 0));
  spec.limit = 3;
  auto again = ParseArraySpec(FormatArraySpec(spec));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, spec);
}

}  // namespace
}  // namespace pinpoint
