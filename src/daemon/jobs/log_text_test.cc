#include "daemon/jobs/log_text.h"

#include <gtest/gtest.h>

#include <string>

namespace pinpoint::daemon {
namespace {

TEST(LastLinesStartTest, KeepsTheLastLines) {
  struct Case {
    std::string text;
    int lines;
    std::string kept;
  };
  const Case cases[] = {
      {"a\nb\nc\n", 2, "b\nc\n"},
      {"a\nb\nc", 2, "b\nc"},  // a last line without its newline counts
      {"a\nb\nc\n", 3, "a\nb\nc\n"},
      {"a\nb\nc\n", 10, "a\nb\nc\n"},
      {"a\nb\nc\n", 0, "a\nb\nc\n"},  // 0: everything
      {"a\n\n\n", 2, "\n\n"},         // empty lines are lines
      {"", 1, ""},
      {std::string(1000, 'x'), 1, std::string(1000, 'x')},  // one long line
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.text.substr(LastLinesStart(c.text, c.lines)), c.kept) << c.text << " / " << c.lines;
  }
}

TEST(CompleteUtf8LengthTest, HoldsBackACutCharacter) {
  const std::string euro = "\xE2\x82\xAC";       // 3 bytes
  const std::string smile = "\xF0\x9F\x98\x80";  // 4 bytes
  EXPECT_EQ(CompleteUtf8Length("abc"), 3u);
  EXPECT_EQ(CompleteUtf8Length("a" + euro), 4u);
  EXPECT_EQ(CompleteUtf8Length("a" + euro.substr(0, 2)), 1u);
  EXPECT_EQ(CompleteUtf8Length("a" + euro.substr(0, 1)), 1u);
  EXPECT_EQ(CompleteUtf8Length("a" + smile), 5u);
  EXPECT_EQ(CompleteUtf8Length("a" + smile.substr(0, 3)), 1u);
  EXPECT_EQ(CompleteUtf8Length("a\x80\x80\x80\x80"), 5u) << "stray continuation bytes are kept";
  EXPECT_EQ(CompleteUtf8Length("a\xFF"), 2u) << "an invalid byte is kept";
  EXPECT_EQ(CompleteUtf8Length(""), 0u);
}

}  // namespace
}  // namespace pinpoint::daemon
