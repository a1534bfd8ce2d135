#include "pinpoint/escape.h"

#include <gtest/gtest.h>

#include <string>

#include "common/raw_control.h"

namespace pinpoint {
namespace {

TEST(EscapeForTerminalTest, PrintableTextIsUnchanged) {
  EXPECT_EQ(EscapeForTerminal("train résnet-50 (ünïcödé) 日本 ✓"),
            "train résnet-50 (ünïcödé) 日本 ✓");
  EXPECT_EQ(EscapeForTerminal(""), "");
}

TEST(EscapeForTerminalTest, ControlsBecomeVisibleEscapes) {
  EXPECT_EQ(EscapeForTerminal("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(EscapeForTerminal("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(EscapeForTerminal("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(EscapeForTerminal(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeForTerminal("del\x7f"), "del\\x7f");
  EXPECT_EQ(EscapeForTerminal("back\\slash"), "back\\\\slash");  // an escape cannot be faked
}

TEST(EscapeForTerminalTest, C1ControlsLineSeparatorsAndBidiOverridesAreEscaped) {
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b"
                              "2J"),
            "\\u009b2J");
  EXPECT_EQ(EscapeForTerminal("\xc2\x85"), "\\u0085");
  EXPECT_EQ(EscapeForTerminal("a\xe2\x80\xa8"
                              "b"),
            "a\\u2028b");
  EXPECT_EQ(EscapeForTerminal("\xe2\x80\xae"
                              "exe.txt"),
            "\\u202eexe.txt");
  EXPECT_EQ(EscapeForTerminal("\xe2\x81\xa6"), "\\u2066");
  EXPECT_EQ(EscapeForTerminal("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is printable
}

TEST(EscapeForTerminalTest, InvalidUtf8BecomesHexBytes) {
  EXPECT_EQ(EscapeForTerminal("a\xff"
                              "b"),
            "a\\xffb");
  EXPECT_EQ(EscapeForTerminal("\xc0\x8a"), "\\xc0\\x8a");                    // overlong newline
  EXPECT_EQ(EscapeForTerminal("\xe2\x80"), "\\xe2\\x80");                    // cut short
  EXPECT_EQ(EscapeForTerminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(EscapeForTerminal("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(EscapeForTerminalTest, EveryByteSequenceComesOutWithoutRawControls) {
  std::string all;
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; b += 7) {
      all += static_cast<char>(a);
      all += static_cast<char>(b);
    }
  }
  std::string out = EscapeForTerminal(all);
  EXPECT_FALSE(HasRawControl(out));
  EXPECT_EQ(FirstUnprintable(out), std::string::npos);
}

TEST(FirstUnprintableTest, FindsTheFirstBadByte) {
  EXPECT_EQ(FirstUnprintable("plain name"), std::string::npos);
  EXPECT_EQ(FirstUnprintable("back\\slash"), std::string::npos);
  EXPECT_EQ(FirstUnprintable("ab\ncd"), 2u);
  EXPECT_EQ(FirstUnprintable("é\xc2\x9b"), 2u);
  EXPECT_EQ(FirstUnprintable("ok\xff"), 2u);
}

}  // namespace
}  // namespace pinpoint
