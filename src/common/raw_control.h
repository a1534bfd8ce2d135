// For tests only: whether text holds a byte a terminal would act on, to assert that what pinpoint
// prints for people is escaped (pinpoint/escape.h).
#pragma once

#include <string_view>

namespace pinpoint {

// True when `text` holds a C0 control (a newline only unless `newline_ok`), DEL, or the UTF-8
// form of a C1 control (U+0080..U+009F).
inline bool HasRawControl(std::string_view text, bool newline_ok = false) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && !(newline_ok && c == '\n')) || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9f)
      return true;
  }
  return false;
}

}  // namespace pinpoint
