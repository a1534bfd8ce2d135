// Output that fits where it goes: live redraws and colours on a terminal, plain lines in logs and
// pipes. Every program of pinpoint that redraws or colours asks here first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pinpoint {

// What a stream of text may contain.
struct OutputStyle {
  bool redraw = false;  // cursor movement and line erasing (ESC[nA, ESC[K, ESC[2J)
  bool color = false;   // SGR colours (ESC[32m ... ESC[0m)
};

// Pure. redraw: `is_terminal` and `term` set and not "dumb". color: redraw, and `no_color` null
// or empty (the NO_COLOR convention: any non-empty value turns colour off).
OutputStyle StyleFor(bool is_terminal, const char* term, const char* no_color);
// StyleFor for descriptor `fd` of this process: isatty(fd), $TERM, $NO_COLOR.
OutputStyle StyleForFd(int fd);

enum class Color { kGreen, kYellow, kRed, kBold };
// `text` in `color` where style.color, else `text` unchanged.
std::string Paint(const OutputStyle& style, Color color, std::string_view text);

// A block of lines shown again and again while something runs (the demo's GPU bars). With
// redraw, each frame replaces the one before in place. Without, a frame is written only when it
// differs from the last one written, as plain lines, so a log holds one block per change and no
// control bytes. The lines must not contain newlines. Not thread-safe.
class LiveBlock {
 public:
  explicit LiveBlock(OutputStyle style) : style_(style) {}
  // The text to write now to show `lines` ("" when nothing needs writing).
  std::string Frame(const std::vector<std::string>& lines);

 private:
  OutputStyle style_;
  std::vector<std::string> last_;
  bool shown_ = false;
};

}  // namespace pinpoint
