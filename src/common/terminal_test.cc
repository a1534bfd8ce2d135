#include "common/terminal.h"

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

TEST(OutputStyleTest, RedrawAndColourOnlyOnATerminal) {
  OutputStyle tty = StyleFor(true, "xterm-256color", nullptr);
  EXPECT_TRUE(tty.redraw);
  EXPECT_TRUE(tty.color);
  OutputStyle pipe = StyleFor(false, "xterm-256color", nullptr);
  EXPECT_FALSE(pipe.redraw);
  EXPECT_FALSE(pipe.color);
}

TEST(OutputStyleTest, DumbOrMissingTermIsPlain) {
  EXPECT_FALSE(StyleFor(true, "dumb", nullptr).redraw);
  EXPECT_FALSE(StyleFor(true, nullptr, nullptr).redraw);
  EXPECT_FALSE(StyleFor(true, "", nullptr).color);
}

TEST(OutputStyleTest, NoColorKeepsRedrawDropsColour) {
  OutputStyle s = StyleFor(true, "xterm", "1");
  EXPECT_TRUE(s.redraw);
  EXPECT_FALSE(s.color);
  EXPECT_TRUE(StyleFor(true, "xterm", "").color);  // NO_COLOR counts only when not empty
  EXPECT_EQ(Paint(s, Color::kGreen, "ok"), "ok");
  EXPECT_EQ(Paint(StyleFor(true, "xterm", nullptr), Color::kGreen, "ok"), "\x1b[32mok\x1b[0m");
}

TEST(LiveBlockTest, PlainWritesEachChangeOnceWithoutControlBytes) {
  LiveBlock block(StyleFor(false, "xterm", nullptr));
  EXPECT_EQ(block.Frame({"GPU 0 [#...]", "GPU 1 [....]"}), "GPU 0 [#...]\nGPU 1 [....]\n");
  EXPECT_EQ(block.Frame({"GPU 0 [#...]", "GPU 1 [....]"}), "");  // unchanged: nothing
  std::string next = block.Frame({"GPU 0 [##..]", "GPU 1 [#...]"});
  EXPECT_EQ(next, "GPU 0 [##..]\nGPU 1 [#...]\n");
  EXPECT_EQ(next.find('\x1b'), std::string::npos);
}

TEST(LiveBlockTest, RedrawReplacesThePreviousFrameInPlace) {
  LiveBlock block(StyleFor(true, "xterm", nullptr));
  EXPECT_EQ(block.Frame({"a", "b"}), "a\x1b[K\nb\x1b[K\n");
  EXPECT_EQ(block.Frame({"c", "d"}), "\x1b[2Ac\x1b[K\nd\x1b[K\n");
  // A shorter frame clears what is left of the longer one and ends below itself.
  EXPECT_EQ(block.Frame({"e"}), "\x1b[2Ae\x1b[K\n\x1b[K\n\x1b[1A");
  EXPECT_EQ(block.Frame({"f"}), "\x1b[1Af\x1b[K\n");
}

}  // namespace
}  // namespace pinpoint
