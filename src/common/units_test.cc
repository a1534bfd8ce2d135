#include "pinpoint/units.h"

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

struct SizeCase {
  const char* text;
  uint64_t bytes;
};

TEST(ParseSizeTest, AcceptsUnits) {
  const SizeCase cases[] = {
      {"0", 0},
      {"0.0", 0},
      {"1024B", 1024},
      {"4G", 4ull << 30},
      {"4g", 4ull << 30},
      {"4GB", 4ull << 30},
      {"4GiB", 4ull << 30},
      {"512MiB", 512ull << 20},
      {"512M", 512ull << 20},
      {"1.5GiB", 3ull << 29},
      {"2T", 2ull << 40},
      {"10K", 10240},
      {"7B", 7},
      {"2PiB", 2ull << 50},
  };
  for (const auto& c : cases) {
    auto r = ParseSize(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, c.bytes) << c.text;
  }
}

TEST(ParseSizeTest, RejectsBadInput) {
  for (const char* text : {"", "G", "-4G", "4X", "4 G", "1.2.3G", ".", "abc", "4GiBs",
                           "99999999999999999999999T", "2000000T"}) {
    auto r = ParseSize(text);
    EXPECT_FALSE(r.ok()) << text;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
      EXPECT_NE(r.status().message().find("invalid size"), std::string::npos);
    }
  }
}

// `--mem 4000` was once taken as 4000 bytes (a 3.9 KiB cgroup limit) and `--gpu-mem 4` as 4 B.
TEST(ParseSizeTest, RefusesANumberWithoutAUnit) {
  for (const char* text : {"4000", "4", "1.5", "1048576"}) {
    auto r = ParseSize(text);
    ASSERT_FALSE(r.ok()) << text << " was taken as " << *r << " bytes";
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("give a unit, e.g. " + std::string(text) + "M or 4G"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(ParsePercentTest, AcceptsOneToHundred) {
  EXPECT_EQ(*ParsePercent("20%"), 20);
  EXPECT_EQ(*ParsePercent("20"), 20);
  EXPECT_EQ(*ParsePercent("1%"), 1);
  EXPECT_EQ(*ParsePercent("100%"), 100);
}

TEST(ParsePercentTest, RejectsOutOfRange) {
  for (const char* text : {"0%", "101%", "", "%", "-5%", "2.5%", "abc", "1000%", "50%%"}) {
    EXPECT_FALSE(ParsePercent(text).ok()) << text;
  }
}

TEST(FormatSizeTest, EveryFormattedSizeParsesBack) {
  // Found by fuzz/size_fuzz: 612061TiB formats as PiB, which must parse.
  for (uint64_t bytes : {0ull, 1ull, 1023ull, 612061ull << 40, 1ull << 60}) {
    auto back = ParseSize(FormatSize(bytes));
    EXPECT_TRUE(back.ok()) << FormatSize(bytes);
  }
}

TEST(FormatSizeTest, PicksLargestUnit) {
  EXPECT_EQ(FormatSize(0), "0B");
  EXPECT_EQ(FormatSize(512ull << 20), "512MiB");
  EXPECT_EQ(FormatSize(4ull << 30), "4GiB");
  EXPECT_EQ(FormatSize(3ull << 29), "1.5GiB");
  EXPECT_EQ(FormatSize(1000), "1000B");
}

}  // namespace
}  // namespace pinpoint
