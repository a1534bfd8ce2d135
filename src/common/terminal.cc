#include "common/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pinpoint {

OutputStyle StyleFor(bool is_terminal, const char* term, const char* no_color) {
  OutputStyle style;
  style.redraw =
      is_terminal && term != nullptr && term[0] != '\0' && std::strcmp(term, "dumb") != 0;
  style.color = style.redraw && (no_color == nullptr || no_color[0] == '\0');
  return style;
}

OutputStyle StyleForFd(int fd) {
  return StyleFor(::isatty(fd) == 1, std::getenv("TERM"), std::getenv("NO_COLOR"));
}

std::string Paint(const OutputStyle& style, Color color, std::string_view text) {
  if (!style.color) return std::string(text);
  const char* code = "";
  switch (color) {
    case Color::kGreen:
      code = "\x1b[32m";
      break;
    case Color::kYellow:
      code = "\x1b[33m";
      break;
    case Color::kRed:
      code = "\x1b[31m";
      break;
    case Color::kBold:
      code = "\x1b[1m";
      break;
  }
  return code + std::string(text) + "\x1b[0m";
}

std::string LiveBlock::Frame(const std::vector<std::string>& lines) {
  if (shown_ && lines == last_) return "";
  std::string out;
  if (style_.redraw && shown_ && !last_.empty())
    out += "\x1b[" + std::to_string(last_.size()) + "A";
  for (const std::string& line : lines) out += line + (style_.redraw ? "\x1b[K\n" : "\n");
  if (style_.redraw) {
    // A shorter frame leaves the rest of the longer one below it: clear those lines too.
    for (size_t i = lines.size(); i < last_.size(); ++i) out += "\x1b[K\n";
    if (last_.size() > lines.size())
      out += "\x1b[" + std::to_string(last_.size() - lines.size()) + "A";
  }
  last_ = lines;
  shown_ = true;
  return out;
}

}  // namespace pinpoint
